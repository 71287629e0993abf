#include "testing/code_shape.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// A scratch checkout for the test that runs.
fs::path ScratchRoot() {
  const fs::path root =
      fs::path(testing::ScratchDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(root);
  return root;
}

TEST(CodeOnlyTest, CommentsAndLiteralsAreBlankedLinesKept) {
  EXPECT_EQ(CodeOnly("int a; // x {\n/* {\n} */ char c = '{';\nconst char* s = \"}\\\"{\";\n"),
            "int a;       \n    \n     char c = ' ';\nconst char* s = \"    \";\n");
}

TEST(CodeOnlyTest, RawStringsAndPrefixedLiteralsAreBlanked) {
  EXPECT_EQ(CodeOnly("auto r = R\"x(a \")\" {\n})x\"; auto w = L'{'; auto u = u8\"}\";"),
            "auto r = R\"         \n   \"; auto w = L' '; auto u = u8\" \";");
}

TEST(CodeOnlyTest, DigitSeparatorsAreNotCharacterLiterals) {
  EXPECT_EQ(CodeOnly("int n = 10'000'000; char c = '}';"), "int n = 10'000'000; char c = ' ';");
  EXPECT_EQ(CodeOnly("auto h = 0xFF'FF; auto f = 1e+5'0;"), "auto h = 0xFF'FF; auto f = 1e+5'0;");
}

TEST(RuntimeWordTest, RuntimeAsAWordPartInAnySpelling) {
  EXPECT_EQ(RuntimeWordIn("runtime_protos"), "runtime");
  EXPECT_EQ(RuntimeWordIn("RuntimeValue"), "runtime");
  EXPECT_EQ(RuntimeWordIn("runtime_data_type"), "runtime");
  EXPECT_EQ(RuntimeWordIn("kRUNTIME_NAME"), "runtime");
  EXPECT_EQ(RuntimeWordIn("runtimes"), "runtime");
  EXPECT_EQ(RuntimeWordIn("OnnxRuntime"), "onnxruntime");
  EXPECT_EQ(RuntimeWordIn("onnxruntime_cpu"), "onnxruntime");
}

TEST(RuntimeWordTest, LayoutAndPlannerTermsInAnySpelling) {
  EXPECT_EQ(RuntimeWordIn("sized_as"), "sized_as");
  EXPECT_EQ(RuntimeWordIn("SizedAs"), "sized_as");
  EXPECT_EQ(RuntimeWordIn("channel_block"), "channel_block");
  EXPECT_EQ(RuntimeWordIn("kChannelBlock"), "channel_block");
  EXPECT_EQ(RuntimeWordIn("channels_last"), "channels_last");
  EXPECT_EQ(RuntimeWordIn("planner_shape"), "planner_shape");
  EXPECT_EQ(RuntimeWordIn("PlannerShape"), "planner_shape");
  EXPECT_EQ(RuntimeWordIn("live_to_end"), "live_to_end");
  EXPECT_EQ(RuntimeWordIn("kNCHWcBlock"), "nchwc");
  EXPECT_EQ(RuntimeWordIn("nchwc_filters"), "nchwc");
  EXPECT_EQ(RuntimeWordIn("NhwcLayout"), "nhwc");
  EXPECT_EQ(RuntimeWordIn("MlasGemm"), "mlas");
}

TEST(RuntimeWordTest, OrtOnlyAsAWholeWordPart) {
  for (const char* ort : {"OrtValue", "ORT_API", "ort_env", "kOrt", "ORTValue", "use_ort", "Orts"}) {
    EXPECT_EQ(RuntimeWordIn(ort), "ort") << ort;
  }
  for (const char* other : {"sort", "port", "short", "Sort", "kSortOrder", "Report", "IsShort", "abort", "support",
                            "SORTED", "effort", "Ortho", "orthogonal", "kPORT", "import_", "Shortest"}) {
    EXPECT_EQ(RuntimeWordIn(other), "") << other;
  }
}

TEST(RuntimeWordTest, WordsInsideOtherWordsAreNotRuntimeWords) {
  for (const char* other : {"planner", "shape", "sized", "channel", "last_block", "block_channel", "end", "live",
                            "SizedAsync", "channelsLastly", "runtimer", "overruntime", "mlast", "value_info"}) {
    EXPECT_EQ(RuntimeWordIn(other), "") << other;
  }
}

TEST(RuntimeNamesTest, OnlyCodeIsRead) {
  const std::vector<RuntimeName> names = RuntimeNamesIn(
      "#include \"analyzer/runtimes/runtime_model.h\"\n"
      "#include <onnxruntime_cxx_api.h>\n"
      "// A runtime's value: sized_as\n"
      "struct IrValue {\n"
      "  int sort = 0;  /* OrtValue */\n"
      "  const char* label = \"runtime\";\n"
      "  bool channels_last = channels_last_default(channels_last);\n"
      "  std::vector<int> runtime_protos;\n"
      "};\n"
      "#define ORT_THING 1\n");
  std::vector<std::string> found;
  for (const RuntimeName& name : names) found.push_back(absl::StrCat(name.line, " ", name.identifier, " ", name.word));
  EXPECT_THAT(found, ElementsAre("7 channels_last channels_last", "7 channels_last_default channels_last",
                                 "8 runtime_protos runtime", "10 ORT_THING ort"));
}

TEST(RuntimeNamesTest, TheFolderHeadersAreReadAndNamedWithTheirLines) {
  const fs::path root = ScratchRoot();
  Write(root, "low/a.h", "#pragma once\n// runtime\nstruct A {\n  int live_to_end;\n};\n");
  Write(root, "low/a.cc", "int RuntimeOnlyInACcFile() { return 0; }\n");
  Write(root, "low/deep/b.h", "#pragma once\nenum class PlannerShape { kAsSized };\n");
  absl::StatusOr<std::vector<RuntimeName>> found = FindRuntimeNames(root.string(), "low/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const RuntimeName& name : *found) lines.push_back(DescribeRuntimeName(name));
  EXPECT_THAT(lines, ElementsAre("low/a.h:4 names `live_to_end`, which holds the runtime word `live_to_end`",
                                 "low/deep/b.h:2 names `PlannerShape`, which holds the runtime word `planner_shape`"));
}

TEST(RuntimeNamesTest, AMissingFolderOrOneWithoutAHeaderIsAnErrorNotAPass) {
  const fs::path root = ScratchRoot();
  EXPECT_FALSE(FindRuntimeNames(root.string(), "nowhere/").ok());
  Write(root, "low/a.cc", "int a;\n");
  EXPECT_FALSE(FindRuntimeNames(root.string(), "low/").ok());
}

// The loader is the analysis's lowest stage: what a runtime adds to a value
// or a graph lives with the runtime (analyzer/runtimes/), not in IrValue or
// IrGraph. Disabled until the restructuring of analyzer/runtimes/onnxruntime/
// moves those fields out; run it with --gtest_also_run_disabled_tests.
TEST(RuntimeNamesTest, DISABLED_TheLoadersHeadersNameNoRuntimeField) {
  absl::StatusOr<std::vector<RuntimeName>> found = FindRuntimeNames(FOOTPRINT_SOURCE_DIR, "analyzer/loader/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const RuntimeName& name : *found) lines.push_back(DescribeRuntimeName(name));
  EXPECT_TRUE(lines.empty()) << lines.size() << " runtime names in analyzer/loader/'s headers:\n"
                             << absl::StrJoin(lines, "\n");
}

}  // namespace
}  // namespace footprint::layering
