// Several models in one run: exit codes, bindings, order, jobs, folders,
// and the progress line.
#include "analyzer/cli/batch.h"

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/progress.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AddReluModel;
using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::Occurrences;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::ScratchDir;
using ::footprint::testing::UnboundBatchModel;
using ::footprint::testing::WriteScratchFile;

TEST(MultiModelTest, ExitCodeIsTheWorstAndOthersStillReport) {
  const std::string good = WriteScratchFile("multi/good.onnx", AddReluModel());
  const std::string broken = WriteScratchFile("multi/broken.onnx", "not a model");
  const CliRun run = RunCliCaptured({"analyze", good, broken, "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitBadInput);
  EXPECT_NE(run.out.find("onnx-footprint: " + good), std::string::npos) << "the good model is reported";
  EXPECT_NE(run.out.find("Summary (2 models)"), std::string::npos) << run.out;
  EXPECT_EQ(Occurrences(run.err, "\n"), 1) << run.err;
  EXPECT_NE(run.err.find("broken.onnx"), std::string::npos) << run.err;

  const CliRun md = RunCliCaptured({"analyze", good, broken, "--format", "md", "--time-limit", "0"});
  EXPECT_EQ(md.exit_code, kExitBadInput);
  EXPECT_NE(md.out.find("| `" + broken + "` | – | – | – | – | – | – | ❌ error: "), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("<details><summary>" + good + "</summary>"), std::string::npos) << md.out;

  const CliRun over = RunCliCaptured({"analyze", good, good, "--max-weights", "1", "--time-limit", "0"});
  EXPECT_EQ(over.exit_code, kExitNotWithinLimits);
  EXPECT_EQ(Occurrences(over.err, "--max-weights"), 2) << over.err;
  const CliRun worst = RunCliCaptured({"analyze", broken, good, "--max-weights", "1", "--time-limit", "0"});
  EXPECT_EQ(worst.exit_code, kExitBadInput);
  EXPECT_EQ(RunCliCaptured({"analyze", good, good, "--time-limit", "0"}).exit_code, kExitOk);
}

TEST(MultiModelTest, EachModelTakesTheDimsItNames) {
  const std::string fixed = WriteScratchFile("dims/fixed.onnx", AddReluModel());
  const std::string dynamic = WriteScratchFile("dims/dynamic.onnx", UnboundBatchModel());
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
  ExpectOneLineError(RunCliCaptured({"analyze", fixed, "--dim", "batch=2"}), "batch");  // One model: as before.
}

TEST(MultiModelTest, JsonIsReportsInInputOrder) {
  const std::string a = WriteScratchFile("order/a.onnx", AddReluModel(16));
  const std::string b = WriteScratchFile("order/b.onnx", AddReluModel(64));
  const std::string missing = ScratchDir() + "/order/missing.onnx";
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
    args.push_back(WriteScratchFile("jobs/m" + std::to_string(i) + ".onnx", AddReluModel(16 * (i + 1))));
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
  const std::string dir = ScratchDir() + "/tree";
  std::filesystem::remove_all(dir);
  WriteScratchFile("tree/b.onnx", AddReluModel());
  WriteScratchFile("tree/a/z.onnx", AddReluModel());
  WriteScratchFile("tree/a/notes.txt", "not a model");
  WriteScratchFile("tree/c.onnx.bak", "not a model");
  const std::vector<ModelPath> paths = ExpandModelPaths({dir, "x.onnx"});
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].path, dir + "/a/z.onnx");
  EXPECT_EQ(paths[1].path, dir + "/b.onnx");
  EXPECT_EQ(paths[2].path, "x.onnx");
  std::filesystem::create_directories(ScratchDir() + "/empty");
  const std::vector<ModelPath> empty = ExpandModelPaths({ScratchDir() + "/empty"});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_FALSE(empty[0].error.empty());
  const CliRun run = RunCliCaptured({"analyze", dir, "--format", "html", "--time-limit", "0"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(Occurrences(run.out, "<rect"), 6) << "3 planned tensors in each of 2 models";
  ExpectOneLineError(RunCliCaptured({"analyze", ScratchDir() + "/empty"}), "no *.onnx");
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
