// --input-value on the command line: Ifs it decides, the bound of the Ifs it
// leaves undecided, and its errors.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/cli/cli.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/test_models.h"
#include "analyzer/testing/value_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::RunCliCaptured;

std::string Write(const ModelBuilder& builder) { return testing::WriteTestModel(builder.Serialize()); }

// analyze MODEL FLAGS... as JSON.
nlohmann::json Json(const std::vector<std::string>& model_and_flags) {
  return testing::AnalyzeJson(model_and_flags[0], {model_and_flags.begin() + 1, model_and_flags.end()});
}

const nlohmann::json& Tensor(const nlohmann::json& report, const std::string& name) {
  for (const nlohmann::json& tensor : report["tensors"]) {
    if (tensor["name"] == name) return tensor;
  }
  ADD_FAILURE() << "no tensor " << name;
  static const nlohmann::json kNone;
  return kNone;
}

// The bytes an If holds at its step for its bodies (its subgraph workspace), or -1.
int64_t BodyWorkspace(const nlohmann::json& report) {
  for (const nlohmann::json& tensor : report["tensors"]) {
    if (tensor["role"] == "subgraph_workspace") return tensor["bytes"].get<int64_t>();
  }
  return -1;
}

// Folding (on by default) drops the branch a known condition never takes;
// --baseline and --no-fold keep the spec's largest branch (then: 4096 B).
TEST(ValuesCliTest, ADecidedIfHoldsOnlyItsTakenBranchWhenFolding) {
  const std::string model = Write(testing::SampleRateIfModel());
  EXPECT_EQ(BodyWorkspace(Json({model, "--input-value", "sr=16000"})), 4096);
  EXPECT_EQ(BodyWorkspace(Json({model, "--input-value", "sr=8000"})), 2048);
  EXPECT_EQ(BodyWorkspace(Json({model, "--input-value", "sr=8000", "--no-fold"})), 4096);
  EXPECT_EQ(BodyWorkspace(Json({model, "--input-value", "sr=8000", "--baseline"})), 4096);
  EXPECT_EQ(BodyWorkspace(Json({model})), 4096);  // Undecided: the larger branch.
}

TEST(ValuesCliTest, InputValueTakesOneBranch) {
  const std::string model = Write(testing::SampleRateIfModel());
  nlohmann::json at_16k = Json({model, "--input-value", "sr=16000"});
  EXPECT_EQ(at_16k["options"]["input_values"]["sr"], "16000");
  EXPECT_EQ(Tensor(at_16k, "y")["bytes"], 4096);
  EXPECT_FALSE(Tensor(at_16k, "y").contains("bound"));
  ASSERT_EQ(at_16k["if_branches"].size(), 1u);
  EXPECT_EQ(at_16k["if_branches"][0]["node"], "pick_rate");
  EXPECT_EQ(at_16k["if_branches"][0]["branch"], "then");
  EXPECT_TRUE(at_16k["if_branches"][0]["decided_by"].is_null());
  EXPECT_TRUE(at_16k["memory"]["complete"]);
  nlohmann::json at_8k = Json({model, "--input-value=sr=8000"});
  EXPECT_EQ(Tensor(at_8k, "y")["bytes"], 2048);
  EXPECT_EQ(at_8k["if_branches"][0]["branch"], "else");
  const CliRun text = RunCliCaptured({"analyze", model, "--input-value", "sr=16000"});
  EXPECT_NE(text.out.find("  if      pick_rate: then\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dims sr=16000"), std::string::npos) << text.out;
}

TEST(ValuesCliTest, UndecidedIfIsBoundByTheLargerBranchWithAWarning) {
  const std::string model = Write(testing::SampleRateIfModel());
  nlohmann::json report = Json({model});
  EXPECT_EQ(Tensor(report, "y")["bytes"], 4096);
  EXPECT_EQ(Tensor(report, "y")["bound"], "max_over_branches");
  EXPECT_EQ(report["if_branches"][0]["branch"], "undecided");
  EXPECT_EQ(report["if_branches"][0]["decided_by"], "--input-value sr=...");
  bool warned = false;
  for (const nlohmann::json& warning : report["warnings"]) {
    warned = warned || warning.get<std::string>().find("decide it with --input-value sr=...") != std::string::npos;
  }
  EXPECT_TRUE(warned) << report["warnings"];
  EXPECT_TRUE(report["memory"]["complete"]);
}

TEST(ValuesCliTest, BoolInputAndNestedShapeConditions) {
  const std::string model = Write(testing::CacheBranchModel());
  nlohmann::json cached = Json({model, "--input-value", "use_cache_branch=1", "--dim", "past=4"});
  EXPECT_EQ(Tensor(cached, "y")["bytes"], 12 * 16 * 4);
  EXPECT_TRUE(cached["memory"]["complete"]);
  for (const nlohmann::json& decision : cached["if_branches"]) EXPECT_NE(decision["branch"], "undecided") << decision;
  nlohmann::json fresh = Json({model, "--input-value", "use_cache_branch=false", "--dim", "past=4"});
  EXPECT_EQ(Tensor(fresh, "y")["bytes"], 8 * 16 * 4);
  nlohmann::json unknown = Json({model, "--dim", "past=4"});
  EXPECT_EQ(Tensor(unknown, "y")["bytes"], 12 * 16 * 4);
  EXPECT_EQ(Tensor(unknown, "y")["bound"], "max_over_branches");
}

TEST(ValuesCliTest, StftIntoLstmIsFullySized) {
  const std::string model = Write(testing::StftLstmModel());
  nlohmann::json at_16k = Json({model, "--input-value", "sr=16000"});
  EXPECT_EQ(at_16k["memory"]["unsized_tensors"], 0);
  EXPECT_EQ(Tensor(at_16k, "y")["bytes"], 13 * 64 * 4);
  nlohmann::json unknown = Json({model});
  EXPECT_EQ(unknown["memory"]["unsized_tensors"], 0);
  EXPECT_EQ(Tensor(unknown, "y")["bytes"], 26 * 64 * 4);
  EXPECT_EQ(Tensor(unknown, "y")["bound"], "max_over_branches");
}

TEST(ValuesCliTest, BadInputValuesNameTheInput) {
  ModelBuilder builder = testing::SampleRateIfModel();
  builder.Input("image", onnx::TensorProto::FLOAT, {1, 3});
  const std::string model = Write(builder);
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "rate=16000"}),
                     "--input-value rate: no graph input named 'rate'");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "sr=16k"}),
                     "--input-value sr: '16k' is not an integer (the input is INT64)");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "sr=1,2"}),
                     "--input-value sr: the input is a scalar, but 2 values were given");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "image=1,2,3"}),
                     "--input-value image: the input has rank 2");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "sr"}), "--input-value expects INPUT=V");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-value", "sr="}), "--input-value expects INPUT=V");
}


TEST(ValuesCliTest, ContradictoryDimDefaultIsBadInput) {
  // mask [total] + Concat(past [past], new [seq]): total must be past + seq.
  ModelBuilder builder;
  builder.Input("mask", onnx::TensorProto::FLOAT, {"total"})
      .Input("past", onnx::TensorProto::FLOAT, {"past_len"})
      .Input("new", onnx::TensorProto::FLOAT, {"seq"});
  onnx::NodeProto& concat = builder.Node("Concat", {"past", "new"}, {"joined"}, "join");
  onnx::AttributeProto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  builder.Add("Add", {"mask", "joined"}, {"y"}, "add").Output("y");
  const std::string model = Write(builder);
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim-default", "8"}),
                     "--dim-default 8 makes the model contradict itself: total (8) must equal past_len+seq (16) at "
                     "Add 'add'; bind them consistently, e.g. --dim past_len=0 or --dim total=16");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim", "total=8", "--dim", "past_len=8", "--dim", "seq=8"}),
                     "--dim past_len=8 --dim seq=8 --dim total=8 make the model contradict itself: Add 'add': dims 8 "
                     "and 16 do not broadcast; the dims are total and past_len+seq");
  EXPECT_EQ(RunCliCaptured({"analyze", model, "--dim-default", "8", "--dim", "past_len=0"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"analyze", model, "--dim", "total=16", "--dim-default", "8"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"analyze", model}).exit_code, kExitOk);  // Unbound: formulas, no contradiction.
}

TEST(ValuesCliTest, ABindingAnFpnCannotTakeIsBadInput) {
  // The FPN's add needs ceil(height / 2) even: 481 is bad input, named with
  // the node, the dims as formulas and the nearest values the model takes
  // (483: 242 = 2 x 121, so not only multiples of 4); 480 is fine.
  const std::string model = Write(testing::FpnAddModel());
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim", "height=481", "--dim", "width=640"}),
                     "--dim height=481 makes the model contradict itself: Add 'fpn_add': dims 241 and 242 do not "
                     "broadcast; the dims are ");
  const CliRun bad = RunCliCaptured({"analyze", model, "--dim", "height=481", "--dim", "width=640"});
  EXPECT_NE(bad.err.find("the dims are floor((height-1)/2)+1 and 2*floor(floor((height-1)/2)/2)+2; the nearest "
                         "values of height the model takes are 480 and 483\n"),
            std::string::npos)
      << bad.err;
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--input-shape", "x=1x3x480x642"}),
                     "--input-shape x=1x3x480x642 makes the model contradict itself: Add 'fpn_add': dims 321 and 322");
  EXPECT_EQ(RunCliCaptured({"analyze", model, "--dim", "height=480", "--dim", "width=640"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"analyze", model, "--dim-default", "64"}).exit_code, kExitOk);
}

TEST(ValuesCliTest, ABindingIsNamedWhereTheClashingDimsHaveNoFormula) {
  // Two levels at height 485: the stride-4 add holds (122 = 2 x 61), the
  // stride-2 add does not (243 against 244), and its upsampled operand comes
  // after an add of two formulas: no formula. The dim at fault is found by
  // moving each bound one alone; width is not named.
  const std::string model = Write(testing::FpnAddModel(/*levels=*/2));
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim", "height=485", "--dim", "width=640"}),
                     "--dim height=485 makes the model contradict itself: Add 'fpn_add': dims 243 and 244 do not "
                     "broadcast; the nearest values of height the model takes are 480 and 487\n");
  EXPECT_EQ(RunCliCaptured({"analyze", model, "--dim", "height=487", "--dim", "width=640"}).exit_code, kExitOk);
}

// `fit`'s dim option for height under `max_peak` (JSON), on the FPN.
nlohmann::json FitHeight(const std::string& model, const std::string& max_peak) {
  const CliRun run = RunCliCaptured({"fit", model, "--device", "generic-cpu", "--dim", "width=640", "--dim", "height=8",
                                     "--fit-dim", "height", "--max-peak", max_peak, "--format", "json"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  if (run.exit_code != kExitOk) return nlohmann::json::object();
  const nlohmann::json report = nlohmann::json::parse(run.out);
  for (const nlohmann::json& option : report["options"]) {
    if (option["kind"] == "dim") return option;
  }
  return nlohmann::json::object();
}

int AnalyzeAtHeight(const std::string& model, int64_t height, const std::string& max_peak) {
  return RunCliCaptured({"analyze", model, "--dim", "width=640", "--dim", absl::StrCat("height=", height),
                         "--max-peak", max_peak})
      .exit_code;
}

TEST(ValuesCliTest, FitStepsOverValuesTheModelCannotTakeAndNamesThem) {
  // The FPN's add takes height 44 and 47, not 45 or 46: under 600,000 B
  // (47 needs 609,904) the option is 44 and says why 45 and 46 are not
  // offered; under 2,200,000 B the search walks past such holes to 171.
  const std::string model = Write(testing::FpnAddModel());
  const nlohmann::json tight = FitHeight(model, "600000");
  EXPECT_EQ(tight["largest_fitting"], 44) << tight.dump();
  EXPECT_EQ(tight["reason"].get<std::string>().rfind(
                "45 to 46 not offered: --dim height=46 makes the model contradict itself: Add 'fpn_add': dims 23 and "
                "24 do not broadcast",
                0),
            0)
      << tight.dump();
  EXPECT_EQ(tight["bindings_above"]["height"], 47);
  EXPECT_EQ(AnalyzeAtHeight(model, 44, "600000"), kExitOk);
  EXPECT_EQ(AnalyzeAtHeight(model, 45, "600000"), kExitBadInput);
  EXPECT_EQ(AnalyzeAtHeight(model, 47, "600000"), kExitNotWithinLimits);
  const nlohmann::json roomy = FitHeight(model, "2200000");
  EXPECT_EQ(roomy["largest_fitting"], 171) << roomy.dump();
  EXPECT_EQ(AnalyzeAtHeight(model, 171, "2200000"), kExitOk);
  EXPECT_EQ(AnalyzeAtHeight(model, 172, "2200000"), kExitNotWithinLimits);
}

TEST(ValuesCliTest, DebianWindowModelNamesItsSizeInputAndIsSizedWithIt) {
  // HannWindow expanded: Range(0, size) with the window size a graph input x (int32 scalar).
  const std::string model = "/usr/share/libonnx-testdata/data/node/test_hannwindow_expanded/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "Debian's onnx test models are not installed";
  nlohmann::json unknown = Json({model});
  EXPECT_GT(unknown["memory"]["unsized_tensors"], 0);
  bool named = false;
  for (const nlohmann::json& tensor : unknown["tensors"]) {
    if (!tensor.contains("unsized_reason")) continue;
    named = named || tensor["unsized_reason"].get<std::string>().find(
                         "computed from 'x', a graph input: bind it with --input-value x=...") != std::string::npos;
  }
  EXPECT_TRUE(named) << unknown["tensors"];
  nlohmann::json sized = Json({model, "--input-value", "x=10"});
  EXPECT_EQ(sized["memory"]["unsized_tensors"], 0);
}

}  // namespace
}  // namespace footprint
