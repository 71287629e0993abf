#include "testing/layering.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/scratch_dir.h"

namespace footprint::layering {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

void Write(const fs::path& root, const std::string& file, const std::string& text) {
  fs::create_directories((root / file).parent_path());
  std::ofstream(root / file) << text;
}

// The checkout itself: every README's rules hold.
TEST(LayeringTest, TheCheckoutKeepsEveryFoldersRules) {
  absl::StatusOr<std::vector<LayeringViolation>> found = CheckLayering(FOOTPRINT_SOURCE_DIR);
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const LayeringViolation& violation : *found) lines.push_back(DescribeViolation(violation));
  EXPECT_THAT(lines, IsEmpty()) << absl::StrJoin(lines, "\n");
}

// The rules the issue asks for are written down (a README that lost its
// section would otherwise pass in silence).
TEST(LayeringTest, EveryStageStatesItsRules) {
  absl::StatusOr<std::vector<LayeringRule>> rules = ReadLayeringRules(FOOTPRINT_SOURCE_DIR);
  ASSERT_TRUE(rules.ok()) << rules.status();
  std::set<std::tuple<std::string, std::string, bool>> have;  // folder, prefix, tests exempt
  for (const LayeringRule& rule : *rules) have.insert({rule.folder, rule.prefix, rule.tests_exempt});
  const std::tuple<std::string, std::string, bool> wanted[] = {
      {"planner/", "analyzer/", false},
      {"planner/", "onnx/", false},
      {"scheduler/", "analyzer/", false},
      {"scheduler/", "onnx/", false},
      {"devices/", "analyzer/", false},
      {"analyzer/loader/", "analyzer/shapes/", false},
      {"analyzer/loader/", "analyzer/report/", false},
      {"analyzer/shapes/", "analyzer/memory/", false},
      {"analyzer/memory/", "analyzer/report/", false},
      {"analyzer/memory/", "analyzer/patching/", false},
      {"analyzer/patching/", "analyzer/cli/", false},
      {"analyzer/patching/", "analyzer/report/", false},
      {"analyzer/patching/", "planner/", false},
      {"analyzer/report/", "analyzer/cli/", false},
      {"analyzer/report/", "analyzer/loader/", true},  // Its tests load models to build an Analysis.
      {"analyzer/plan/", "analyzer/cli/", false},
      {"analyzer/runtimes/onnxruntime/passes/", "analyzer/runtimes/onnxruntime/targets.h", false},
      {"analyzer/runtimes/onnxruntime/passes/", "analyzer/memory/", true},
      {"runtime/", "analyzer/", false},
      {"runtime/", "stdlib.h", true},  // No allocation on the device; its tests may.
  };
  for (const auto& [folder, prefix, exempt] : wanted) {
    EXPECT_TRUE(have.contains({folder, prefix, exempt}))
        << folder << "README.md does not forbid `" << prefix << "`" << (exempt ? " outside tests" : "");
  }
}

class LayeringTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::ScratchDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    Write(root_, "low/README.md",
          "# low\n\n## Never includes\n- `high/`, `onnx/`: low is below high.\n"
          "## Never includes outside tests\n- `testing/`: test helpers stay in tests.\n\n## Other\n- `free/`\n");
    Write(root_, "high/README.md", "# high\nNo rules.\n");
    Write(root_, "high/api.h", "#pragma once\n#include \"high/detail.h\"\n");
    Write(root_, "high/detail.h", "#pragma once\n#include <vector>\n");
    Write(root_, "testing/helper.h", "#pragma once\n");
    Write(root_, "low/plain.h", "#pragma once\n#include <vector>\n#include \"free/ok.h\"\n");
  }

  std::vector<std::string> Found() {
    absl::StatusOr<std::vector<LayeringViolation>> found = CheckLayering(root_.string());
    EXPECT_TRUE(found.ok()) << found.status();
    std::vector<std::string> lines;
    if (found.ok()) {
      for (const LayeringViolation& violation : *found) lines.push_back(DescribeViolation(violation));
    }
    return lines;
  }

  // The check refuses the tree with an error that names `where` (README:line).
  void ExpectRulesError(const std::string& where) {
    absl::StatusOr<std::vector<LayeringViolation>> found = CheckLayering(root_.string());
    ASSERT_FALSE(found.ok());
    EXPECT_THAT(std::string(found.status().message()), ::testing::HasSubstr(where));
  }

  fs::path root_;
};

TEST_F(LayeringTreeTest, CleanTreeHasNoViolation) { EXPECT_THAT(Found(), IsEmpty()); }

TEST_F(LayeringTreeTest, DirectIncludeIsFound) {
  Write(root_, "low/a.cc", "// a\n#include \"onnx/onnx_pb.h\"\n");
  EXPECT_THAT(Found(), ElementsAre("low/a.cc:2 includes onnx/onnx_pb.h, which low/README.md says low/ never "
                                   "includes (`onnx/`)"));
}

TEST_F(LayeringTreeTest, IncludeThroughAnotherHeaderIsFoundWithItsChain) {
  Write(root_, "low/mid.h", "#pragma once\n#include \"high/api.h\"\n");
  Write(root_, "low/b.cc", "#include \"low/mid.h\"\n");
  EXPECT_THAT(Found(),
              ElementsAre("low/b.cc:1 includes high/api.h (via low/mid.h), which low/README.md says low/ never "
                          "includes (`high/`)",
                          "low/b.cc:1 includes high/detail.h (via low/mid.h -> high/api.h), which low/README.md "
                          "says low/ never includes (`high/`)",
                          "low/mid.h:2 includes high/api.h, which low/README.md says low/ never includes (`high/`)",
                          "low/mid.h:2 includes high/detail.h (via high/api.h), which low/README.md says low/ "
                          "never includes (`high/`)"));
}

TEST_F(LayeringTreeTest, RulesHoldInSubfoldersAndForTestsUnlessExempt) {
  Write(root_, "low/deep/c_test.cc", "#include \"testing/helper.h\"\n#include \"high/detail.h\"\n");
  Write(root_, "low/deep/c.cc", "#include \"testing/helper.h\"\n");
  Write(root_, "low/deep/c_test_util.h", "#include \"testing/helper.h\"\n");
  EXPECT_THAT(Found(),
              ElementsAre("low/deep/c.cc:1 includes testing/helper.h, which low/README.md says low/ never includes "
                          "outside tests (`testing/`)",
                          "low/deep/c_test.cc:2 includes high/detail.h, which low/README.md says low/ never "
                          "includes (`high/`)"));
}

TEST_F(LayeringTreeTest, IncludesRelativeToTheFileAreFollowed) {
  Write(root_, "low/local.h", "#pragma once\n#include \"../high/api.h\"\n");
  Write(root_, "low/d.cc", "#include \"local.h\"\n");
  const std::vector<std::string> found = Found();
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0], "low/d.cc:1 includes high/api.h (via low/local.h), which low/README.md says low/ never "
                      "includes (`high/`)");
}

TEST_F(LayeringTreeTest, AngleIncludesAreMatchedToo) {
  Write(root_, "low/e.cc", "#include <onnx/onnx_pb.h>\n");
  EXPECT_THAT(Found(), ElementsAre("low/e.cc:1 includes onnx/onnx_pb.h, which low/README.md says low/ never "
                                   "includes (`onnx/`)"));
}

TEST_F(LayeringTreeTest, OnlyTestsAndBenchmarksIncludeATestHelper) {
  Write(root_, "high/helper_test_util.h", "#pragma once\n");
  Write(root_, "high/f.cc", "#include \"high/helper_test_util.h\"\n");
  Write(root_, "high/f_test.cc", "#include \"high/helper_test_util.h\"\n");
  Write(root_, "bench/f_bench.cc", "#include \"high/helper_test_util.h\"\n");
  EXPECT_THAT(Found(), ElementsAre("high/f.cc:1 includes high/helper_test_util.h, a test helper: only tests and "
                                   "benchmarks include those (testing/layering.h)"));
}

TEST_F(LayeringTreeTest, RulesInsideCodeFencesAreExamplesNotRules) {
  Write(root_, "high/README.md", "# high\n```\n## Never includes\n- `low/`: an example\n```\n");
  Write(root_, "high/g.cc", "#include \"low/plain.h\"\n");
  EXPECT_THAT(Found(), IsEmpty());
}

TEST_F(LayeringTreeTest, AMisspelledRulesHeadingIsAnError) {
  Write(root_, "high/README.md", "# high\n### Never includes\n- `low/`: misspelled heading\n");
  ExpectRulesError("high/README.md:2");
}

TEST_F(LayeringTreeTest, AWrappedRuleIsAnErrorNotARuleLost) {
  Write(root_, "high/README.md", "# high\n## Never includes\n- `low/`, `free/`\n  `onnx/`: wrapped too early\n");
  ExpectRulesError("high/README.md:3");
}

TEST_F(LayeringTreeTest, AMissingTreeIsAnErrorNotAPass) {
  EXPECT_FALSE(CheckLayering((root_ / "nowhere").string()).ok());
  fs::remove_all(root_ / "low");
  EXPECT_FALSE(CheckLayering(root_.string()).ok()) << "no rule left: nothing would be checked";
}

TEST_F(LayeringTreeTest, ARuleWithoutAPrefixIsAnError) {
  Write(root_, "high/README.md", "# high\n## Never includes\n- the low folder: said in words only\n");
  ExpectRulesError("high/README.md:3");
}

// Every file of analyzer/runtimes/ compiles without the files that include
// it: the passes below the tables that run them, the tables below the
// model.
TEST(IncludeCycleTest, TheRuntimesFilesIncludeNoCycle) {
  absl::StatusOr<std::vector<IncludeCycle>> found = FindIncludeCycles(FOOTPRINT_SOURCE_DIR, "analyzer/runtimes/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const IncludeCycle& cycle : *found) lines.push_back(DescribeCycle(cycle));
  EXPECT_TRUE(lines.empty()) << lines.size() << " include cycles:\n" << absl::StrJoin(lines, "\n");
}

class IncludeCycleTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::ScratchDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    Write(root_, "rt/base.h", "#pragma once\n#include <vector>\n");
    Write(root_, "outside/x.h", "#pragma once\n#include \"rt/base.h\"\n");
  }

  std::vector<std::string> Found() {
    absl::StatusOr<std::vector<IncludeCycle>> found = FindIncludeCycles(root_.string(), "rt/");
    EXPECT_TRUE(found.ok()) << found.status();
    std::vector<std::string> lines;
    if (found.ok()) {
      for (const IncludeCycle& cycle : *found) lines.push_back(DescribeCycle(cycle));
    }
    return lines;
  }

  fs::path root_;
};

TEST_F(IncludeCycleTreeTest, TwoUnitsWhoseCcFilesIncludeEachOthersHeaderAreACycle) {
  Write(root_, "rt/a.h", "#pragma once\n");
  Write(root_, "rt/a.cc", "#include \"rt/a.h\"\n#include \"rt/b.h\"\n");
  Write(root_, "rt/b.h", "#pragma once\n");
  Write(root_, "rt/b.cc", "#include \"rt/b.h\"\n\n#include \"rt/a.h\"\n");
  EXPECT_THAT(Found(), ElementsAre("include cycle rt/a -> rt/b -> rt/a: rt/a.cc:2 includes rt/b.h, rt/b.cc:3 "
                                   "includes rt/a.h"));
}

TEST_F(IncludeCycleTreeTest, ThreeUnitsAreACycleThroughHeadersAndCcFiles) {
  Write(root_, "rt/a.h", "#pragma once\n#include \"rt/b.h\"\n");
  Write(root_, "rt/b.h", "#pragma once\n");
  Write(root_, "rt/b.cc", "#include \"rt/b.h\"\n#include \"c.h\"\n");  // Relative to its folder.
  Write(root_, "rt/c.h", "#pragma once\n#include \"rt/base.h\"\n");
  Write(root_, "rt/c.cc", "#include \"rt/c.h\"\n#include \"rt/a.h\"\n");
  EXPECT_THAT(Found(), ElementsAre("include cycle rt/a -> rt/b -> rt/c -> rt/a: rt/a.h:2 includes rt/b.h, "
                                   "rt/b.cc:2 includes rt/c.h, rt/c.cc:2 includes rt/a.h"));
}

TEST_F(IncludeCycleTreeTest, AUnitsOwnFilesAndTheirSharedIncludesMakeNoCycle) {
  Write(root_, "rt/a.h", "#pragma once\n#include \"rt/b.h\"\n#include \"rt/base.h\"\n");
  Write(root_, "rt/a.cc", "#include \"rt/a.h\"\n#include \"rt/b.h\"\n#include \"rt/base.h\"\n");
  Write(root_, "rt/b.h", "#pragma once\n#include \"rt/base.h\"\n");
  Write(root_, "rt/b.cc", "#include \"rt/b.h\"\n#include \"rt/base.h\"\n");
  Write(root_, "rt/a_test.cc", "#include \"rt/a.h\"\n#include \"rt/b.h\"\n");
  EXPECT_THAT(Found(), IsEmpty());
}

TEST_F(IncludeCycleTreeTest, SameStemsInOtherFoldersAreOtherUnits) {
  Write(root_, "rt/one/a.h", "#pragma once\n");
  Write(root_, "rt/one/a.cc", "#include \"rt/one/a.h\"\n#include \"rt/two/a.h\"\n");
  Write(root_, "rt/two/a.h", "#pragma once\n");
  Write(root_, "rt/two/a.cc", "#include \"rt/two/a.h\"\n");
  EXPECT_THAT(Found(), IsEmpty());
}

// The way back through outside/x.h is not followed (outside the folder).
TEST_F(IncludeCycleTreeTest, OnlyIncludesBetweenFilesOfTheFolderCount) {
  Write(root_, "rt/a.h", "#pragma once\n");
  Write(root_, "rt/a.cc", "#include \"rt/a.h\"\n#include \"outside/x.h\"\n");  // x.h includes base.h.
  Write(root_, "rt/base.cc", "#include \"rt/base.h\"\n#include \"rt/a.h\"\n");
  EXPECT_THAT(Found(), IsEmpty());
}

// A hub that includes its rules, whose .cc files include the hub's header:
// every include on a cycle is shown, each in the shortest cycle through it.
TEST_F(IncludeCycleTreeTest, EachIncludeOnACycleIsShownInItsShortestCycle) {
  Write(root_, "rt/hub.h", "#pragma once\n");
  Write(root_, "rt/hub.cc", "#include \"rt/hub.h\"\n#include \"rt/x.h\"\n#include \"rt/q.h\"\n");
  Write(root_, "rt/x.cc", "#include \"rt/x.h\"\n#include \"rt/hub.h\"\n");
  Write(root_, "rt/x.h", "#pragma once\n");
  Write(root_, "rt/q.h", "#pragma once\n");
  Write(root_, "rt/q.cc", "#include \"rt/q.h\"\n#include \"rt/d.h\"\n#include \"rt/hub.h\"\n");
  Write(root_, "rt/d.h", "#pragma once\n");
  Write(root_, "rt/d.cc", "#include \"rt/d.h\"\n#include \"rt/hub.h\"\n");
  EXPECT_THAT(Found(), ElementsAre("include cycle rt/d -> rt/hub -> rt/q -> rt/d: rt/d.cc:2 includes rt/hub.h, "
                                   "rt/hub.cc:3 includes rt/q.h, rt/q.cc:2 includes rt/d.h",
                                   "include cycle rt/hub -> rt/q -> rt/hub: rt/hub.cc:3 includes rt/q.h, rt/q.cc:3 "
                                   "includes rt/hub.h",
                                   "include cycle rt/hub -> rt/x -> rt/hub: rt/hub.cc:2 includes rt/x.h, rt/x.cc:2 "
                                   "includes rt/hub.h"));
}

TEST_F(IncludeCycleTreeTest, AMissingOrEmptyFolderIsAnErrorNotAPass) {
  EXPECT_FALSE(FindIncludeCycles(root_.string(), "nowhere/").ok());
  Write(root_, "docs/README.md", "# no source\n");
  EXPECT_FALSE(FindIncludeCycles(root_.string(), "docs/").ok());
}

}  // namespace
}  // namespace footprint::layering
