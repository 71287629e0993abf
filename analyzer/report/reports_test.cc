// SIZE parsing, budgets, diff thresholds, the Markdown and HTML reports and
// several models per run: the CI-facing side of the command line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/cli/batch.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/cli/cli.h"
#include "analyzer/cli/progress.h"
#include "analyzer/cli/size_flags.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/format.h"
#include "analyzer/report/html.h"
#include "analyzer/report/markdown.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

using ::footprint::testing::ModelBuilder;

// ---------------------------------------------------------------- SIZE ----

struct SizeCase {
  std::string text;      // What the user typed.
  int64_t bytes = 0;     // What it means.
};

TEST(ByteSizeTest, ParsesEveryUnitExactly) {
  const std::vector<SizeCase> cases = {
      {.text = "0", .bytes = 0},
      {.text = "4096", .bytes = 4096},
      {.text = "4096B", .bytes = 4096},
      {.text = "512KiB", .bytes = 512 * 1024},
      {.text = "512 KiB", .bytes = 512 * 1024},
      {.text = "1.5MiB", .bytes = 1572864},
      {.text = "2GiB", .bytes = 2147483648LL},
      {.text = "1TiB", .bytes = 1099511627776LL},
      {.text = "8K", .bytes = 8192},
      {.text = "8k", .bytes = 8192},
      {.text = "3M", .bytes = 3 * 1048576},
      {.text = "1G", .bytes = 1073741824},
      {.text = "4Ki", .bytes = 4096},
      {.text = "100KB", .bytes = 100000},
      {.text = "100kB", .bytes = 100000},
      {.text = "100MB", .bytes = 100000000},
      {.text = "2GB", .bytes = 2000000000},
      {.text = "1.5GB", .bytes = 1500000000},
      {.text = "1TB", .bytes = 1000000000000LL},
      {.text = "1.1KiB", .bytes = 1126},  // 1126.4 rounded down.
      {.text = "0.5K", .bytes = 512},
      {.text = "7.0", .bytes = 7},
  };
  for (const SizeCase& size : cases) {
    SCOPED_TRACE(size.text);
    absl::StatusOr<int64_t> bytes = ParseByteSize(size.text);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, size.bytes);
  }
}

TEST(ByteSizeTest, RefusesMalformedSizes) {
  for (const std::string text :
       {"", " ", "-1", "-1KiB", "KiB", "1.5", "0.5B", "1.", ".5MiB", "12XB", "1 2", "1  MiB", "1kb", "1Mb", "1MiBB",
        "1e9", "0x10", "1,024", "1KiB ", " 1KiB", "8EiB", "9223372036854775808", "9999999999999999999999",
        "9000000TiB", "1.0000000001GiB", "nan", "inf", "5%"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<int64_t> bytes = ParseByteSize(text);
    ASSERT_FALSE(bytes.ok()) << *bytes;
    EXPECT_NE(bytes.status().message().find("is not a size"), std::string::npos) << bytes.status();
  }
  EXPECT_NE(ParseByteSize("1kb").status().message().find("bits"), std::string::npos);
}

TEST(ByteSizeTest, LargestSizeFitsInt64) {
  EXPECT_EQ(ParseByteSize("9223372036854775807").value(), INT64_MAX);
  EXPECT_EQ(ParseByteSize("8388607TiB").value(), 8388607LL * 1099511627776LL);
}

TEST(ByteSizeTest, ThresholdsArePercentagesOrSizes) {
  EXPECT_EQ(ParseGrowthThreshold("5%").value().percent, 5.0);
  EXPECT_EQ(ParseGrowthThreshold("0.5%").value().percent, 0.5);
  EXPECT_EQ(ParseGrowthThreshold("0%").value().percent, 0.0);
  EXPECT_EQ(ParseGrowthThreshold("1MiB").value().bytes, 1048576);
  EXPECT_EQ(ParseGrowthThreshold("100").value().bytes, 100);
  for (const std::string text : {"", "%", "-5%", "five%", "5%%", "inf%", "nan%", "1XB", "-1MiB"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(ParseGrowthThreshold(text).ok());
  }
}

// ------------------------------------------------------------- budgets ----

TEST(BudgetsTest, EqualToTheLimitIsWithinIt) {
  const MemoryFigures memory{.weights_bytes = 100, .arena_bytes = 200, .peak_bytes = 300};
  const std::vector<BudgetCheck> checks =
      CheckBudgets(memory, {.max_peak_bytes = 300, .max_arena_bytes = 199, .max_weights_bytes = 1000});
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].figure, "peak");
  EXPECT_TRUE(checks[0].ok);
  EXPECT_EQ(checks[1].figure, "arena");
  EXPECT_FALSE(checks[1].ok);
  EXPECT_EQ(checks[1].actual_bytes, 200);
  EXPECT_EQ(checks[1].limit_bytes, 199);
  EXPECT_TRUE(checks[2].ok);
  EXPECT_FALSE(AllWithinBudget(checks));
  EXPECT_TRUE(CheckBudgets(memory, {}).empty());
  EXPECT_NE(BudgetViolation(checks[1]).find("--max-arena"), std::string::npos);
}

// ---------------------------------------------------------------- diff ----

// Only the peak (and the unsized count) vary, so each test gates one figure.
ReportFigures Figures(int64_t peak, int64_t unsized = 0) {
  return ReportFigures{.source = "r.json", .model_path = "m.onnx", .weights_bytes = 1000, .arena_bytes = 4000,
                       .lower_bound_bytes = 3000, .naive_bytes = 9000, .peak_bytes = peak,
                       .unsized_tensors = unsized};
}

const FigureDelta& Find(const ReportDiff& diff, const std::string& key) {
  for (const FigureDelta& delta : diff.figures) {
    if (delta.key == key) return delta;
  }
  static const FigureDelta kMissing;
  ADD_FAILURE() << key;
  return kMissing;
}

TEST(DiffTest, PercentThresholdFlagsGrowthPastIt) {
  const GrowthThreshold five{.percent = 5};
  EXPECT_FALSE(DiffFigures(Figures(100000), Figures(105000), five).exceeded);  // +5.0%: at the threshold.
  const ReportDiff grew = DiffFigures(Figures(100000), Figures(106000), five);
  EXPECT_TRUE(grew.exceeded);
  EXPECT_TRUE(Find(grew, "peak_bytes").exceeded);
  EXPECT_EQ(Find(grew, "peak_bytes").delta, 6000);
  EXPECT_FALSE(Find(grew, "weights_bytes").exceeded);  // Unchanged.
  ASSERT_EQ(grew.figures.size(), 6u);
}

TEST(DiffTest, SizeThresholdFlagsGrowthPastIt) {
  const GrowthThreshold one_kib{.bytes = 1024};
  EXPECT_FALSE(DiffFigures(Figures(100000), Figures(101024), one_kib).exceeded);
  EXPECT_TRUE(DiffFigures(Figures(100000), Figures(101025), one_kib).exceeded);
}

TEST(DiffTest, ShrinkingPasses) {
  for (const GrowthThreshold& threshold : {GrowthThreshold{.percent = 0}, GrowthThreshold{.bytes = 0}}) {
    const ReportDiff diff = DiffFigures(Figures(100000), Figures(50000), threshold);
    EXPECT_FALSE(diff.exceeded);
    EXPECT_EQ(Find(diff, "peak_bytes").delta, -50000);
    EXPECT_DOUBLE_EQ(*Find(diff, "peak_bytes").delta_percent, -50.0);
  }
}

TEST(DiffTest, GrowthFromZeroAndNewUnsizedTensorsAreFlagged) {
  ReportFigures old_figures = Figures(100000);
  old_figures.weights_bytes = 0;
  const ReportDiff from_zero = DiffFigures(old_figures, Figures(100000), GrowthThreshold{.percent = 50});
  EXPECT_TRUE(Find(from_zero, "weights_bytes").exceeded);
  EXPECT_FALSE(Find(from_zero, "weights_bytes").delta_percent.has_value());
  const ReportDiff unsized = DiffFigures(Figures(100000), Figures(100000, 2), GrowthThreshold{.bytes = 1 << 20});
  EXPECT_TRUE(Find(unsized, "unsized_tensors").exceeded);
  EXPECT_TRUE(unsized.exceeded);
}

TEST(DiffTest, NoThresholdOnlyReports) {
  const ReportDiff diff = DiffFigures(Figures(1000), Figures(1000000), std::nullopt);
  EXPECT_FALSE(diff.exceeded);
  EXPECT_EQ(Find(diff, "peak_bytes").delta, 999000);
}

TEST(DiffTest, ReadsOnlyOurSchema) {
  EXPECT_FALSE(FiguresFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(FiguresFromJson(nlohmann::json{{"memory", nlohmann::json::object()}}).ok());
  nlohmann::json report = {{"schema_version", 2}, {"memory", nlohmann::json::object()}};
  EXPECT_NE(FiguresFromJson(report).status().message().find("schema_version 2"), std::string::npos);
  report["schema_version"] = 1;
  report["memory"] = {{"weights_bytes", 1}, {"arena_bytes", 2}, {"lower_bound_bytes", 2}, {"naive_bytes", 3},
                      {"peak_bytes", 3}, {"unsized_tensors", 0}};
  EXPECT_TRUE(FiguresFromJson(report).ok());
  report["memory"]["peak_bytes"] = "3";
  EXPECT_NE(FiguresFromJson(report).status().message().find("peak_bytes"), std::string::npos);
  report["memory"]["peak_bytes"] = -3;
  EXPECT_FALSE(FiguresFromJson(report).ok());
}

// ---------------------------------------------------------- the CLI -------

using ::footprint::testing::CliRun;
using ::footprint::testing::RunCliCaptured;

std::string TempDir() {
  const std::filesystem::path dir = std::filesystem::path(footprint::testing::ScratchDir()) / "reports_test";
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::filesystem::path path = std::filesystem::path(TempDir()) / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

// x -> Add(w) -> a -> Relu -> y, with a tensor name that needs escaping.
std::string SmallModel(int64_t width = 16) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, width})
      .Initializer("w", onnx::TensorProto::FLOAT, {width})
      .Add("Add", {"x", "w"}, {"a<b>&\"c\""}, "add")
      .Add("Relu", {"a<b>&\"c\""}, {"y"}, "relu")
      .Output("y");
  return builder.Serialize();
}

// A model with a symbolic dim left unbound: its figures are incomplete.
std::string UnsizedModel() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 8}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  return builder.Serialize();
}

int64_t Count(const std::string& haystack, const std::string& needle) {
  int64_t count = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++count;
  return count;
}

nlohmann::json AnalyzeJson(const std::string& model) {
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "json", "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  return nlohmann::json::parse(run.out);
}

void ExpectBadInput(const CliRun& run, const std::string& must_contain) {
  EXPECT_EQ(run.exit_code, kExitBadInput) << run.out << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find(must_contain), std::string::npos) << run.err;
  EXPECT_EQ(Count(run.err, "\n"), 1) << run.err;
}

TEST(BudgetCliTest, WithinBudgetsIsExitZero) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  const int64_t peak = AnalyzeJson(model)["memory"]["peak_bytes"];
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", std::to_string(peak), "--max-arena=1MiB",
                          "--max-weights", "64B"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  EXPECT_NE(run.out.find("Budgets"), std::string::npos);
}

TEST(BudgetCliTest, EachExceededBudgetIsOneLineAndExitOne) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  const nlohmann::json figures = AnalyzeJson(model)["memory"];
  const int64_t peak = figures["peak_bytes"];
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", std::to_string(peak - 1), "--max-arena", "1",
                          "--max-weights", "1MiB"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  EXPECT_NE(run.out.find("peak"), std::string::npos) << "the report is still printed";
  EXPECT_EQ(Count(run.err, "\n"), 2) << run.err;
  EXPECT_NE(run.err.find("--max-peak"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--max-arena"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("--max-weights"), std::string::npos) << run.err;
}

TEST(BudgetCliTest, BudgetsAppearInJson) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "json", "--max-weights", "63", "--max-peak", "1GiB"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  const nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["budgets"].size(), 2u);
  EXPECT_EQ(json["budgets"][0], (nlohmann::json{{"figure", "peak"}, {"limit_bytes", 1073741824},
                                                {"actual_bytes", json["memory"]["peak_bytes"]}, {"ok", true}}));
  EXPECT_EQ(json["budgets"][1], (nlohmann::json{{"figure", "weights"}, {"limit_bytes", 63}, {"actual_bytes", 64},
                                                {"ok", false}}));
  EXPECT_TRUE(AnalyzeJson(model)["budgets"].empty());
}

TEST(BudgetCliTest, IncompleteFiguresAreSaidWithTheBudget) {
  const std::string model = WriteFile("unsized.onnx", UnsizedModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", "1MiB"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_NE(run.err.find("incomplete"), std::string::npos) << run.err;
}

TEST(BudgetCliTest, MalformedSizeIsExitTwo) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  for (const std::string flag : {"--max-peak", "--max-arena", "--max-weights"}) {
    SCOPED_TRACE(flag);
    ExpectBadInput(RunCliCaptured({"analyze", model, flag, "12XB"}), flag);
    ExpectBadInput(RunCliCaptured({"analyze", model, flag, "-5"}), flag);
    ExpectBadInput(RunCliCaptured({"analyze", model, flag + "="}), flag);
    ExpectBadInput(RunCliCaptured({"analyze", model, flag}), flag);
  }
}

TEST(AnalyzeCliTest, BadValuesOfNewFlagsAreExitTwo) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  ExpectBadInput(RunCliCaptured({"analyze", model, "--format", "pdf"}), "--format");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--jobs", "0"}), "--jobs");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--jobs", "two"}), "--jobs");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--jobs", "1000"}), "--jobs");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--jobs"}), "--jobs");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--output="}), "--output");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--format", "html", "--output", TempDir() + "/no/such/dir/r.html"}),
                 "r.html");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--baseline-report="}), "--baseline-report");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--baseline-report", TempDir() + "/missing.json"}), "missing.json");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--baseline-report", WriteFile("broken.json", "{\"schema")}), "broken.json");
  ExpectBadInput(RunCliCaptured({"analyze", model, "--baseline-report",
                      WriteFile("v9.json", R"({"schema_version": 9, "memory": {}})")}),
                 "schema_version 9");
  ExpectBadInput(RunCliCaptured({"analyze", model, model, "--baseline-report", WriteFile("any.json", "{}")}),
                 "--baseline-report");
}

TEST(AnalyzeCliTest, HelpNamesEveryFlag) {
  const CliRun run = RunCliCaptured({"analyze", "--help"});
  EXPECT_EQ(run.exit_code, kExitOk);
  for (const char* flag : {"--format", "md", "html", "--max-peak", "--max-arena", "--max-weights", "--baseline-report",
                           "--jobs", "KiB", "GB"}) {
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(RunCliCaptured({"--help"}).out.find("diff"), std::string::npos);
}

// -------------------------------------------------------- Markdown --------

TEST(MarkdownTest, HasTheFiguresTableAndTheBaselineChange) {
  const std::string old_model = WriteFile("old.onnx", SmallModel(16));
  const std::string new_model = WriteFile("new.onnx", SmallModel(64));
  const std::string old_report = TempDir() + "/old.json";
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
  const std::string old_model = WriteFile("base16.onnx", SmallModel(16));
  const std::string new_model = WriteFile("base64.onnx", SmallModel(64));
  const std::string old_report = TempDir() + "/base16.json";
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
  const std::string model = WriteFile("small.onnx", SmallModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "md", "--max-weights", "1"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  EXPECT_NE(run.out.find("| --max-weights | 1 B | 64 B | ❌"), std::string::npos) << run.out;
}

// ------------------------------------------------------------ HTML --------

TEST(HtmlTest, OneRectPerPlannedTensorAndNoNetwork) {
  const std::string model = WriteFile("small.onnx", SmallModel());
  const std::string page = TempDir() + "/page.html";
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "html", "--output", page});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const std::string html = ReadFile(page);
  const nlohmann::json json = AnalyzeJson(model);
  int64_t planned = 0;
  for (const nlohmann::json& tensor : json["tensors"]) planned += tensor["offset"].is_null() ? 0 : 1;
  ASSERT_EQ(planned, 3);
  EXPECT_EQ(Count(html, "<rect"), planned);
  EXPECT_EQ(Count(html, "http://"), 0);
  EXPECT_EQ(Count(html, "https://"), 0);
  EXPECT_EQ(Count(html, "<script src"), 0);
  EXPECT_EQ(Count(html, "<link"), 0);
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
  EXPECT_EQ(planned, 13);
  EXPECT_EQ(Count(run.out, "<rect"), planned);
  EXPECT_EQ(Count(run.out, "http://") + Count(run.out, "https://"), 0);
}

TEST(HtmlTest, UnsizedTensorsAreListedButNotDrawn) {
  const std::string model = WriteFile("unsized.onnx", UnsizedModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "html"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(Count(run.out, "<rect"), 0);
  EXPECT_NE(run.out.find(">unsized</td>"), std::string::npos);
  EXPECT_NE(run.out.find("Incomplete"), std::string::npos);
}

TEST(HtmlTest, TiersOfTodayIsTheOneArena) {
  Analysis analysis;
  analysis.memory.arena_bytes = 128;
  analysis.memory.lower_bound_bytes = 128;
  analysis.tensors = {TensorRecord{.name = "a", .bytes = 64, .aligned_bytes = 64, .offset = 0},
                      TensorRecord{.name = "b", .bytes = std::nullopt}};
  const std::vector<TierView> tiers = TiersOf(analysis);
  ASSERT_EQ(tiers.size(), 1u);
  EXPECT_EQ(tiers[0].name, "arena");
  EXPECT_EQ(tiers[0].size_bytes, 128);
  ASSERT_EQ(tiers[0].tensors.size(), 1u);
  EXPECT_EQ(tiers[0].tensors[0]->name, "a");
}

// ------------------------------------------------------------ diff CLI ----

struct DiffFiles {
  std::string small;  // Report of the 16-wide model.
  std::string large;  // Report of the 64-wide model: every byte figure grew.
};

DiffFiles WriteDiffReports() {
  DiffFiles files{.small = TempDir() + "/diff_small.json", .large = TempDir() + "/diff_large.json"};
  EXPECT_EQ(RunCliCaptured({"analyze", WriteFile("d16.onnx", SmallModel(16)), "--format", "json", "--output", files.small})
                .exit_code,
            kExitOk);
  EXPECT_EQ(RunCliCaptured({"analyze", WriteFile("d64.onnx", SmallModel(64)), "--format", "json", "--output", files.large})
                .exit_code,
            kExitOk);
  return files;
}

TEST(DiffCliTest, GrowthPastThresholdIsExitOne) {
  const DiffFiles files = WriteDiffReports();
  const CliRun pct = RunCliCaptured({"diff", files.small, files.large, "--max-increase", "5%"});
  EXPECT_EQ(pct.exit_code, kExitNotWithinLimits) << pct.err;
  EXPECT_NE(pct.out.find("EXCEEDS THRESHOLD"), std::string::npos) << pct.out;
  EXPECT_NE(pct.err.find("peak grew"), std::string::npos) << pct.err;
  const CliRun size = RunCliCaptured({"diff", files.small, files.large, "--max-increase=100B"});
  EXPECT_EQ(size.exit_code, kExitNotWithinLimits);
  const CliRun generous = RunCliCaptured({"diff", files.small, files.large, "--max-increase", "1MiB"});
  EXPECT_EQ(generous.exit_code, kExitOk) << generous.err;
  EXPECT_EQ(RunCliCaptured({"diff", files.small, files.large, "--max-increase", "400%"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"diff", files.small, files.large}).exit_code, kExitOk) << "no threshold: report only";
}

TEST(DiffCliTest, ShrinkagePasses) {
  const DiffFiles files = WriteDiffReports();
  EXPECT_EQ(RunCliCaptured({"diff", files.large, files.small, "--max-increase", "0%"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"diff", files.large, files.small, "--max-increase", "0"}).exit_code, kExitOk);
  EXPECT_EQ(RunCliCaptured({"diff", files.small, files.small, "--max-increase", "0%"}).exit_code, kExitOk);
}

TEST(DiffCliTest, FormatsCarryEveryFigure) {
  const DiffFiles files = WriteDiffReports();
  const CliRun json_run = RunCliCaptured({"diff", files.small, files.large, "--format", "json", "--max-increase", "5%"});
  EXPECT_EQ(json_run.exit_code, kExitNotWithinLimits);
  const nlohmann::json json = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(json["exceeded"], true);
  EXPECT_EQ(json["threshold"]["percent"], 5.0);
  ASSERT_EQ(json["figures"].size(), 6u);
  std::vector<std::string> keys;
  for (const nlohmann::json& figure : json["figures"]) keys.push_back(figure["figure"]);
  EXPECT_EQ(keys, (std::vector<std::string>{"weights_bytes", "arena_bytes", "lower_bound_bytes", "naive_bytes",
                                            "peak_bytes", "unsized_tensors"}));
  EXPECT_EQ(json["figures"][0]["old"], 64);
  EXPECT_EQ(json["figures"][0]["new"], 256);
  EXPECT_EQ(json["figures"][0]["delta"], 192);
  const CliRun md = RunCliCaptured({"diff", files.small, files.large, "--format", "md"});
  EXPECT_EQ(md.exit_code, kExitOk);
  EXPECT_NE(md.out.find("| figure | old | new | change |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| weights | 64 B | 256 B | +192 B (+300.0%) |"), std::string::npos) << md.out;
}

TEST(DiffCliTest, BadReportsAndFlagsAreExitTwoNamingTheFile) {
  const DiffFiles files = WriteDiffReports();
  const std::string broken = WriteFile("broken.json", "{\"schema_version\": 1, ");
  ExpectBadInput(RunCliCaptured({"diff", broken, files.large}), "broken.json");
  ExpectBadInput(RunCliCaptured({"diff", files.small, broken}), "broken.json");
  const std::string other = WriteFile("schema2.json", R"({"schema_version": 2, "memory": {}})");
  const CliRun schema = RunCliCaptured({"diff", files.small, other});
  ExpectBadInput(schema, "schema2.json");
  EXPECT_NE(schema.err.find("schema_version 2"), std::string::npos) << schema.err;
  ExpectBadInput(RunCliCaptured({"diff", files.small, WriteFile("array.json", "[1, 2]")}), "array.json");
  ExpectBadInput(RunCliCaptured({"diff", files.small, TempDir() + "/nope.json"}), "nope.json");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, "--max-increase", "lots"}), "--max-increase");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, "--max-increase", "-5%"}), "--max-increase");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, "--max-increase"}), "--max-increase");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, "--format", "html"}), "--format");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, "--verbose"}), "--verbose");
  ExpectBadInput(RunCliCaptured({"diff", files.small}), "two reports");
  ExpectBadInput(RunCliCaptured({"diff", files.small, files.large, files.large}), "two reports");
}

// ------------------------------------------------------- several models ---

TEST(MultiModelTest, ExitCodeIsTheWorstAndOthersStillReport) {
  const std::string good = WriteFile("multi/good.onnx", SmallModel());
  const std::string broken = WriteFile("multi/broken.onnx", "not a model");
  const CliRun run = RunCliCaptured({"analyze", good, broken, "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.out.find("onnx-footprint: " + good), std::string::npos) << "the good model is reported";
  EXPECT_NE(run.out.find("Summary (2 models)"), std::string::npos) << run.out;
  EXPECT_EQ(Count(run.err, "\n"), 1) << run.err;
  EXPECT_NE(run.err.find("broken.onnx"), std::string::npos) << run.err;

  const CliRun md = RunCliCaptured({"analyze", good, broken, "--format", "md", "--time-limit", "0"});
  EXPECT_EQ(md.exit_code, kExitBadInput);
  EXPECT_NE(md.out.find("| `" + broken + "` | – | – | – | – | – | – | ❌ error: "), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("<details><summary>" + good + "</summary>"), std::string::npos) << md.out;

  const CliRun over = RunCliCaptured({"analyze", good, good, "--max-weights", "1", "--time-limit", "0"});
  EXPECT_EQ(over.exit_code, kExitNotWithinLimits);
  EXPECT_EQ(Count(over.err, "--max-weights"), 2) << over.err;
  const CliRun worst = RunCliCaptured({"analyze", broken, good, "--max-weights", "1", "--time-limit", "0"});
  EXPECT_EQ(worst.exit_code, kExitBadInput);
  EXPECT_EQ(RunCliCaptured({"analyze", good, good, "--time-limit", "0"}).exit_code, kExitOk);
}

TEST(MultiModelTest, EachModelTakesTheDimsItNames) {
  const std::string fixed = WriteFile("dims/fixed.onnx", SmallModel());
  const std::string dynamic = WriteFile("dims/dynamic.onnx", UnsizedModel());
  const CliRun run = RunCliCaptured({"analyze", fixed, dynamic, "--dim", "batch=2", "--format", "json"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["reports"][0]["options"]["dims"], nlohmann::json::object());
  EXPECT_EQ(json["reports"][1]["options"]["dims"]["batch"], 2);
  EXPECT_EQ(json["reports"][1]["memory"]["complete"], true);
  const CliRun typo = RunCliCaptured({"analyze", fixed, dynamic, "--dim", "btach=2"});
  EXPECT_EQ(typo.exit_code, kExitBadInput);
  EXPECT_TRUE(typo.out.empty()) << "a usage error of the run prints no report";
  EXPECT_NE(typo.err.find("--dim btach"), std::string::npos) << typo.err;
  ExpectBadInput(RunCliCaptured({"analyze", fixed, "--dim", "batch=2"}), "batch");  // One model: as before.
}

TEST(MultiModelTest, JsonIsReportsInInputOrder) {
  const std::string a = WriteFile("order/a.onnx", SmallModel(16));
  const std::string b = WriteFile("order/b.onnx", SmallModel(64));
  const std::string missing = TempDir() + "/order/missing.onnx";
  const CliRun run = RunCliCaptured({"analyze", b, missing, a, "--format", "json", "--jobs", "3", "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitBadInput);
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema_version"], 1);
  ASSERT_EQ(json["reports"].size(), 3u);
  EXPECT_EQ(json["reports"][0]["model"]["path"], b);
  EXPECT_EQ(json["reports"][0]["memory"]["weights_bytes"], 256);
  EXPECT_EQ(json["reports"][1]["model"]["path"], missing);
  EXPECT_TRUE(json["reports"][1]["error"].is_string());
  EXPECT_EQ(json["reports"][2]["model"]["path"], a);
  EXPECT_EQ(json["reports"][2]["memory"]["weights_bytes"], 64);
}

TEST(MultiModelTest, JobsDoNotChangeTheOutput) {
  std::vector<std::string> args = {"analyze"};
  for (int i = 0; i < 6; ++i) {
    args.push_back(WriteFile("jobs/m" + std::to_string(i) + ".onnx", SmallModel(16 * (i + 1))));
  }
  args.insert(args.end(), {"--format", "md", "--time-limit", "0"});
  const CliRun one = RunCliCaptured(args);
  args.insert(args.end(), {"--jobs", "4"});
  const CliRun four = RunCliCaptured(args);
  EXPECT_EQ(one.exit_code, kExitOk);
  EXPECT_EQ(four.exit_code, kExitOk);
  EXPECT_EQ(one.out, four.out);
  EXPECT_NE(one.out.find("| model | peak | weights | arena | lower bound | unsized | fits | status |"),
            std::string::npos);
}

TEST(MultiModelTest, DirectoriesExpandToSortedOnnxFiles) {
  const std::string dir = TempDir() + "/tree";
  std::filesystem::remove_all(dir);
  WriteFile("tree/b.onnx", SmallModel());
  WriteFile("tree/a/z.onnx", SmallModel());
  WriteFile("tree/a/notes.txt", "not a model");
  WriteFile("tree/c.onnx.bak", "not a model");
  const std::vector<ModelPath> paths = ExpandModelPaths({dir, "x.onnx"});
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].path, dir + "/a/z.onnx");
  EXPECT_EQ(paths[1].path, dir + "/b.onnx");
  EXPECT_EQ(paths[2].path, "x.onnx");
  std::filesystem::create_directories(TempDir() + "/empty");
  const std::vector<ModelPath> empty = ExpandModelPaths({TempDir() + "/empty"});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_FALSE(empty[0].error.empty());
  const CliRun run = RunCliCaptured({"analyze", dir, "--format", "html", "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(Count(run.out, "<rect"), 6) << "3 planned tensors in each of 2 models";
  ExpectBadInput(RunCliCaptured({"analyze", TempDir() + "/empty"}), "no *.onnx");
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
  const std::string model = WriteFile("odd_names.onnx", builder.Serialize());
  const std::string small = WriteFile("small.onnx", SmallModel());
  const std::string old_report = TempDir() + "/odd_old.json";
  ASSERT_EQ(RunCliCaptured({"analyze", model, "--dim", "batch=2", "--format", "json", "--output", old_report}).exit_code,
            kExitOk);
  const std::vector<std::vector<std::string>> runs = {
      {"analyze", model, "--format", "json"},
      {"analyze", model, "--format", "json", "--sweep", "batch=1,2", "--device", "stm32h743"},
      {"analyze", model, "--format", "json", "--dim", "batch=4", "--baseline-report", old_report},
      {"analyze", model, small, TempDir() + "/absent.onnx", "--format", "json", "--dim-default", "1"},
  };
  for (const std::vector<std::string>& args : runs) {
    const CliRun run = RunCliCaptured(args);
    ASSERT_FALSE(run.out.empty()) << args.back() << ": " << run.err;
    const std::string dumped =
        nlohmann::ordered_json::parse(run.out).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    EXPECT_EQ(run.out, dumped + "\n") << "args ending " << args.back();
  }
  const std::string with_output = TempDir() + "/odd_new.json";
  ASSERT_EQ(RunCliCaptured({"analyze", model, "--format", "json", "--output", with_output}).exit_code, kExitOk);
  const std::string written = ReadFile(with_output);
  EXPECT_EQ(written, nlohmann::ordered_json::parse(written).dump(2, ' ', false,
                                                                 nlohmann::ordered_json::error_handler_t::replace) +
                         "\n");
  EXPECT_EQ(Count(written, "\"ai.onnx\""), 1) << written.substr(0, 300);
}

TEST(ProgressTest, DrawsOnlyWhenEnabledAndErasesItself) {
  std::ostringstream quiet;
  {
    Progress progress(2, false, &quiet);
    progress.Started(0, "a.onnx");
    progress.Finished(0);
  }
  EXPECT_TRUE(quiet.str().empty());
  std::ostringstream shown;
  Progress progress(3, true, &shown);
  progress.Started(0, "a.onnx");
  progress.Started(1, "b.onnx");
  progress.Finished(0);
  EXPECT_EQ(progress.Line().substr(0, 25), "[1/3] analyzing b.onnx (0");
  progress.Stop();
  progress.Stop();
  EXPECT_TRUE(shown.str().empty() || shown.str().substr(shown.str().size() - 4) == "\r\033[K");
}

}  // namespace
}  // namespace footprint
