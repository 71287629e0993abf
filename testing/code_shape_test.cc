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
// IrGraph.
TEST(RuntimeNamesTest, TheLoadersHeadersNameNoRuntimeField) {
  absl::StatusOr<std::vector<RuntimeName>> found = FindRuntimeNames(FOOTPRINT_SOURCE_DIR, "analyzer/loader/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const RuntimeName& name : *found) lines.push_back(DescribeRuntimeName(name));
  EXPECT_TRUE(lines.empty()) << lines.size() << " runtime names in analyzer/loader/'s headers:\n"
                             << absl::StrJoin(lines, "\n");
}

// "line name lines" for each function of `source`.
std::vector<std::string> Functions(const std::string& source) {
  absl::StatusOr<std::vector<FunctionSpan>> found = FunctionsIn(source);
  EXPECT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  if (found.ok()) {
    for (const FunctionSpan& f : *found) lines.push_back(absl::StrCat(f.line, " ", f.name, " ", f.lines));
  }
  return lines;
}

TEST(FunctionsInTest, ASignatureOverSeveralLinesIsNamedWhereItsNameIs) {
  EXPECT_THAT(Functions("template <typename T,\n"
                        "          typename U = std::vector<T>>\n"
                        "absl::StatusOr<std::map<T, U>>\n"
                        "LongName(const T& a,\n"
                        "         int b = 3) const noexcept\n"
                        "    -> int {\n"
                        "  return {};\n"
                        "}\n"),
              ElementsAre("4 LongName 3"));
}

TEST(FunctionsInTest, MemberFunctionsAreNamedWithTheirClasses) {
  EXPECT_THAT(Functions("class Arena final : public Base<int> {\n"
                        " public:\n"
                        "  explicit Arena(int n)\n"
                        "      : Base<int>{n}, n_(n), v_{1, 2} {\n"
                        "    Grow();\n"
                        "  }\n"
                        "  int size() const { return n_; }\n"
                        "  struct Step {\n"
                        "    void Run() {\n"
                        "    }\n"
                        "  };\n"
                        "  enum class Kind { kA, kB };\n"
                        " private:\n"
                        "  int n_ = 0;\n"
                        "  std::vector<int> v_{3};\n"
                        "  std::function<void()> f_ = [this] {\n"
                        "  };\n"
                        "};\n"
                        "void Arena::Grow() {\n"
                        "}\n"
                        "Arena::~Arena() {}\n"),
              ElementsAre("3 Arena::Arena 3", "7 Arena::size 1", "9 Arena::Step::Run 2", "16 Arena::f_ 2",
                          "19 Arena::Grow 2", "21 Arena::~Arena 1"));
}

TEST(FunctionsInTest, FunctionsInsideNamespacesAnonymousOrNotAndExternBlocks) {
  EXPECT_THAT(Functions("namespace footprint::layering {\n"
                        "namespace {\n"
                        "int Helper() {\n"
                        "  return 1;\n"
                        "}\n"
                        "}  // namespace\n"
                        "extern \"C\" {\n"
                        "int Exported() { return 2; }\n"
                        "}\n"
                        "}  // namespace footprint::layering\n"),
              ElementsAre("3 Helper 3", "8 Exported 1"));
}

TEST(FunctionsInTest, ALambdaIsPartOfItsEnclosingFunction) {
  EXPECT_THAT(Functions("void Outer(std::vector<int>& v) {\n"
                        "  auto f = [](int x) {\n"
                        "    return x;\n"
                        "  };\n"
                        "  std::sort(v.begin(), v.end(), [](int a, int b) { return a < b; });\n"
                        "  struct Local { void Run() {} };\n"
                        "}\n"
                        "const auto kTwice = [](int x) {\n"
                        "  return 2 * x;\n"
                        "};\n"),
              ElementsAre("1 Outer 7", "8 kTwice 3"));
}

TEST(FunctionsInTest, BracesInLiteralsCommentsAndDirectivesDoNotCount) {
  EXPECT_THAT(Functions("int F() {\n"
                        "  const char* s = \"}}\\\"}\";\n"
                        "  char c = '}';\n"
                        "  char d = '\\'';  // }\n"
                        "  /* }\n"
                        "  } */\n"
                        "  std::string r = R\"x(}\")x\";\n"
                        "#define OPEN {\n"
                        "#define CLOSE \\\n"
                        "  }\n"
                        "  return 1'000;\n"
                        "}\n"
                        "int G() { return '{'; }\n"),
              ElementsAre("1 F 12", "13 G 1"));
}

TEST(FunctionsInTest, InitializersAndEnumsAreNoFunctions) {
  EXPECT_THAT(Functions("enum class Kind { kA, kB };\n"
                        "const std::vector<int> kValues = {1, 2};\n"
                        "struct Point { int x; int y; } kOrigin{0, 0};\n"
                        "std::map<int, int> kMap{{1, 2}};\n"
                        "const Foo kFoo = MakeFoo({1, 2}, [](int x) { return x; });\n"
                        "int a(1), b{2};\n"
                        "constexpr Point kUnit = {.x = 1, .y = 1};\n"),
              IsEmpty());
}

TEST(FunctionsInTest, OperatorsMacrosAndAttributes) {
  EXPECT_THAT(Functions("struct V {\n"
                        "  bool operator==(const V& o) const { return true; }\n"
                        "  int operator()(int x) const {\n"
                        "    return x;\n"
                        "  }\n"
                        "  explicit operator bool() const { return true; }\n"
                        "  V& operator<<(int) { return *this; }\n"
                        "};\n"
                        "bool V::operator<(const V&) const { return false; }\n"
                        "TEST(VTest, Equal) {\n"
                        "  EXPECT_TRUE(V() == V());\n"
                        "}\n"
                        "ABSL_DEPRECATED(\"old\") int Old() { return 1; }\n"
                        "decltype(auto) Get() { return 1; }\n"),
              ElementsAre("2 V::operator== 1", "3 V::operator() 3", "6 V::operator bool 1", "7 V::operator<< 1",
                          "9 V::operator< 1", "10 TEST(VTest, Equal) 3", "13 Old 1", "14 Get 1"));
}

TEST(FunctionsInTest, BracesThatDoNotPairAreAnErrorNamingTheLine) {
  absl::StatusOr<std::vector<FunctionSpan>> unclosed = FunctionsIn("namespace a {\nint F() {\n  return 1;\n");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_THAT(std::string(unclosed.status().message()), ::testing::HasSubstr("line 2"));
  absl::StatusOr<std::vector<FunctionSpan>> closes_nothing = FunctionsIn("int F() {\n}\n}\n");
  ASSERT_FALSE(closes_nothing.ok());
  EXPECT_THAT(std::string(closes_nothing.status().message()), ::testing::HasSubstr("line 3"));
}

// A function of `lines` lines from brace to brace.
std::string FunctionOfLines(const std::string& signature, int lines) {
  std::string text = signature + " {\n";
  for (int i = 2; i < lines; ++i) text += "  ++n;\n";
  return text + "}\n";
}

TEST(LongFunctionsTest, OverTheLimitInSourcesNotTestsWithFileLineNameAndLength) {
  const fs::path root = ScratchRoot();
  Write(root, "rt/a.cc",
        "namespace {\n" + FunctionOfLines("void Fits(int& n)", 80) + FunctionOfLines("void TooLong(int& n)", 81) +
            "}  // namespace\n");
  Write(root, "rt/deep/b.h", "#pragma once\nstruct B {\n" + FunctionOfLines("  void Inline(int& n)", 90) + "};\n");
  Write(root, "rt/a_test.cc", FunctionOfLines("void InATest(int& n)", 200));
  Write(root, "rt/testing/helper.cc", FunctionOfLines("void InAHelper(int& n)", 200));
  absl::StatusOr<std::vector<FunctionSpan>> found = FindLongFunctions(root.string(), "rt/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const FunctionSpan& function : *found) lines.push_back(DescribeLongFunction(function));
  EXPECT_THAT(lines, ElementsAre("rt/a.cc:82 TooLong is 81 lines from brace to brace (at most 80)",
                                 "rt/deep/b.h:3 B::Inline is 90 lines from brace to brace (at most 80)"));
}

TEST(LongFunctionsTest, AFileWhoseBracesDoNotPairIsAnErrorNamingIt) {
  const fs::path root = ScratchRoot();
  Write(root, "rt/a.cc", "void F() {\n");
  absl::StatusOr<std::vector<FunctionSpan>> found = FindLongFunctions(root.string(), "rt/");
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(std::string(found.status().message()), ::testing::HasSubstr("rt/a.cc: line 1"));
  EXPECT_FALSE(FindLongFunctions(root.string(), "nowhere/").ok());
}

// A function a reader takes in at once: analyzer/runtimes/'s rules are many
// and each is measured, so each step of one is a function of its own.
TEST(LongFunctionsTest, NoFunctionOfTheRuntimesIsOverTheLimit) {
  absl::StatusOr<std::vector<FunctionSpan>> found = FindLongFunctions(FOOTPRINT_SOURCE_DIR, "analyzer/runtimes/");
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> lines;
  for (const FunctionSpan& function : *found) lines.push_back(DescribeLongFunction(function));
  EXPECT_TRUE(lines.empty()) << lines.size() << " functions over " << kMaxFunctionLines << " lines:\n"
                             << absl::StrJoin(lines, "\n");
}

}  // namespace
}  // namespace footprint::layering
