// The analyzer on hardware profiles, end to end: tiers, alignment, the fit
// verdict, its exit code and the HTML page of each tier.
#include <map>
#include <string>
#include <vector>

#include "analyzer/cli/cli.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "devices/device_catalog.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::Occurrences;
using ::footprint::testing::WriteScratchFile;

// t0 -> Relu -> t1 -> ... -> tN with 100 KiB tensors: a Relu's input and
// output are live together, so 200 KiB at every step.
ModelBuilder ChainOf100KiB(int length) {
  ModelBuilder builder;
  builder.Input("t0", onnx::TensorProto::FLOAT, {25600});  // 100 KiB.
  for (int i = 0; i < length; ++i) {
    builder.Add("Relu", {"t" + std::to_string(i)}, {"t" + std::to_string(i + 1)}, "relu" + std::to_string(i));
  }
  builder.Output("t" + std::to_string(length));
  return builder;
}

constexpr const char* kTwoTierProfile = R"pb(
name: "two-tier"
description: "256 KiB sram in front of 1 GiB dram"
alignment_bytes: 256
memory { name: "sram" capacity_bytes: 262144 holds_activations: true }
memory { name: "dram" capacity_bytes: 1073741824 holds_activations: true holds_weights: true }
)pb";

// The exit code, and what went to stdout in `out` when asked for.
int RunQuietly(const std::vector<std::string>& args, std::string* out = nullptr) {
  const testing::CliRun run = testing::RunCliCaptured(args);
  if (out != nullptr) *out = run.out;
  return run.exit_code;
}

TEST(DeviceAnalysisTest, ChainWithinSramStaysInTheFirstTier) {
  const std::string profile_path = WriteScratchFile("two_tier.textproto", kTwoTierProfile);
  absl::StatusOr<devices::DeviceProfile> profile = devices::LoadDeviceFile(profile_path);
  ASSERT_TRUE(profile.ok()) << profile.status();
  LoadedModel loaded{.model = ChainOf100KiB(4).Build(), .path = "chain.onnx"};
  AnalyzeOptions options;  // Not a braced temporary: GCC 12 warns (falsely) that its strings may be uninitialized.
  options.device_profile = *profile;
  absl::StatusOr<Analysis> analysis = AnalyzeModel(loaded, options);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->device.alignment_bytes, 256);
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 2 * 102400);
  ASSERT_EQ(analysis->tiers.size(), 2u);
  EXPECT_EQ(analysis->tiers[0].arena_bytes, 2 * 102400);
  EXPECT_EQ(analysis->tiers[1].arena_bytes, 0);
  EXPECT_EQ(analysis->spilled_tensors, 0);
  EXPECT_TRUE(analysis->fits.value_or(false));
}

// A fan-out: x feeds three branches that are summed at the end, so x and the
// three branch outputs (4 x 100 KiB = 400 KiB) are live together: over 256 KiB.
ModelBuilder FanOut() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {25600})
      .Add("Relu", {"x"}, {"b1"}, "b1")
      .Add("Sigmoid", {"x"}, {"b2"}, "b2")
      .Add("Neg", {"x"}, {"b3"}, "b3")
      .Add("Sum", {"x", "b1", "b2", "b3"}, {"y"}, "sum")
      .Output("y");
  return builder;
}

TEST(DeviceAnalysisTest, PeakOverSramSpillsToDram) {
  const std::string profile_path = WriteScratchFile("two_tier.textproto", kTwoTierProfile);
  const std::string model_path = WriteScratchFile("fan_out.onnx", FanOut().Serialize());
  std::string out;
  ASSERT_EQ(RunQuietly({"analyze", model_path, "--device-file", profile_path, "--format", "json"}, &out), kExitOk);
  const nlohmann::json json = nlohmann::json::parse(out);
  EXPECT_GT(json["memory"]["lower_bound_bytes"].get<int64_t>(), 262144);
  std::map<std::string, std::vector<nlohmann::json>> by_tier;
  for (const nlohmann::json& tensor : json["tensors"]) {
    ASSERT_TRUE(tensor["tier"].is_string()) << tensor.dump();
    EXPECT_EQ(tensor["tier_offset"].get<int64_t>() % 256, 0) << tensor.dump();
    EXPECT_EQ(tensor["offset"].get<int64_t>() % 256, 0) << tensor.dump();
    by_tier[tensor["tier"].get<std::string>()].push_back(tensor);
  }
  ASSERT_EQ(by_tier.size(), 2u) << json["memory"]["tiers"].dump();
  // Each tier's plan on its own: no two tensors live together share a byte, all within its arena.
  for (const nlohmann::json& tier : json["memory"]["tiers"]) {
    const std::vector<nlohmann::json>& tensors = by_tier[tier["name"].get<std::string>()];
    for (size_t i = 0; i < tensors.size(); ++i) {
      const int64_t a_begin = tensors[i]["tier_offset"];
      const int64_t a_end = a_begin + tensors[i]["bytes"].get<int64_t>();
      EXPECT_LE(a_end, tier["arena_bytes"].get<int64_t>());
      for (size_t j = i + 1; j < tensors.size(); ++j) {
        const int64_t b_begin = tensors[j]["tier_offset"];
        const int64_t b_end = b_begin + tensors[j]["bytes"].get<int64_t>();
        // Tensors sharing bytes (alias or in-place) may overlap within their group.
        const auto owner = [](const nlohmann::json& t) {
          return t["shares_with"].is_null() ? t["name"] : t["shares_with"];
        };
        if (owner(tensors[i]) == owner(tensors[j])) continue;
        const bool same_time = tensors[i]["first_step"] <= tensors[j]["last_step"] &&
                               tensors[j]["first_step"] <= tensors[i]["last_step"];
        EXPECT_FALSE(same_time && a_begin < b_end && b_begin < a_end)
            << tensors[i]["name"] << " overlaps " << tensors[j]["name"];
      }
    }
  }
  EXPECT_LE(json["memory"]["tiers"][0]["arena_bytes"].get<int64_t>(), 262144);
  EXPECT_EQ(json["fits"], true);
}

TEST(DeviceAnalysisTest, HundredsOfMebibytesDoNotFitStm32h743) {
  // 4 x 100 MiB tensors.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {26214400})
      .Add("Relu", {"x"}, {"a"}, "relu")
      .Add("Neg", {"a"}, {"y"}, "neg")
      .Output("y");
  const std::string path = WriteScratchFile("huge.onnx", builder.Serialize());
  std::string out;
  EXPECT_EQ(RunQuietly({"analyze", path, "--device", "stm32h743", "--format", "json"}, &out), kExitNotWithinLimits);
  const nlohmann::json json = nlohmann::json::parse(out);
  EXPECT_EQ(json["fits"], false);
  EXPECT_FALSE(json["fits_reason"].get<std::string>().empty());
}

TEST(DeviceAnalysisTest, MnistFitsStm32h743) {
  const std::string path = std::string(FOOTPRINT_TESTDATA_DIR) + "/mnist.onnx";
  std::string out;
  EXPECT_EQ(RunQuietly({"analyze", path, "--device", "stm32h743", "--format", "json"}, &out), kExitOk);
  const nlohmann::json json = nlohmann::json::parse(out);
  EXPECT_EQ(json["fits"], true);
  EXPECT_EQ(json["device"]["name"], "stm32h743");
  EXPECT_EQ(json["device"]["alignment_bytes"], 16);
}

TEST(DeviceAnalysisTest, UnknownDeviceAndMalformedProfileAreExitTwo) {
  const std::string path = std::string(FOOTPRINT_TESTDATA_DIR) + "/mnist.onnx";
  EXPECT_EQ(RunQuietly({"analyze", path, "--device", "no-such-board"}), kExitBadInput);
  const std::string broken = WriteScratchFile("broken.textproto", "name: \"x\"\nmemory { capacity_bytes: -3 }\n");
  EXPECT_EQ(RunQuietly({"analyze", path, "--device-file", broken}), kExitBadInput);
  EXPECT_EQ(RunQuietly({"analyze", path, "--device-file", WriteScratchFile("garbage.textproto", "{{{")}), kExitBadInput);
}

TEST(DeviceAnalysisTest, HtmlDrawsOneSectionPerUsedTierWithEveryTensorOnce) {
  const std::string profile_path = WriteScratchFile("two_tier.textproto", kTwoTierProfile);
  const std::string model_path = WriteScratchFile("fan_out.onnx", FanOut().Serialize());
  std::string html;
  ASSERT_EQ(RunQuietly({"analyze", model_path, "--device-file", profile_path, "--baseline", "--format", "html"}, &html),
            kExitOk);
  EXPECT_EQ(Occurrences(html, "Memory tier: "), 2);
  EXPECT_NE(html.find("Memory tier: sram"), std::string::npos);
  EXPECT_NE(html.find("Memory tier: dram"), std::string::npos);
  EXPECT_EQ(Occurrences(html, "<rect"), 5);  // x, b1, b2, b3, y: each in exactly one tier.
}

TEST(DeviceAnalysisTest, UnderARuntimeTheDeviceMustHoldTheRuntimesPeak) {
  // mnist on a 224 KiB device: the plan (weights + folded + arena, ~64 KiB)
  // fits; ORT's default options hold ~1.1 MiB (its 1 MiB arena region), which
  // does not; arena off, ORT's process peaks at ~207 KiB while it creates the
  // session (NCHWc filters beside the old ones; ours ~211 KiB), which does.
  const std::string path = std::string(FOOTPRINT_TESTDATA_DIR) + "/mnist.onnx";
  const std::string device = WriteScratchFile(
      "tiny.textproto",
      "name: \"tiny\"\nalignment_bytes: 64\nmemory { name: \"ram\" capacity_bytes: 229376 holds_weights: true "
      "holds_activations: true }\n");
  std::string out;
  EXPECT_EQ(RunQuietly({"analyze", path, "--device-file", device, "--format", "json"}, &out), kExitOk);
  nlohmann::json json = nlohmann::json::parse(out);
  // The tier holds the resident weights, folded ones included.
  EXPECT_EQ(json["memory"]["tiers"][0]["weights_bytes"],
            json["memory"]["weights_bytes"].get<int64_t>() + json["memory"]["folded_weights_bytes"].get<int64_t>());
  EXPECT_EQ(RunQuietly({"analyze", path, "--device-file", device, "--runtime", "onnxruntime-cpu:avx2", "--format", "json"},
                       &out),
            kExitNotWithinLimits);
  json = nlohmann::json::parse(out);
  EXPECT_EQ(json["fits"], false);
  EXPECT_GE(json["memory"]["tiers"][0]["arena_bytes"].get<int64_t>() + json["memory"]["tiers"][0]["weights_bytes"].get<int64_t>(),
            json["memory"]["peak_bytes"].get<int64_t>());
  EXPECT_EQ(RunQuietly({"analyze", path, "--device-file", device, "--runtime", "onnxruntime-cpu:avx2,noarena",
                        "--format", "json"},
                       &out),
            kExitOk);
  json = nlohmann::json::parse(out);
  EXPECT_EQ(json["memory"]["tiers"][0]["weights_bytes"], json["memory"]["runtime_weights_bytes"]);
  EXPECT_GE(json["memory"]["tiers"][0]["arena_bytes"].get<int64_t>() + json["memory"]["tiers"][0]["weights_bytes"].get<int64_t>(),
            json["memory"]["peak_bytes"].get<int64_t>());
}

}  // namespace
}  // namespace footprint
