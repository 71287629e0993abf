// `onnx-footprint fit`'s patch option end to end: the option's figures are
// those `analyze` gives the model --emit-model writes; bad requests are one
// line and exit 2 with nothing written; the acceptance ratios on the shared
// CNNs (docs/patching.md).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/cli/cli.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/shared_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::SetInts;
using ::footprint::testing::WriteTestModel;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

void AddConv(ModelBuilder& builder, const std::string& input, const std::string& output, int64_t in, int64_t out,
             int64_t stride) {
  builder.Initializer(output + "_w", kFloat, {out, in, 3, 3});
  onnx::NodeProto& node = builder.Node("Conv", {input, output + "_w"}, {output}, output + "_conv");
  SetInts(node, "kernel_shape", {3, 3});
  SetInts(node, "strides", {stride, stride});
  SetInts(node, "pads", {1, 1, 1, 1});
}

// A CNN whose peak is its first, full-resolution stage.
std::string EarlyPeakCnn() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 96, 96});
  AddConv(builder, "x", "a", 3, 16, 1);
  builder.Add("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 2);
  builder.Add("Relu", {"b"}, {"br"}, "relu_b");
  AddConv(builder, "br", "c", 16, 32, 2);
  builder.Add("Relu", {"c"}, {"cr"}, "relu_c");
  AddConv(builder, "cr", "d", 32, 64, 2);
  builder.Add("GlobalAveragePool", {"d"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 64, 1, 1});
  return WriteTestModel(builder.Serialize());
}

nlohmann::json PatchOption(const nlohmann::json& report) {
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] == "patch") return option;
  }
  return nlohmann::json();
}

TEST(FitPatchTest, TheOptionIsWhatAnalyzeGivesTheWrittenModel) {
  const std::string model = EarlyPeakCnn();
  const std::string out = testing::ScratchPath("patched/early_peak.onnx");
  std::filesystem::remove(out);
  const CliRun run = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "200KB", "--format", "json",
                                     "--emit-model", out});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  const nlohmann::json option = PatchOption(report);
  ASSERT_FALSE(option.is_null()) << report.dump(2);
  EXPECT_LT(option["arena_bytes"].get<int64_t>(), report["arena_bytes"].get<int64_t>() * 6 / 10);
  EXPECT_LE(option["extra_macs_percent"].get<double>(), 20.0);
  ASSERT_GE(option["segments"].size(), 1u);
  const nlohmann::json& segment = option["segments"][0];
  EXPECT_EQ(segment["first_node"], "a_conv");
  EXPECT_EQ(segment["input"], "x");
  EXPECT_GT(segment["patches"][0].get<int64_t>() * segment["patches"][1].get<int64_t>(), 1);
  int64_t extra = 0;
  const nlohmann::json& segments = option["segments"];
  for (size_t k = 0; k < segments.size(); ++k) {
    extra += segments[k]["macs_after"].get<int64_t>() - segments[k]["macs_before"].get<int64_t>();
    // A chain (docs/patching.md): each output but the last kept in pieces for the segment reading it.
    if (k + 1 < segments.size()) {
      EXPECT_TRUE(segments[k].value("output_in_pieces", false)) << segments.dump(2);
      EXPECT_EQ(segments[k + 1]["input"], segments[k]["output"]);
    } else {
      EXPECT_FALSE(segments[k].contains("output_in_pieces"));
    }
  }
  EXPECT_EQ(option["extra_macs"].get<int64_t>(), extra);
  ASSERT_TRUE(std::filesystem::exists(out));
  const CliRun analyzed = RunCliCaptured({"analyze", out, "--format", "json"});
  ASSERT_EQ(analyzed.exit_code, kExitOk) << analyzed.err;
  const int64_t arena = nlohmann::json::parse(analyzed.out)["memory"]["arena_bytes"].get<int64_t>();
  const int64_t promised = option["arena_bytes"].get<int64_t>();
  EXPECT_LE(arena, promised * 105 / 100);
  EXPECT_GE(arena, promised * 95 / 100);
  // A tighter budget keeps the extra MACs within it.
  const CliRun tight =
      RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "200KB", "--format", "json",
                      "--max-overhead", "3"});
  const nlohmann::json tight_option = PatchOption(nlohmann::json::parse(tight.out));
  if (!tight_option.is_null()) EXPECT_LE(tight_option["extra_macs_percent"].get<double>(), 3.0);
}

TEST(FitPatchTest, StreamInputAddsItsOwnOption) {
  const CliRun run = RunCliCaptured({"fit", EarlyPeakCnn(), "--device", "generic-cpu", "--max-peak", "200KB",
                                     "--format", "json", "--stream-input"});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  int64_t whole = -1, streamed = -1;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "patch") continue;
    if (option["stream_input"].get<bool>()) {
      streamed = option["arena_bytes"].get<int64_t>();
    } else {
      whole = option["arena_bytes"].get<int64_t>();
    }
  }
  ASSERT_GT(whole, 0) << run.out;
  ASSERT_GT(streamed, 0) << run.out;
  EXPECT_LT(streamed, whole);
}

TEST(FitPatchTest, TextNamesTheGridAndTheMacs) {
  const CliRun run = RunCliCaptured({"fit", EarlyPeakCnn(), "--device", "generic-cpu", "--max-peak", "200KB"});
  EXPECT_NE(run.out.find("patch: a_conv .. "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("% of the model's MACs)"), std::string::npos) << run.out;
}

// A detector's neck (the Concat of an upsampled low-resolution branch that a
// global gate makes non-local, and a skip the backbone reads on): its patch
// segment reads two inputs (the skip p recomputed by its patches from the
// 4-channel a it comes from), which JSON lists under "inputs" (and only
// there: a segment with one input keeps its fields), and the written model
// is what analyze gives.
TEST(FitPatchTest, ASegmentWithTwoInputsListsThemAndIsWritten) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64}).Int64Initializer("up_sizes", {1, 64, 32, 32});
  AddConv(builder, "x", "a", 3, 4, 2);
  AddConv(builder, "a", "p", 4, 16, 1);
  AddConv(builder, "p", "q", 16, 64, 2);
  builder.Add("GlobalAveragePool", {"q"}, {"pooled"}, "gap");
  builder.Add("Sigmoid", {"pooled"}, {"gate"}, "gate");
  builder.Add("Mul", {"q", "gate"}, {"f"}, "gated");
  builder.Add("Resize", {"f", "", "", "up_sizes"}, {"u"}, "up");  // nearest, half_pixel: ONNX's defaults.
  testing::SetInt(builder.Node("Concat", {"u", "p"}, {"cat"}, "neck_concat"), "axis", 1);
  AddConv(builder, "cat", "n", 80, 32, 1);
  builder.Add("Relu", {"n"}, {"y"}, "neck_relu");
  builder.Output("y", kFloat, {1, 32, 32, 32});
  const std::string model = WriteTestModel(builder.Serialize());
  const std::string out = testing::ScratchPath("patched/neck.onnx");
  std::filesystem::remove(out);
  const CliRun run = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "100KB", "--format", "json",
                                     "--emit-model", out});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  const nlohmann::json option = PatchOption(nlohmann::json::parse(run.out));
  ASSERT_FALSE(option.is_null()) << run.out;
  const nlohmann::json* neck = nullptr;
  for (const nlohmann::json& segment : option["segments"]) {
    if (segment.contains("inputs")) {
      neck = &segment;
    } else {
      EXPECT_EQ(segment["input"], "x") << segment.dump();
    }
  }
  ASSERT_NE(neck, nullptr) << option.dump(2);
  EXPECT_EQ((*neck)["input"], "a");
  EXPECT_EQ((*neck)["inputs"], nlohmann::json::array({"a", "f"}));
  ASSERT_TRUE(std::filesystem::exists(out));
  const CliRun analyzed = RunCliCaptured({"analyze", out, "--format", "json"});
  ASSERT_EQ(analyzed.exit_code, kExitOk) << analyzed.err;
  const int64_t arena = nlohmann::json::parse(analyzed.out)["memory"]["arena_bytes"].get<int64_t>();
  const int64_t promised = option["arena_bytes"].get<int64_t>();
  EXPECT_LE(arena, promised * 105 / 100);
  EXPECT_GE(arena, promised * 95 / 100);
  const CliRun text = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "100KB"});
  EXPECT_NE(text.out.find("reading a, f)"), std::string::npos) << text.out;
}

// After the patched stem, the peak is a Softmax over a MatMul's output that
// no segment can hold: the note names it, so the user knows patching stops.
TEST(FitPatchTest, ANoteNamesWhereThePatchedArenaPeaks) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64});
  AddConv(builder, "x", "a", 3, 16, 1);
  builder.Add("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 2);  // 16 x 32 x 32
  builder.Int64Initializer("rows", {1, 16, 1024}).Initializer("proj", kFloat, {1024, 2048});
  builder.Add("Reshape", {"b", "rows"}, {"flat"}, "flatten");
  builder.Add("MatMul", {"flat", "proj"}, {"scores"}, "project");
  builder.Add("Softmax", {"scores"}, {"y"}, "softmax");
  builder.Output("y", kFloat, {1, 16, 2048});
  const CliRun run =
      RunCliCaptured({"fit", WriteTestModel(builder.Serialize()), "--device", "generic-cpu", "--max-peak", "1MB"});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  EXPECT_NE(run.out.find("patch: a_conv .. "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("note: patch: the patched arena peaks (262144 bytes live) at node 'softmax' (Softmax), "
                         "outside every patch segment"),
            std::string::npos)
      << run.out;
}

// Under --runtime the report says what that runtime's run holds with the
// patched model and without: the stem's two 16 x 64 x 64 tensors are what
// ORT's planner holds unpatched, and patches of them are all it holds after.
TEST(FitPatchTest, UnderARuntimeANoteComparesItsRunPatchedAndUnpatched) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64});
  AddConv(builder, "x", "a", 3, 16, 1);
  builder.Add("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 2);  // 16 x 32 x 32
  builder.Add("GlobalAveragePool", {"b"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 16, 1, 1});
  const std::string model = WriteTestModel(builder.Serialize());
  const CliRun run = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB", "--runtime",
                                     "onnxruntime-cpu:avx2", "--format", "json"});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out);
  std::string note;
  for (const nlohmann::json& line : report["notes"]) {
    if (line.get<std::string>().find("onnxruntime-cpu:avx2's run holds") != std::string::npos) note = line;
  }
  ASSERT_FALSE(note.empty()) << report["notes"].dump();
  int64_t patched = 0, unpatched = 0;
  ASSERT_EQ(std::sscanf(note.c_str(), "patch: onnxruntime-cpu:avx2's run holds %" SCNd64 " bytes patched, %" SCNd64 " unpatched",
                        &patched, &unpatched),
            2)
      << note;
  EXPECT_LT(patched, unpatched) << note;
  EXPECT_NE(note.find("(lower); its largest buffer at its peak is '"), std::string::npos) << note;
  const CliRun plain = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB"});
  EXPECT_EQ(plain.out.find("'s run holds"), std::string::npos) << plain.out;  // Only under --runtime.
}

TEST(FitPatchTest, NoPatchOptionIsANoteAndEmitModelExitsTwo) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64}).Initializer("w", kFloat, {64, 64}).Add("MatMul", {"x", "w"}, {"y"}, "mm");
  builder.Output("y", kFloat, {1, 64});
  const std::string model = WriteTestModel(builder.Serialize());
  const CliRun report = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB"});
  EXPECT_NE(report.out.find("note: patch: 'x' is not an NCHW tensor"), std::string::npos) << report.out;
  const std::string out = testing::ScratchPath("patched/none.onnx");
  std::filesystem::remove(out);
  const CliRun run =
      RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB", "--emit-model", out});
  ExpectOneLineError(run, "has no patch option ('x' is not an NCHW tensor");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(FitPatchTest, UnwritablePathExitsTwoAndWritesNothing) {
  const std::string folder = testing::ScratchPath("patched_missing/sub");
  std::filesystem::remove_all(folder);
  const std::string out = folder + "/model.onnx";
  const CliRun run =
      RunCliCaptured({"fit", EarlyPeakCnn(), "--device", "generic-cpu", "--max-peak", "200KB", "--emit-model", out});
  ExpectOneLineError(run, out);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(folder));
}

TEST(FitPatchTest, BadFlagsExitTwo) {
  const std::string model = EarlyPeakCnn();
  ExpectOneLineError(RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB", "--max-overhead", "x"}),
                     "--max-overhead must be a percentage >= 0, got 'x'");
  ExpectOneLineError(RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB", "--max-overhead", "-5"}),
                     "--max-overhead must be a percentage >= 0");
  ExpectOneLineError(RunCliCaptured({"fit", model, "--device", "generic-cpu", "--max-peak", "1MB", "--emit-model"}),
                     "--emit-model needs a value");
}

// The acceptance on the shared CNNs whose peak is in a patchable
// stage: the patched arena at most 0.6x the default arena, 0.45x on one.
TEST(FitPatchTest, SharedCnnsPatchedArenaRatios) {
  FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
  const std::string shared = testing::SharedModelsDir() + "/";
  const std::vector<std::vector<std::string>> models = {
      {shared + "Linzaer_Ultra-Light-Fast-Generic-Face-Detector-1MB/version-RFB-320.onnx"},
      {shared + "Linzaer_Ultra-Light-Fast-Generic-Face-Detector-1MB/version-slim-320_simplified.onnx"},
      {shared + "microsoft_onnxruntime-extensions/FastestDet.onnx"},
      {shared + "microsoft_onnxruntime-extensions/pytorch_super_resolution.onnx", "--dim", "batch_size=1"},
      {shared + "onnx_onnx/light_vgg19.onnx"},
      {shared + "onnx_onnx/light_resnet50.onnx"},  // A chain over its residual stages (0.615 without).
  };
  double best = 1;
  for (const std::vector<std::string>& flags : models) {
    if (!std::filesystem::exists(flags[0])) continue;
    std::vector<std::string> words = {"fit"};
    words.insert(words.end(), flags.begin(), flags.end());
    words.insert(words.end(), {"--device", "generic-cpu", "--max-peak", "1MB", "--format", "json"});
    const CliRun run = RunCliCaptured(words);
    ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
    const nlohmann::json report = nlohmann::json::parse(run.out);
    const nlohmann::json option = PatchOption(report);
    ASSERT_FALSE(option.is_null()) << flags[0] << " " << report["notes"].dump();
    const double ratio =
        static_cast<double>(option["arena_bytes"].get<int64_t>()) / report["arena_bytes"].get<int64_t>();
    EXPECT_LE(ratio, 0.6) << flags[0];
    EXPECT_LE(option["extra_macs_percent"].get<double>(), 20.0) << flags[0];
    best = std::min(best, ratio);
  }
  EXPECT_LE(best, 0.45);
}

}  // namespace
}  // namespace footprint
