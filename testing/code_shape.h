// Checks of the code's shape rather than of its includes (layering.h): a
// stage's headers name nothing of a runtime, and no function outgrows a
// screen. Both read the code as the compiler's first phases do: comments,
// string and character literals (raw strings too) count for nothing, so a
// brace or a word inside them is never taken for code.
//
// Usage (testing/code_shape_test.cc runs them on the checkout):
//   absl::StatusOr<std::vector<RuntimeName>> names = FindRuntimeNames(root, "analyzer/loader/");
//   absl::StatusOr<std::vector<FunctionSpan>> long_ones = FindLongFunctions(root, "analyzer/runtimes/");
//   for (const FunctionSpan& f : *long_ones) std::cerr << DescribeLongFunction(f) << "\n";
//
// What they do not: expand macros (a macro that opens a brace the code
// closes is an error, braces that do not pair), or parse C++: a function is
// found by the shape of what comes before its brace (see FunctionsIn).
#ifndef ONNX_FOOTPRINT_TESTING_CODE_SHAPE_H_
#define ONNX_FOOTPRINT_TESTING_CODE_SHAPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace footprint::layering {

// `source` with every comment and the contents of every string and
// character literal (raw strings too) blanked: spaces, newlines kept, so
// that each line stays where it was. A literal's quotes stay (`""`); a
// digit separator (1'000) is code, not a character literal.
std::string CodeOnly(absl::string_view source);

// The words that belong to a runtime: its name, its layouts and its
// planner's terms. An identifier holds one when the word is one or several
// of its word parts (see RuntimeWordIn); listed with '_' between the parts
// they span, but matched in any spelling ("channel_block", kChannelBlock).
inline constexpr absl::string_view kRuntimeWords[] = {
    "onnxruntime",   "runtime",       "ort",      "mlas",          "nchwc",       "nhwc",
    "channel_block", "channels_last", "sized_as", "planner_shape", "live_to_end",
};

struct RuntimeName {
  std::string file;        // Relative to the root ("" from RuntimeNamesIn).
  int line = 0;            // 1-based line of the identifier.
  std::string identifier;  // As written ("runtime_protos").
  std::string word;        // The runtime word it holds (from kRuntimeWords: "runtime").
};

// The runtime word `identifier` holds, or "" for none. Its word parts are
// split at underscores, where a lower-case letter or a digit meets a capital,
// before a capital that starts a capitalized part (NCHWc: NCH, Wc) and
// between letters and digits. A word matches from a part's start to a part's
// end, over several parts if it must ("nchwc" in kNCHWcBlock, "sized_as" in
// SizedAs), and may take a plural s ("runtimes"): so "ort" is in OrtValue,
// ORT_API and ort_env, never in sort, port, short or Report.
std::string RuntimeWordIn(absl::string_view identifier);

// The identifiers of `source`'s code (not its comments or literals) that
// hold a runtime word, in order, each once a line. #include lines are left to layering.h.
std::vector<RuntimeName> RuntimeNamesIn(absl::string_view source);

// The runtime names of every header below `folder` of `root`
// ("analyzer/loader/"), test helpers' too, sorted by file and line. Errors:
// a missing folder, one without a header, a header that cannot be read.
absl::StatusOr<std::vector<RuntimeName>> FindRuntimeNames(const std::string& root, const std::string& folder);

// "analyzer/loader/graph_ir.h:93 names `runtime_protos`, which holds the runtime word `runtime`".
std::string DescribeRuntimeName(const RuntimeName& name);

// The longest function the code of analyzer/runtimes/ may have, in lines.
inline constexpr int kMaxFunctionLines = 80;

struct FunctionSpan {
  std::string file;  // Relative to the root ("" from FunctionsIn).
  int line = 0;      // 1-based line of its name.
  std::string name;  // With its classes ("Arena::Run", "operator()"); a macro's call ("TEST(A, B)").
  int lines = 0;     // From its opening brace's line to its closing brace's, both counted.
};

// Every function `source` defines outside any other function: at namespace
// scope (named ones and anonymous ones alike), in a class (nested ones too),
// outside its class (A::F), a lambda bound to a variable there. A function
// is a brace after a parameter list (the signature may span lines; its
// qualifiers, a trailing return type, a constructor's initializers may
// follow). Inside a function everything is its own: lambdas, local classes.
// Sorted by line. Errors: braces that do not pair (naming the line).
absl::StatusOr<std::vector<FunctionSpan>> FunctionsIn(absl::string_view source);

// The functions longer than `max_lines` in the sources below `folder` of
// `root` that are not test code (source_tree.h's IsTest), sorted by file and
// line. Errors: a missing folder, one without a source, a file FunctionsIn refuses.
absl::StatusOr<std::vector<FunctionSpan>> FindLongFunctions(const std::string& root, const std::string& folder,
                                                            int max_lines = kMaxFunctionLines);

// "analyzer/runtimes/onnxruntime/qdq_fusion.cc:120 FuseDynamicQuantizeMatMul is 96 lines long (at most 80)".
std::string DescribeLongFunction(const FunctionSpan& function, int max_lines = kMaxFunctionLines);

}  // namespace footprint::layering

#endif  // ONNX_FOOTPRINT_TESTING_CODE_SHAPE_H_
