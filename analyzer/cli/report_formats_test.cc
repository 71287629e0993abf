// Every report format as the command line writes it: Markdown, HTML, the
// change against a baseline report, and the streamed JSON.
#include <string>
#include <vector>

#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AddReluModel;
using ::footprint::testing::AnalyzeJson;
using ::footprint::testing::CliRun;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::Occurrences;
using ::footprint::testing::ReadWholeFile;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::ScratchDir;
using ::footprint::testing::UnboundBatchModel;
using ::footprint::testing::WriteScratchFile;

TEST(MarkdownTest, HasTheFiguresTableAndTheBaselineChange) {
  const std::string old_model = WriteScratchFile("old.onnx", AddReluModel(16));
  const std::string new_model = WriteScratchFile("new.onnx", AddReluModel(64));
  const std::string old_report = ScratchDir() + "/old.json";
  ASSERT_EQ(RunCliCaptured({"analyze", old_model, "--format", "json", "--output", old_report}).exit_code, kExitOk);
  const CliRun run = RunCliCaptured({"analyze", new_model, "--format", "md", "--baseline-report", old_report});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("| figure | size | bytes | change |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("|---|---:|---:|---:|---|"), std::string::npos) << run.out;
  for (const char* row : {"| **peak** |", "| weights |", "| arena |", "| lower bound |", "| naive (no reuse) |",
                          "| unsized tensors |"}) {
    EXPECT_NE(run.out.find(row), std::string::npos) << row;
  }
  EXPECT_NE(run.out.find("| weights | 256 B | 256 | +192 B (+300.0%) |"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Top 3 arena tensors"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("`a<b>&\"c\"`"), std::string::npos) << "names stay literal in code spans";
}

TEST(BaselineReportTest, TextAndJsonCarryTheChange) {
  const std::string old_model = WriteScratchFile("base16.onnx", AddReluModel(16));
  const std::string new_model = WriteScratchFile("base64.onnx", AddReluModel(64));
  const std::string old_report = ScratchDir() + "/base16.json";
  ASSERT_EQ(RunCliCaptured({"analyze", old_model, "--format", "json", "--output", old_report}).exit_code, kExitOk);
  const CliRun text = RunCliCaptured({"analyze", new_model, "--baseline-report", old_report});
  ASSERT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("Change against " + old_report), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("+192 B (+300.0%)"), std::string::npos) << text.out;
  const CliRun json_run = RunCliCaptured({"analyze", new_model, "--baseline-report", old_report, "--format", "json"});
  ASSERT_EQ(json_run.exit_code, kExitOk) << json_run.err;
  const nlohmann::json json = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(json["baseline"]["old"], old_report);
  EXPECT_EQ(json["baseline"]["figures"][0]["figure"], "weights_bytes");
  EXPECT_EQ(json["baseline"]["figures"][0]["delta"], 192);
  EXPECT_TRUE(json["baseline"]["threshold"].is_null()) << "analyze shows the change; diff gates it";
  const CliRun html = RunCliCaptured({"analyze", new_model, "--baseline-report", old_report, "--format", "html"});
  EXPECT_NE(html.out.find("+192 B (+300.0%) vs baseline"), std::string::npos);
}

TEST(MarkdownTest, BudgetsAreATable) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "md", "--max-weights", "1"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  EXPECT_NE(run.out.find("| --max-weights | 1 B | 64 B | ❌"), std::string::npos) << run.out;
}

TEST(HtmlTest, OneRectPerPlannedTensorAndNoNetwork) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  const std::string page = ScratchDir() + "/page.html";
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "html", "--output", page});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const std::string html = ReadWholeFile(page);
  const nlohmann::json json = AnalyzeJson(model);
  int64_t planned = 0;
  for (const nlohmann::json& tensor : json["tensors"]) planned += tensor["offset"].is_null() ? 0 : 1;
  ASSERT_EQ(planned, 3);
  EXPECT_EQ(Occurrences(html, "<rect"), planned);
  EXPECT_EQ(Occurrences(html, "http://"), 0);
  EXPECT_EQ(Occurrences(html, "https://"), 0);
  EXPECT_EQ(Occurrences(html, "<script src"), 0);
  EXPECT_EQ(Occurrences(html, "<link"), 0);
  EXPECT_NE(html.find("a&lt;b&gt;&amp;&quot;c&quot;"), std::string::npos) << "names are escaped";
  EXPECT_EQ(html.find("a<b>"), std::string::npos);
  EXPECT_NE(html.find("<title>x\nfloat32 1x16\n64 bytes (aligned 64)\nlive steps [0, 0]"), std::string::npos);
  EXPECT_NE(html.find("Memory tier: ram"), std::string::npos);  // generic-cpu's one tier.
  EXPECT_NE(html.find("Live bytes per step"), std::string::npos);
  EXPECT_NE(html.find("class=\"sortable\""), std::string::npos);
}

TEST(HtmlTest, RealModelHasOneRectPerPlannedTensor) {
  const std::string model = std::string(FOOTPRINT_TESTDATA_DIR) + "/mnist.onnx";
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "html"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json json = AnalyzeJson(model);
  int64_t planned = 0;
  for (const nlohmann::json& tensor : json["tensors"]) planned += tensor["offset"].is_null() ? 0 : 1;
  EXPECT_EQ(planned, 12);  // 13 arena tensors, less the Reshape of a weight that folding evaluates at load.
  EXPECT_EQ(Occurrences(run.out, "<rect"), planned);
  EXPECT_EQ(Occurrences(run.out, "http://") + Occurrences(run.out, "https://"), 0);
}

TEST(HtmlTest, UnsizedTensorsAreListedButNotDrawn) {
  const std::string model = WriteScratchFile("unsized.onnx", UnboundBatchModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "html"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(Occurrences(run.out, "<rect"), 0);
  EXPECT_NE(run.out.find(">unsized</td>"), std::string::npos);
  EXPECT_NE(run.out.find("Incomplete"), std::string::npos);
}

// The JSON report is streamed (json_writer.h), yet must stay byte for byte
// what nlohmann's dump(2) prints for the same value: parsing it and dumping
// it again changes nothing, for every shape of report the CLI prints.
TEST(JsonReportTest, StreamedTextIsNlohmannsOwnLayout) {
  ModelBuilder builder;
  builder.Opset("ai.onnx", 18)  // The default domain twice: one "ai.onnx" key.
      .Input("x \"quoted\" \\ tab\t", onnx::TensorProto::FLOAT, {std::string("batch"), 8})
      .Initializer("w\xc3\xa9ight\x01", onnx::TensorProto::FLOAT, {8})
      .Add("Add", {"x \"quoted\" \\ tab\t", "w\xc3\xa9ight\x01"}, {std::string("bad\xff\xfe", 5)}, "add")
      .Add("Relu", {std::string("bad\xff\xfe", 5)}, {"y"}, "relu")
      .Output("y");
  const std::string model = WriteScratchFile("odd_names.onnx", builder.Serialize());
  const std::string small = WriteScratchFile("small.onnx", AddReluModel());
  const std::string old_report = ScratchDir() + "/odd_old.json";
  ASSERT_EQ(RunCliCaptured({"analyze", model, "--dim", "batch=2", "--format", "json", "--output", old_report}).exit_code,
            kExitOk);
  const std::vector<std::vector<std::string>> runs = {
      {"analyze", model, "--format", "json"},
      {"analyze", model, "--format", "json", "--sweep", "batch=1,2", "--device", "stm32h743"},
      {"analyze", model, "--format", "json", "--dim", "batch=4", "--baseline-report", old_report},
      {"analyze", model, small, ScratchDir() + "/absent.onnx", "--format", "json", "--dim-default", "1"},
  };
  for (const std::vector<std::string>& args : runs) {
    const CliRun run = RunCliCaptured(args);
    ASSERT_FALSE(run.out.empty()) << args.back() << ": " << run.err;
    const std::string dumped =
        nlohmann::ordered_json::parse(run.out).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    EXPECT_EQ(run.out, dumped + "\n") << "args ending " << args.back();
  }
  const std::string with_output = ScratchDir() + "/odd_new.json";
  ASSERT_EQ(RunCliCaptured({"analyze", model, "--format", "json", "--output", with_output}).exit_code, kExitOk);
  const std::string written = ReadWholeFile(with_output);
  EXPECT_EQ(written, nlohmann::ordered_json::parse(written).dump(2, ' ', false,
                                                                 nlohmann::ordered_json::error_handler_t::replace) +
                         "\n");
  EXPECT_EQ(Occurrences(written, "\"ai.onnx\""), 1) << written.substr(0, 300);
}

}  // namespace
}  // namespace footprint
