// `onnx-footprint diff`: two JSON reports against a growth threshold.
#include <string>
#include <vector>

#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AddReluModel;
using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::ScratchDir;
using ::footprint::testing::WriteScratchFile;

struct DiffFiles {
  std::string small;  // Report of the 16-wide model.
  std::string large;  // Report of the 64-wide model: every byte figure grew.
};

DiffFiles WriteDiffReports() {
  DiffFiles files{.small = ScratchDir() + "/diff_small.json", .large = ScratchDir() + "/diff_large.json"};
  EXPECT_EQ(RunCliCaptured({"analyze", WriteScratchFile("d16.onnx", AddReluModel(16)), "--format", "json", "--output", files.small})
                .exit_code,
            kExitOk);
  EXPECT_EQ(RunCliCaptured({"analyze", WriteScratchFile("d64.onnx", AddReluModel(64)), "--format", "json", "--output", files.large})
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
  const std::string broken = WriteScratchFile("broken.json", "{\"schema_version\": 1, ");
  ExpectOneLineError(RunCliCaptured({"diff", broken, files.large}), "broken.json");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, broken}), "broken.json");
  const std::string other = WriteScratchFile("schema2.json", R"({"schema_version": 2, "memory": {}})");
  const CliRun schema = RunCliCaptured({"diff", files.small, other});
  ExpectOneLineError(schema, "schema2.json");
  EXPECT_NE(schema.err.find("schema_version 2"), std::string::npos) << schema.err;
  ExpectOneLineError(RunCliCaptured({"diff", files.small, WriteScratchFile("array.json", "[1, 2]")}), "array.json");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, ScratchDir() + "/nope.json"}), "nope.json");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, "--max-increase", "lots"}), "--max-increase");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, "--max-increase", "-5%"}), "--max-increase");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, "--max-increase"}), "--max-increase");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, "--format", "html"}), "--format");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, "--verbose"}), "--verbose");
  ExpectOneLineError(RunCliCaptured({"diff", files.small}), "two reports");
  ExpectOneLineError(RunCliCaptured({"diff", files.small, files.large, files.large}), "two reports");
}

}  // namespace
}  // namespace footprint
