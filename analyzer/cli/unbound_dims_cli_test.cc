// Input dims left unbound, seen as a new user first meets them: every report
// names them and the flags that bind them before any figure, prints no
// figure it does not know as 0 B, and gives sample figures where the
// formulas have too many cases.
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/cli/cli.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/lstm_models.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/value_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::CliRun;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::RunCliCaptured;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

// x [a], y [b] -> for i in 1..9: Concat(i x's, 10 - i y's) -> ReduceSum ->
// Sum -> + bias -> out; and Relu(x) -> xr, declared [6] (the model states a = 6).
// Each step's live bytes are i*a + (10 - i)*b: nine sums none of which
// dominates another, too many cases for one formula.
std::string ManyCasesModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"a"}).Input("y", kFloat, {"b"}).Initializer("bias", kFloat, {1});
  std::vector<std::string> sums;
  for (int i = 1; i <= 9; ++i) {
    std::vector<std::string> parts(i, "x");
    for (int j = i; j < 10; ++j) parts.push_back("y");
    const std::string joined = absl::StrCat("joined", i);
    testing::SetInt(builder.Node("Concat", parts, {joined}), "axis", 0);
    builder.Add("ReduceSum", {joined}, {absl::StrCat("sum", i)});
    sums.push_back(absl::StrCat("sum", i));
  }
  builder.Add("Sum", sums, {"total"}).Add("Add", {"total", "bias"}, {"out"}).Output("out");
  builder.Add("Relu", {"x"}, {"xr"}).Output("xr", kFloat, {6});
  return testing::WriteScratchFile(
      absl::StrCat(::testing::UnitTest::GetInstance()->current_test_info()->name(), ".onnx"), builder.Serialize());
}

CliRun Analyze(const std::string& model, const std::string& format) {
  CliRun run = RunCliCaptured({"analyze", model, "--format", format});
  EXPECT_NE(run.exit_code, kExitBadInput) << run.err;
  return run;
}

// No figure but the (known) folded weights reads "0 B": the rest sum unsized tensors.
void ExpectNoZeroBytes(const std::string& report) {
  std::smatch match;
  const std::regex zero("(^|[^0-9.,])0 B\\b");
  std::string rest = report;
  while (std::regex_search(rest, match, zero)) {
    const size_t line_start = rest.rfind('\n', match.position()) == std::string::npos ? 0 : rest.rfind('\n', match.position());
    const std::string line = rest.substr(line_start, rest.find('\n', match.position()) - line_start);
    EXPECT_NE(line.find("olded weights"), std::string::npos) << line << "\n" << report;
    rest = match.suffix();
  }
}

TEST(UnboundDimsCliTest, TextNamesTheDimsAndTheirBindingFirst) {
  const CliRun run = Analyze(ManyCasesModel(), "text");
  const std::string& out = run.out;
  const size_t unbound = out.find("\n  UNBOUND a (x axis 0; the model states 6), b (y axis 0): ");
  ASSERT_NE(unbound, std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), unbound) << "the dims are the report's second line\n" << out;
  EXPECT_NE(out.find("\n  bind    --dim a=6 --dim b=1  or  --dim-default 1  or  --sweep a=6,12,24,48\n"),
            std::string::npos)
      << out;
  EXPECT_LT(unbound, out.find("Memory"));
  EXPECT_NE(out.find("\n  arena                    >= 576 B  (lower bound: 576 bytes)  "), std::string::npos) << out;
  EXPECT_NE(out.find("  reuse savings             unknown  (the difference of two lower bounds)"), std::string::npos)
      << out;
  ExpectNoZeroBytes(out);
  // Too many cases for a formula: figures at samples, said to be samples.
  EXPECT_NE(out.find("(too many cases; see --sweep)"), std::string::npos) << out;
  EXPECT_NE(out.find("Samples (the figures at sample bindings of the unbound dims, not their range)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  a=1 b=1 "), std::string::npos) << out;
  EXPECT_NE(out.find("  a=6 b=1 "), std::string::npos) << out;
}

TEST(UnboundDimsCliTest, MarkdownNamesTheDimsAndTheirBindingFirst) {
  const std::string out = Analyze(ManyCasesModel(), "md").out;
  const size_t unbound = out.find("> **Unbound input dims:** a (x axis 0; the model states 6), b (y axis 0).");
  ASSERT_NE(unbound, std::string::npos) << out;
  EXPECT_NE(out.find("`--dim a=6 --dim b=1` or `--dim-default 1` or `--sweep a=6,12,24,48`"), std::string::npos)
      << out;
  EXPECT_LT(unbound, out.find("| figure |"));
  EXPECT_NE(out.find("| arena | &gt;= 576 B | &gt;= 576 |"), std::string::npos) << out;
  ExpectNoZeroBytes(out);
  EXPECT_NE(out.find("Samples: the figures at sample bindings"), std::string::npos) << out;
}

TEST(UnboundDimsCliTest, HtmlNamesTheDimsAndTheirBindingFirst) {
  const std::string html = Analyze(ManyCasesModel(), "html").out;
  const std::string out = html.substr(0, html.find("<svg"));  // Figures, not the charts' axes.
  const size_t unbound = out.find("<b>Unbound input dims:</b> a (x axis 0; the model states 6), b (y axis 0).");
  ASSERT_NE(unbound, std::string::npos) << out;
  EXPECT_NE(out.find("<code>--dim a=6 --dim b=1</code> or <code>--dim-default 1</code>"), std::string::npos);
  EXPECT_LT(unbound, out.find("class=\"figures\""));
  EXPECT_NE(out.find("<div class=\"label\">Arena</div><div class=\"value\">&gt;= 576 B</div>"), std::string::npos);
  ExpectNoZeroBytes(out);
  EXPECT_NE(out.find("<h3>Samples</h3>"), std::string::npos);
}

TEST(UnboundDimsCliTest, JsonListsTheDimsWithTheInputsAndAxesThatUseThem) {
  const CliRun run = Analyze(ManyCasesModel(), "json");
  const nlohmann::json json = nlohmann::json::parse(run.out);
  const nlohmann::json& dims = json["unbound_dims"];
  ASSERT_EQ(dims.size(), 2u) << dims;
  EXPECT_EQ(dims[0]["name"], "a");
  EXPECT_EQ(dims[0]["uses"], nlohmann::json::parse(R"([{"input": "x", "axis": 0}])"));
  EXPECT_EQ(dims[0]["example"], 6);
  EXPECT_TRUE(dims[0]["stated_by_model"]);
  EXPECT_EQ(dims[1]["name"], "b");
  EXPECT_FALSE(dims[1]["stated_by_model"]);
  EXPECT_EQ(json["binding_examples"][0], "--dim a=6 --dim b=1");
  // Figures stay numbers, flagged incomplete.
  EXPECT_FALSE(json["memory"]["complete"]);
  EXPECT_EQ(json["memory"]["arena_bytes"], 576);  // The sized part: a lower bound.
  ASSERT_EQ(json["samples"].size(), 2u);
  EXPECT_EQ(json["samples"][1]["dims"], nlohmann::json::parse(R"({"a": 6, "b": 1})"));
  EXPECT_GT(json["samples"][1]["arena_bytes"], json["samples"][0]["arena_bytes"]);
  EXPECT_EQ(json["samples"][0]["unsized_tensors"], 0);
}

TEST(UnboundDimsCliTest, BoundDimsAddNothing) {
  const std::string model = ManyCasesModel();
  const CliRun run = RunCliCaptured({"analyze", model, "--dim", "a=2", "--dim", "b=3", "--format", "json"});
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_FALSE(json.contains("unbound_dims"));
  EXPECT_FALSE(json.contains("samples"));
  EXPECT_TRUE(json["memory"]["complete"]);
  const CliRun text = RunCliCaptured({"analyze", model, "--dim-default", "2"});
  EXPECT_EQ(text.out.find("UNBOUND"), std::string::npos) << text.out;
}

// The voice-activity model with its batch bound: every tensor sized with or
// without sr too (the slice whose length is sr's value at the state's extent); bounds counted.
TEST(UnboundDimsCliTest, UndecidedIfsReportTheirBounds) {
  const std::string model =
      testing::WriteScratchFile("voice_activity.onnx", testing::VoiceActivityModel().Serialize());
  const nlohmann::json at_8k = testing::AnalyzeJson(model, {"--dim", "batch=1", "--input-value", "sr=8000"});
  EXPECT_EQ(at_8k["memory"]["unsized_tensors"], 0);
  EXPECT_FALSE(at_8k["memory"].contains("bound_tensors"));
  const nlohmann::json at_16k = testing::AnalyzeJson(model, {"--dim", "batch=1", "--input-value", "sr=16000"});
  EXPECT_EQ(at_16k["memory"]["unsized_tensors"], 0);
  const nlohmann::json unknown = testing::AnalyzeJson(model, {"--dim", "batch=1"});
  EXPECT_EQ(unknown["memory"]["unsized_tensors"], 0);  // The slice by sr's value is bounded by the state's extent.
  EXPECT_GE(unknown["memory"]["bound_tensors"], 2);    // context and context_out.
  bool context_bound = false;
  for (const nlohmann::json& tensor : unknown["tensors"]) {
    context_bound = context_bound || (tensor["name"] == "context_out" && tensor["bound"] == "max_over_branches");
  }
  EXPECT_TRUE(context_bound) << unknown["tensors"];
  const CliRun text = RunCliCaptured({"analyze", model, "--dim", "batch=1"});
  EXPECT_NE(text.out.find("  if      state_is_empty_16k: else; state_is_empty_8k: undecided (--input-value sr=...); "
                          "flatten_8k: undecided (--input-value sr=...); pick_rate: undecided (--input-value sr=...)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  bound tensors "), std::string::npos) << text.out;
}

// Silero VAD's structure (an LSTMCell inside Ifs on shapes, inside an If on
// sr): at 512 samples the 8 kHz branch cannot run, so without sr the report
// counts the 16 kHz branch alone, with every tensor sized and the figures
// sr=16000 gives; the warning says why.
TEST(UnboundDimsCliTest, ABranchThatCannotRunIsNotCounted) {
  const std::string model = testing::WriteScratchFile("silero_lstm.onnx", testing::SileroLstmModel().Serialize());
  const std::vector<std::string> dims = {"--dim", "batch=1", "--dim", "samples=512"};
  std::vector<std::string> with_sr = dims;
  with_sr.insert(with_sr.end(), {"--input-value", "sr=16000"});
  const nlohmann::json known = testing::AnalyzeJson(model, with_sr);
  const nlohmann::json unknown = testing::AnalyzeJson(model, dims);
  EXPECT_EQ(known["memory"]["unsized_tensors"], 0);
  EXPECT_EQ(unknown["memory"]["unsized_tensors"], 0);
  EXPECT_FALSE(unknown["memory"].contains("bound_tensors"));
  EXPECT_EQ(unknown["memory"]["peak_bytes"], known["memory"]["peak_bytes"]);
  EXPECT_EQ(unknown["memory"]["arena_bytes"], known["memory"]["arena_bytes"]);
  bool ruled_out = false;
  for (const nlohmann::json& branch : unknown["if_branches"]) {
    ruled_out = ruled_out || (branch["node"] == "If_0" && branch["branch"] == "then" &&
                              branch["ruled_out"] == "else: LSTM 'n_rnn_LSTM': ONNX's check: first input tensor "
                                                     "must have rank 3");
  }
  EXPECT_TRUE(ruled_out) << unknown["if_branches"];
  // At 256 samples both branches run: the If stays undecided, still all sized.
  const nlohmann::json short_input = testing::AnalyzeJson(model, {"--dim", "batch=1", "--dim", "samples=256"});
  EXPECT_EQ(short_input["memory"]["unsized_tensors"], 0);
}

TEST(UnboundDimsCliTest, AFormulaDimIsBoundThroughItsSymbolAsTheHintSays) {
  // x [past + 1, 100] -> Relu: the report names `past`; the hint it prints,
  // the sweep and fit's "how" all bind it and size every tensor.
  ModelBuilder builder;
  builder.Input("x", kFloat, {"past + 1", 100}).Add("Relu", {"x"}, {"y"}).Output("y");
  const std::string path = testing::WriteScratchFile("formula_dim.onnx", builder.Serialize());
  const CliRun report = RunCliCaptured({"analyze", path});
  ASSERT_NE(report.out.find("--dim past=1"), std::string::npos) << report.out;
  const CliRun bound = RunCliCaptured({"analyze", path, "--dim", "past=1", "--format", "json"});
  ASSERT_EQ(bound.exit_code, kExitOk) << bound.err;
  const nlohmann::json json = nlohmann::json::parse(bound.out);
  EXPECT_EQ(json["memory"]["unsized_tensors"], 0);
  EXPECT_EQ(json["memory"]["naive_bytes"], 2 * 832);  // Two tensors of (1 + 1) x 100 floats, 64-byte aligned.
  EXPECT_EQ(RunCliCaptured({"analyze", path, "--sweep", "past=1,2"}).exit_code, kExitOk);
  const CliRun fit = RunCliCaptured({"fit", path, "--device", "generic-cpu", "--max-peak", "16KiB", "--format", "json"});
  ASSERT_EQ(fit.exit_code, kExitOk) << fit.err;
  const nlohmann::json options = nlohmann::json::parse(fit.out)["options"];
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options[0]["dim"], "past");
  // 2 x (past + 1) x 400 bytes <= 16 KiB: past + 1 <= 20.
  EXPECT_EQ(options[0]["largest_fitting"], 19);
  EXPECT_EQ(options[0]["change"], "--dim past=19");
}

TEST(UnboundDimsCliTest, ATensorWithNeitherSizeNorFormulaLeavesTheUpperBoundUnknown) {
  // x [N, 100] -> Relu -> h; Reshape(h, s) with s an input: y has no formula,
  // so naive and "peak <=" cannot claim every tensor; the lower bounds stand,
  // and the samples are given.
  ModelBuilder builder;
  builder.Input("x", kFloat, {"N", 100}).Input("s", onnx::TensorProto::INT64, {2});
  builder.Add("Relu", {"x"}, {"h"}).Add("Reshape", {"h", "s"}, {"y"}).Output("y");
  const std::string path = testing::WriteScratchFile("no_formula.onnx", builder.Serialize());
  const CliRun run = RunCliCaptured({"analyze", path, "--format", "json"});
  ASSERT_NE(run.exit_code, kExitBadInput) << run.err;
  const nlohmann::json memory = nlohmann::json::parse(run.out)["memory"];
  EXPECT_TRUE(memory["naive_expr"].is_null()) << memory.dump(1);
  EXPECT_TRUE(memory["peak_upper_bound_expr"].is_null());
  EXPECT_FALSE(memory["lower_bound_expr"].is_null());
  EXPECT_EQ(memory["tensors_without_formula"], 1);
  const CliRun text = RunCliCaptured({"analyze", path});
  EXPECT_NE(text.out.find("peak <=              unknown (1 tensors have neither a size nor a formula)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\nSamples"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace footprint
