// `onnx-footprint fit` end to end: the dim search is exact (analyze at the
// value exits 0, at value + 1 exits 1) on built models, the shared models and
// tied LLM dims; dtype what-ifs on float CNNs stay in the spec's ratios; the
// report's contract (exit codes, one-line errors, whole-or-nothing output).
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
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
using ::footprint::testing::WriteScratchFile;
using ::footprint::testing::WriteTestModel;

// One RAM tier holding weights and activations, of `capacity` bytes.
std::string DeviceFile(const std::string& name, int64_t capacity) {
  return WriteScratchFile(name + ".textproto",
                          "name: \"" + name + "\"\nalignment_bytes: 16\nmemory { name: \"ram\" capacity_bytes: " +
                              std::to_string(capacity) + " holds_weights: true holds_activations: true }\n");
}

// x[batch, 64] -> MatMul [64, 256] -> Relu -> MatMul [256, 64] -> y.
std::string BatchMlp() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{64}})
      .Initializer("w1", onnx::TensorProto::FLOAT, {64, 256})
      .Initializer("w2", onnx::TensorProto::FLOAT, {256, 64})
      .Add("MatMul", {"x", "w1"}, {"h"}, "fc1")
      .Add("Relu", {"h"}, {"r"}, "relu")
      .Add("MatMul", {"r", "w2"}, {"y"}, "fc2")
      .Output("y");
  return WriteTestModel(builder.Serialize());
}

// A decoder's attention over a cache: q[b, seq, 16] attends to
// Concat(past[b, past, 16], x) plus mask[b, 1, total]: the model ties
// total = past + seq.
std::string CachedAttention() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), std::string("seq"), int64_t{16}})
      .Input("past", onnx::TensorProto::FLOAT, {std::string("batch"), std::string("past"), int64_t{16}})
      .Input("mask", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{1}, std::string("total")});
  builder.Node("Concat", {"past", "x"}, {"kv"}, "concat").add_attribute()->CopyFrom([] {
    onnx::AttributeProto axis;
    axis.set_name("axis");
    axis.set_type(onnx::AttributeProto::INT);
    axis.set_i(1);
    return axis;
  }());
  onnx::NodeProto& transpose = builder.Node("Transpose", {"kv"}, {"kv_t"}, "transpose");
  testing::SetInts(transpose, "perm", {0, 2, 1});
  builder.Add("MatMul", {"x", "kv_t"}, {"scores"}, "scores")
      .Add("Add", {"scores", "mask"}, {"masked"}, "mask_add")
      .Add("Softmax", {"masked"}, {"probs"}, "softmax")
      .Add("MatMul", {"probs", "kv"}, {"y"}, "context")
      .Output("y")
      .Output("kv");
  return WriteTestModel(builder.Serialize());
}

// `fit ARGS --format json`, parsed; `expected_exit` < 0: any exit code.
nlohmann::json FitJson(const std::vector<std::string>& args, int expected_exit = kExitOk) {
  std::vector<std::string> words = {"fit"};
  words.insert(words.end(), args.begin(), args.end());
  words.insert(words.end(), {"--format", "json", "--time-limit", "0", "--schedule-time-limit", "0"});
  const CliRun run = RunCliCaptured(words);
  if (expected_exit >= 0) {
    EXPECT_EQ(run.exit_code, expected_exit) << run.err << run.out;
  }
  if (run.out.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(run.out);
}

int AnalyzeExit(const std::string& model, const std::vector<std::string>& flags,
                const std::map<std::string, int64_t>& bindings) {
  std::vector<std::string> words = {"analyze", model, "--time-limit", "0", "--schedule-time-limit", "0"};
  words.insert(words.end(), flags.begin(), flags.end());
  for (const auto& [name, value] : bindings) {
    words.push_back("--dim");
    words.push_back(name + "=" + std::to_string(value));
  }
  return RunCliCaptured(words).exit_code;
}

// Every dim option of `report` is exact: analyze with its bindings exits 0,
// with bindings_above 1. Returns how many options were checked.
int ExpectDimOptionsExact(const std::string& model, const std::vector<std::string>& flags,
                          const nlohmann::json& report) {
  int checked = 0;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dim") continue;
    EXPECT_FALSE(option["largest_fitting"].is_null()) << model << " " << option.dump();
    if (option["largest_fitting"].is_null()) continue;
    const auto bindings = option["bindings"].get<std::map<std::string, int64_t>>();
    const auto above = option["bindings_above"].get<std::map<std::string, int64_t>>();
    EXPECT_EQ(option["reason"].get<std::string>().find("unknown"), std::string::npos) << option.dump();
    if (option["largest_fitting"] == 0) {
      EXPECT_EQ(AnalyzeExit(model, flags, above), kExitNotWithinLimits) << model << " " << option.dump();
    } else {
      EXPECT_EQ(AnalyzeExit(model, flags, bindings), kExitOk) << model << " " << option.dump();
      EXPECT_EQ(AnalyzeExit(model, flags, above), kExitNotWithinLimits) << model << " " << option.dump();
      EXPECT_EQ(above.at(option["dim"]), option["largest_fitting"].get<int64_t>() + 1) << option.dump();
    }
    ++checked;
  }
  return checked;
}

TEST(FitTest, BatchSearchIsExact) {
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram200k", 200 * 1024);
  const nlohmann::json report = FitJson({model, "--device-file", device});
  ASSERT_TRUE(report.contains("options")) << report.dump();
  EXPECT_EQ(report["schema_version"], 1);
  EXPECT_EQ(report["device"], "ram200k");
  EXPECT_TRUE(report["fits"].is_null()) << "batch unbound: the figures are incomplete";
  bool found = false;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dim") continue;
    found = true;
    EXPECT_EQ(option["dim"], "batch");
    // Weights 128 KiB; each batch row holds about 2 KiB of live activations.
    EXPECT_GT(option["largest_fitting"].get<int64_t>(), 10);
    EXPECT_LT(option["largest_fitting"].get<int64_t>(), 100);
    EXPECT_EQ(option["change"], "--dim batch=" + std::to_string(option["largest_fitting"].get<int64_t>()));
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(ExpectDimOptionsExact(model, {"--device-file", device}, report), 1);
}

TEST(FitTest, BudgetIsWhatFits) {
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram1g", int64_t{1} << 30);
  const std::vector<std::string> flags = {"--device-file", device, "--max-peak", "150KiB"};
  std::vector<std::string> args = {model, "--fit-dim", "batch"};
  args.insert(args.end(), flags.begin(), flags.end());
  const nlohmann::json report = FitJson(args);
  EXPECT_EQ(ExpectDimOptionsExact(model, flags, report), 1);
}

TEST(FitTest, EvenOneDoesNotFit) {
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram100k", 100 * 1024);  // Less than the weights.
  const nlohmann::json report = FitJson({model, "--device-file", device, "--fit-dim", "batch"}, kExitNotWithinLimits);
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dim") continue;
    EXPECT_EQ(option["largest_fitting"], 0);
    EXPECT_EQ(option["fits"], false);
    EXPECT_NE(option["reason"].get<std::string>().find("even batch=1 does not fit"), std::string::npos);
  }
}

TEST(FitTest, TiedDimsMoveTogether) {
  const std::string model = CachedAttention();
  const std::string device = DeviceFile("ram64k", 64 * 1024);
  const nlohmann::json report = FitJson({model, "--device-file", device, "--fit-dim", "past"});
  ASSERT_EQ(report["options"].size(), 3u) << report.dump();  // past, int8, fp16.
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dim") continue;
    const auto bindings = option["bindings"].get<std::map<std::string, int64_t>>();
    EXPECT_EQ(bindings.at("total"), bindings.at("past") + bindings.at("seq")) << option.dump();
    EXPECT_EQ(bindings.at("seq"), 1);
    EXPECT_EQ(bindings.at("batch"), 1);
  }
  EXPECT_EQ(ExpectDimOptionsExact(model, {"--device-file", device}, report), 1);
  // Searching the total moves the past length with it.
  const nlohmann::json by_total = FitJson({model, "--device-file", device, "--fit-dim", "total"});
  for (const nlohmann::json& option : by_total["options"]) {
    if (option["kind"] != "dim") continue;
    const auto bindings = option["bindings"].get<std::map<std::string, int64_t>>();
    EXPECT_EQ(bindings.at("total"), bindings.at("past") + bindings.at("seq")) << option.dump();
  }
  EXPECT_EQ(ExpectDimOptionsExact(model, {"--device-file", device}, by_total), 1);
}

TEST(FitTest, ModelThatFitsSaysSo) {
  const CliRun run = RunCliCaptured({"fit", FOOTPRINT_TESTDATA_DIR "/mnist.onnx", "--device", "stm32h743"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(run.out.rfind(FOOTPRINT_TESTDATA_DIR "/mnist.onnx on stm32h743: fits\n", 0), 0u) << run.out;
}

TEST(FitTest, BadFlagsExitTwo) {
  const std::string mnist = FOOTPRINT_TESTDATA_DIR "/mnist.onnx";
  ExpectOneLineError(RunCliCaptured({"fit", mnist}), "fit needs --device NAME or --device-file FILE");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "stm32h743", "--format", "html"}),
                     "--format must be text, json or md");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "stm32h743", "--fit-dim"}), "--fit-dim needs a value");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "stm32h743", "--fit-dim", "batch"}),
                     "the model has no input dim named 'batch'");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "no-such-device"}), "no-such-device");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "stm32h743", "--sweep", "batch=1,2"}),
                     "fit does not take --sweep");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "generic-cpu"}), "does not say the capacity");
  ExpectOneLineError(RunCliCaptured({"fit", "missing.onnx", "--device", "stm32h743"}), "missing.onnx");
  ExpectOneLineError(RunCliCaptured({"fit", mnist, "--device", "stm32h743", "--bogus"}), "unknown option --bogus");
}

TEST(FitTest, UnwritableOutputExitsTwoAndWritesNothing) {
  const std::string output = testing::ScratchPath("no_such_folder/sub") + "/fit.json";
  std::filesystem::remove_all(std::filesystem::path(output).parent_path());
  const CliRun run = RunCliCaptured(
      {"fit", FOOTPRINT_TESTDATA_DIR "/mnist.onnx", "--device", "stm32h743", "--format", "json", "--output", output});
  ExpectOneLineError(run, output);
  EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(FitTest, TextAndMarkdownAreOneTable) {
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram200k_text", 200 * 1024);
  const CliRun text = RunCliCaptured({"fit", model, "--device-file", device, "--time-limit", "0"});
  EXPECT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("option"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--dim batch="), std::string::npos) << text.out;
  const CliRun md = RunCliCaptured({"fit", model, "--device-file", device, "--time-limit", "0", "--format", "md"});
  EXPECT_EQ(md.exit_code, kExitOk) << md.err;
  EXPECT_NE(md.out.find("| option | new peak | fits | how |"), std::string::npos) << md.out;
}

// The shared models and copies of CNNs whose batch (and image size) are made
// symbolic: every dim option is exact on a device that holds a few times the
// model at 1.
struct SharedCase {
  std::string model;               // Below the shared models' folder.
  std::vector<std::string> flags;  // Extra analyze flags.
};

// `path` with its first graph input's dims renamed (dim_params) where
// `names` gives a name, and its intermediate types dropped.
std::string WithSymbolicInput(const std::string& path, const std::vector<std::string>& names,
                              const std::string& out_name) {
  onnx::ModelProto model;
  const std::string bytes = testing::ReadWholeFile(path);
  if (!model.ParseFromString(bytes)) return "";
  std::set<std::string> initializers;
  for (const auto& initializer : model.graph().initializer()) initializers.insert(initializer.name());
  for (auto& input : *model.mutable_graph()->mutable_input()) {
    if (initializers.contains(input.name())) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (size_t k = 0; k < names.size() && static_cast<int>(k) < shape->dim_size(); ++k) {
      if (!names[k].empty()) shape->mutable_dim(static_cast<int>(k))->set_dim_param(names[k]);
    }
    break;
  }
  model.mutable_graph()->clear_value_info();
  for (auto& output : *model.mutable_graph()->mutable_output()) output.mutable_type()->mutable_tensor_type()->clear_shape();
  return WriteScratchFile(out_name, model.SerializeAsString());
}

int64_t PeakAt1(const std::string& model, const std::vector<std::string>& flags) {
  std::vector<std::string> all = flags;
  all.insert(all.end(), {"--dim-default", "1"});
  const nlohmann::json report = testing::AnalyzeJson(model, all);
  return report.contains("memory") ? report["memory"]["peak_bytes"].get<int64_t>() : 0;
}

TEST(FitTest, DimSearchIsExactOnSharedModels) {
  FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
  const std::string shared = testing::SharedModelsDir() + "/";
  std::vector<std::string> models = {
      shared + "microsoft_onnxconverter-common/image_classifier32.onnx",
      shared + "microsoft_onnxruntime-extensions/pytorch_super_resolution.onnx",
      shared + "microsoft_onnxconverter-common/test_model_0_no_opt.onnx",
      shared + "microsoft_onnxruntime-genai/tiny-random-gpt2-fp32__past.onnx",
      shared + "microsoft_onnxruntime-genai/tiny-random-LlamaForCausalLM-fp16/model.onnx",
      shared + "microsoft_onnxruntime-genai/tiny-random-lfm2-fp32__decoder.onnx",
      shared + "microsoft_onnxruntime-genai/tiny-qwen35-cuda__decoder.onnx",
  };
  // CNNs with a global pool before their classifier take any batch and image size.
  for (const auto& [name, file] : std::vector<std::pair<std::string, std::string>>{
           {"squeezenet", "onnx_onnx/light_squeezenet.onnx"}, {"resnet50", "onnx_onnx/light_resnet50.onnx"}}) {
    models.push_back(WithSymbolicInput(shared + file, {"batch", "", "height", "width"}, name + "_dynamic.onnx"));
  }
  models.push_back(WithSymbolicInput(shared + "onnx_onnx/light_inception_v1.onnx", {"batch"}, "inception_dynamic.onnx"));
  int checked_models = 0;
  for (const std::string& model : models) {
    ASSERT_FALSE(model.empty());
    if (!std::filesystem::exists(model)) continue;
    const int64_t peak = PeakAt1(model, {});
    ASSERT_GT(peak, 0) << model;
    const std::string device = DeviceFile("shared" + std::to_string(checked_models), peak * 3);
    std::vector<std::string> args = {model, "--device-file", device};
    if (model.find("_dynamic") != std::string::npos && model.find("inception") == std::string::npos) {
      // The height with the width held, then the batch at 224x224.
      for (const auto& [fit, held] : std::vector<std::pair<std::string, std::vector<std::string>>>{
               {"height", {"--dim", "width=224"}}, {"batch", {"--dim", "width=224", "--dim", "height=224"}}}) {
        std::vector<std::string> flags = {"--device-file", device};
        flags.insert(flags.end(), held.begin(), held.end());
        std::vector<std::string> fit_args = {model, "--fit-dim", fit};
        fit_args.insert(fit_args.end(), flags.begin(), flags.end());
        EXPECT_EQ(ExpectDimOptionsExact(model, flags, FitJson(fit_args)), 1) << model << " " << fit;
      }
    } else {
      const nlohmann::json report = FitJson(args);
      EXPECT_GE(ExpectDimOptionsExact(model, {"--device-file", device}, report), 1) << model;
    }
    ++checked_models;
  }
  EXPECT_GE(checked_models, 10);
}

// The tiny LLMs tie total = past + sequence inside com.microsoft's attention
// ops (Attention, MultiHeadAttention, GroupQueryAttention) or by their
// declared outputs (lfm2): searching the past length moves the total with it.
TEST(FitTest, TiedDimsOfTheTinyLlmsMoveTogether) {
  FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
  const std::string shared = testing::SharedModel("microsoft_onnxruntime-genai/");
  struct Llm {
    std::string file, past, sequence, total;
  };
  const std::vector<Llm> llms = {
      {"tiny-qwen35-cuda__decoder.onnx", "past_seq_len", "seq_len", "total_seq_len"},
      {"tiny-random-gpt2-fp32__past.onnx", "past_seq_len", "seq_len", "total_seq_len"},
      {"tiny-random-LlamaForCausalLM-fp16/model.onnx", "past_sequence_length", "sequence_length",
       "total_sequence_length"},
      {"tiny-random-lfm2-fp32__decoder.onnx", "past_sequence_length", "sequence_length", "total_sequence_length"}};
  for (const Llm& llm : llms) {
    const std::string model = shared + llm.file;
    const int64_t peak = PeakAt1(model, {});
    ASSERT_GT(peak, 0) << model;
    const std::string device = DeviceFile("llm_ties", peak * 3 / 2);
    const nlohmann::json report = FitJson({model, "--device-file", device, "--fit-dim", llm.past});
    int checked = 0;
    for (const nlohmann::json& option : report["options"]) {
      if (option["kind"] != "dim") continue;
      const auto bindings = option["bindings"].get<std::map<std::string, int64_t>>();
      ASSERT_TRUE(bindings.contains(llm.total)) << model << " " << option.dump();
      EXPECT_GT(bindings.at(llm.past), 1) << model << " " << option.dump();
      EXPECT_EQ(bindings.at(llm.total), bindings.at(llm.past) + bindings.at(llm.sequence))
          << model << " " << option.dump();
      ++checked;
    }
    EXPECT_EQ(checked, 1) << model;
    EXPECT_EQ(ExpectDimOptionsExact(model, {"--device-file", device}, report), 1) << model;
  }
}

// Conv -> Relu -> Softmax: the int8 what-if stores the Conv's weight at 1
// byte with a scale and zero point per output channel, its bias in int32
// with a float scale and an int32 zero point per channel (as
// quantize_static writes it), a scale and zero point per quantized activation (the
// input's quantized copy, the Conv's and the Relu's outputs) and the Q/DQ
// pair's; Softmax stays float.
TEST(FitTest, DtypeWhatIfCountsEveryWeightByte) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{16}})
      .Initializer("w", onnx::TensorProto::FLOAT, {8, 3, 3, 3})
      .Initializer("b", onnx::TensorProto::FLOAT, {8})
      .Add("Conv", {"x", "w", "b"}, {"conv"}, "conv")
      .Add("Relu", {"conv"}, {"relu"}, "relu")
      .Add("Softmax", {"relu"}, {"y"}, "softmax")
      .Output("y");
  const std::string model = WriteTestModel(builder.Serialize());
  const nlohmann::json report = FitJson({model, "--device-file", DeviceFile("ram1m", 1 << 20)});
  int seen = 0;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dtype") continue;
    ++seen;
    if (option["dtype"] == "int8") {
      // w 216 + 8 x (4 + 1), b 8 x 4 + 8 x (4 + 4), the Q/DQ scale and zero point 5, three
      // activations x 5 (x quantized at the graph's edge, the Conv's and the Relu's outputs).
      EXPECT_EQ(option["weights_bytes"], 216 + 40 + 32 + 64 + 5 + 15) << option.dump();
      EXPECT_EQ(option["float_ops"], nlohmann::json({{"Softmax", 1}})) << option.dump();
      EXPECT_EQ(option["quantized_nodes"], 2);
    } else {
      EXPECT_EQ(option["weights_bytes"], (216 + 8) * 2) << option.dump();
      EXPECT_EQ(option["float_ops"], nlohmann::json::object()) << option.dump();
    }
  }
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(report["weights_bytes"], (216 + 8) * 4);
}

// Q/DQ at the graph's edges, as QDQ copies are written: x [1, 3, 16, 16]
// float -> Relu -> y. The int8 what-if keeps x float (3072 B) and quantizes
// it (768 B), the Relu writes int8 (768 B) and a DequantizeLinear writes y in
// float (3072 B): the arena holds x and its copy, then the Relu's output and y.
TEST(FitTest, DtypeWhatIfQuantizesAtTheGraphsEdges) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{16}})
      .Add("Relu", {"x"}, {"y"}, "relu")
      .Output("y");
  const std::string model = WriteTestModel(builder.Serialize());
  const nlohmann::json report = FitJson({model, "--device-file", DeviceFile("ram1m_edges", 1 << 20)});
  bool seen = false;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "dtype" || option["dtype"] != "int8") continue;
    seen = true;
    EXPECT_EQ(option["quantized_nodes"], 1) << option.dump();
    EXPECT_EQ(option["arena_bytes"], 3072 + 768) << option.dump();
  }
  EXPECT_TRUE(seen) << report.dump();
}

// On float CNNs the int8 what-if holds about a quarter of the float figures
// and fp16 about half (issue 24's acceptance ranges). FastestDet's float
// peak is at its input, which stays float: its int8 arena is that input and
// its int8 copy.
TEST(FitTest, DtypeRatiosOnFloatCnns) {
  FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
  const std::string shared = testing::SharedModelsDir() + "/";
  for (const char* file : {"onnx_onnx/light_squeezenet.onnx", "onnx_onnx/light_resnet50.onnx",
                           "microsoft_onnxruntime-extensions/FastestDet.onnx",
                           "Linzaer_Ultra-Light-Fast-Generic-Face-Detector-1MB/version-RFB-320.onnx"}) {
    const bool peak_at_input = std::string(file).find("FastestDet") != std::string::npos;
    const std::string model = shared + file;
    const nlohmann::json given = testing::AnalyzeJson(model);
    const double arena = given["memory"]["arena_bytes"].get<double>();
    const double weights =
        given["memory"]["weights_bytes"].get<double>() + given["memory"]["folded_weights_bytes"].get<double>();
    const nlohmann::json report = FitJson({model, "--device", "esp32-s3"}, -1);
    for (const nlohmann::json& option : report["options"]) {
      if (option["kind"] != "dtype") continue;
      const double arena_ratio = option["arena_bytes"].get<double>() / arena;
      const double weights_ratio = option["weights_bytes"].get<double>() / weights;
      if (option["dtype"] == "int8") {
        if (peak_at_input) {
          const int64_t input_bytes = 3 * 352 * 352 * 4;  // [1, 3, 352, 352] float.
          EXPECT_EQ(option["arena_bytes"], input_bytes + input_bytes / 4) << file;
        } else {
          EXPECT_GE(arena_ratio, 0.20) << file;
          EXPECT_LE(arena_ratio, 0.32) << file;
        }
        // Biases stay 4 bytes (int32) and get a scale and zero point per
        // channel: on a small detector with many channels (FastestDet 0.321)
        // that is a percent over the 0.32; its real QDQ copy has 0.320.
        EXPECT_GE(weights_ratio, 0.24) << file;
        EXPECT_LE(weights_ratio, 0.33) << file;
      } else {
        EXPECT_GE(arena_ratio, 0.45) << file;
        EXPECT_LE(arena_ratio, 0.55) << file;
      }
    }
  }
}

TEST(FitTest, UnboundDimsMakeTheFiguresUnknownNotZeroAndTheKnownOptionComesFirst) {
  // BatchMlp with batch unbound: every tensor is unsized, so the as-given
  // figures are lower bounds, printed as such; the dim option is planned and ranks first.
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram_256k", 256 * 1024);
  const nlohmann::json report = FitJson({model, "--device-file", device});
  EXPECT_EQ(report["complete"], false);
  EXPECT_GT(report["unsized_tensors"].get<int64_t>(), 0);
  ASSERT_FALSE(report["options"].empty());
  EXPECT_EQ(report["options"][0]["kind"], "dim") << report.dump(1);
  EXPECT_EQ(report["options"][0]["complete"], true);
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] == "dtype") {
      EXPECT_EQ(option["complete"], false) << option.dump();
    }
  }
  const CliRun text = RunCliCaptured({"fit", model, "--device-file", device, "--time-limit", "0"});
  // The weights are known, the arena is not: the peak is the lower bound it is.
  EXPECT_NE(text.out.find("peak >= "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("arena unknown"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(" 0 B"), std::string::npos) << text.out;
}

TEST(FitTest, DimDefaultIsSearchedWhenTheModelDoesNotFit) {
  // --dim-default 4096 binds batch: the model does not fit, so batch is what to change.
  const std::string model = BatchMlp();
  const std::string device = DeviceFile("ram_256k", 256 * 1024);
  const nlohmann::json report = FitJson({model, "--device-file", device, "--dim-default", "4096"});
  EXPECT_EQ(report["fits"], false);
  bool searched = false;
  for (const nlohmann::json& option : report["options"]) searched = searched || option["dim"] == "batch";
  EXPECT_TRUE(searched) << report.dump(1);
  EXPECT_GE(ExpectDimOptionsExact(model, {"--device-file", device}, report), 1);
}

TEST(FitTest, ARepeatedFitDimIsSearchedOnce) {
  const nlohmann::json report =
      FitJson({BatchMlp(), "--device-file", DeviceFile("ram_256k", 256 * 1024), "--fit-dim", "batch", "--fit-dim=batch"});
  int rows = 0;
  for (const nlohmann::json& option : report["options"]) rows += option["kind"] == "dim" ? 1 : 0;
  EXPECT_EQ(rows, 1);
}

TEST(FitTest, ThePeakLineNamesWhatThePeakSums) {
  const std::string model = FOOTPRINT_TESTDATA_DIR "/mnist.onnx";
  nlohmann::json report = FitJson({model, "--device", "raspberry-pi-5"});
  ASSERT_EQ(report["peak_parts"].size(), 2u);
  EXPECT_EQ(report["peak_parts"][0]["part"], "weights");
  EXPECT_EQ(report["peak_parts"][1]["part"], "arena");
  report = FitJson({model, "--device", "raspberry-pi-5", "--runtime", "onnxruntime-cpu:avx2"});
  int64_t sum = 0;
  for (const nlohmann::json& part : report["peak_parts"]) sum += part["bytes"].get<int64_t>();
  EXPECT_EQ(sum, report["peak_bytes"].get<int64_t>()) << report.dump(1);
  EXPECT_EQ(report["peak_parts"][1]["part"], "runtime reserved");
  const CliRun text = RunCliCaptured({"fit", model, "--device", "raspberry-pi-5", "--runtime", "onnxruntime-cpu:avx2"});
  EXPECT_NE(text.out.find("= runtime weights "), std::string::npos) << text.out;
}

TEST(FitTest, WeightsInFlashIsAnOptionWhereTheRamHoldsThem) {
  // 64 KiB of weights and a small arena: a 80 KiB RAM tier holding weights
  // does not fit both with its alignment; with the weights in flash (XIP) it does.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 64})
      .Initializer("w", onnx::TensorProto::FLOAT, {64, 320})
      .Add("MatMul", {"x", "w"}, {"y"}, "fc")
      .Output("y");
  const std::string model = WriteTestModel(builder.Serialize());
  const std::string device = WriteScratchFile(
      "ram_flash.textproto",
      "name: \"ram_flash\"\nalignment_bytes: 16\n"
      "memory { name: \"sram\" capacity_bytes: 81920 holds_weights: true holds_activations: true }\n"
      "memory { name: \"flash\" capacity_bytes: 1048576 holds_weights: true holds_activations: false }\n");
  const nlohmann::json report = FitJson({model, "--device-file", device}, kExitOk);
  EXPECT_EQ(report["fits"], false) << report.dump(1);
  bool xip = false;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "tiers") continue;
    xip = true;
    EXPECT_EQ(option["fits"], true) << option.dump();
    EXPECT_EQ(option["change"], "holds_weights: false on sram (--device-file)");
    EXPECT_LT(option["ram_bytes"].get<int64_t>(), 64 * 320 * 4);  // The weights left the RAM.
  }
  EXPECT_TRUE(xip) << report.dump(1);
  // A device that keeps weights in flash already gets no such row.
  const nlohmann::json flash_only = FitJson({model, "--device", "stm32f407"}, -1);
  for (const nlohmann::json& option : flash_only["options"]) EXPECT_NE(option["kind"], "tiers") << option.dump();
}

TEST(FitTest, AnotherOrderOfTheRamTiersIsAnOptionWhenItFits) {
  // x (4 KiB, read to the end) and its 3 KiB slice b are live together. The
  // tier planner fills the first RAM tier and spills x, the buffer with the
  // most byte-steps: with "fast" (4200 B) first, x lands in "slow" (3100 B)
  // and does not fit; with "slow" first, b and the scalars stay in slow and x
  // goes to fast, which holds it.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {int64_t{1024}})
      .Int64Initializer("starts", {0})
      .Int64Initializer("ends", {768})
      .Add("Slice", {"x", "starts", "ends"}, {"b"}, "slice")
      .Add("ReduceSum", {"b"}, {"c"}, "sum_b")
      .Add("ReduceSum", {"x"}, {"d"}, "sum_x")
      .Add("Add", {"c", "d"}, {"y"}, "add")
      .Output("y");
  const std::string model = WriteTestModel(builder.Serialize());
  const std::string device = WriteScratchFile(
      "two_ram.textproto",
      "name: \"two_ram\"\nalignment_bytes: 16\n"
      "memory { name: \"fast\" capacity_bytes: 4200 holds_activations: true }\n"
      "memory { name: \"slow\" capacity_bytes: 3100 holds_activations: true }\n"
      "memory { name: \"flash\" capacity_bytes: 1048576 holds_weights: true holds_activations: false }\n");
  const nlohmann::json report = FitJson({model, "--device-file", device}, kExitOk);
  EXPECT_EQ(report["fits"], false) << report.dump(1);
  int tiers = 0;
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] != "tiers") continue;
    ++tiers;
    EXPECT_EQ(option["fits"], true) << option.dump();
    EXPECT_EQ(option["change"], "list the memory tiers as slow, fast (--device-file)") << option.dump();
    ASSERT_EQ(option["placement"].size(), 3u) << option.dump();
    EXPECT_EQ(option["placement"][0]["tier"], "slow");
    EXPECT_EQ(option["placement"][1]["tier"], "fast");
    EXPECT_EQ(option["placement"][1]["arena_bytes"], 4096) << option.dump();  // x alone.
  }
  EXPECT_EQ(tiers, 1) << report.dump(1);
  // With slow too small for b, no order fits: a note says so, and no option.
  const std::string tight = WriteScratchFile(
      "two_ram_tight.textproto",
      "name: \"two_ram_tight\"\nalignment_bytes: 16\n"
      "memory { name: \"fast\" capacity_bytes: 4200 holds_activations: true }\n"
      "memory { name: \"slow\" capacity_bytes: 1024 holds_activations: true }\n");
  const nlohmann::json none = FitJson({model, "--device-file", tight}, -1);
  for (const nlohmann::json& option : none["options"]) EXPECT_NE(option["kind"], "tiers") << option.dump();
  EXPECT_NE(none["notes"].dump().find("no order of the 2 RAM tiers"), std::string::npos) << none.dump(1);
}

}  // namespace
}  // namespace footprint
