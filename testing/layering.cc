#include "testing/layering.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace footprint::layering {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kSection = "## Never includes";
constexpr absl::string_view kSectionOutsideTests = "## Never includes outside tests";

bool SkippedFolder(const fs::path& path) {
  const std::string name = path.filename().string();
  return absl::StartsWith(name, ".") || absl::StartsWith(name, "build") || absl::StartsWith(name, "cmake-build");
}

bool IsSource(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".c" || ext == ".hpp";
}

// Tests and the helpers only tests link: *_test.cc, *_test_util.{h,cc}, and
// every file below a folder named testing/.
bool IsTest(const std::string& file) {
  const std::string stem = fs::path(file).stem().string();
  return absl::EndsWith(stem, "_test") || absl::EndsWith(stem, "_test_util") || absl::StartsWith(file, "testing/") ||
         absl::StrContains(file, "/testing/");
}

// Every file below root, relative to it, in sorted order; skipped folders left out.
std::vector<std::string> FilesBelow(const fs::path& root) {
  std::vector<std::string> files;
  std::error_code error;
  fs::recursive_directory_iterator it(root, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (it->is_directory() && SkippedFolder(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The backquoted words of a bullet before its first colon outside quotes.
std::vector<std::string> PrefixesOfBullet(absl::string_view bullet) {
  std::vector<std::string> prefixes;
  bool quoted = false;
  std::string word;
  for (char c : bullet) {
    if (c == '`') {
      if (quoted) prefixes.push_back(word);
      word.clear();
      quoted = !quoted;
    } else if (quoted) {
      word.push_back(c);
    } else if (c == ':') {
      break;
    }
  }
  return prefixes;
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Include {
  int line = 0;        // 1-based line of the #include.
  std::string target;  // As written between the quotes.
};

std::vector<Include> QuotedIncludes(const std::string& text) {
  std::vector<Include> includes;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    absl::string_view rest = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&rest, "#")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, "include")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, "\"")) continue;
    const size_t close = rest.find('"');
    if (close == absl::string_view::npos) continue;
    includes.push_back({number, std::string(rest.substr(0, close))});
  }
  return includes;
}

// Reads and caches the quoted includes of the project's files.
class IncludeGraph {
 public:
  explicit IncludeGraph(fs::path root) : root_(std::move(root)) {}

  // The project file an include names, relative to the root: against the
  // root first (the project's style), then against the including file's folder.
  std::optional<std::string> Resolve(const std::string& from, const std::string& target) {
    for (const fs::path& candidate : {fs::path(target), fs::path(from).parent_path() / target}) {
      const std::string relative = candidate.lexically_normal().generic_string();
      if (absl::StartsWith(relative, "..")) continue;
      std::error_code error;
      if (fs::is_regular_file(root_ / relative, error)) return relative;
    }
    return std::nullopt;
  }

  const std::vector<Include>& IncludesOf(const std::string& file) {
    auto [it, inserted] = includes_.try_emplace(file);
    if (inserted) {
      if (std::optional<std::string> text = ReadFile(root_ / file)) it->second = QuotedIncludes(*text);
    }
    return it->second;
  }

 private:
  fs::path root_;
  std::map<std::string, std::vector<Include>> includes_;
};

// One header reached from a file: the name matched against the rules, the
// file's own #include line that leads to it and the headers in between.
struct Reached {
  std::string name;
  int line = 0;
  std::vector<std::string> via;
};

// Breadth first, so that each header is reported by its shortest chain.
std::vector<Reached> ReachableIncludes(const std::string& file, IncludeGraph& graph) {
  std::vector<Reached> reached;
  std::set<std::string> seen;
  std::deque<std::pair<std::string, Reached>> queue;  // (project file to open, how it was reached)
  for (const Include& include : graph.IncludesOf(file)) {
    const std::optional<std::string> resolved = graph.Resolve(file, include.target);
    const std::string name = resolved.value_or(include.target);
    if (!seen.insert(name).second) continue;
    Reached hit{.name = name, .line = include.line};
    reached.push_back(hit);
    if (resolved) queue.emplace_back(*resolved, hit);
  }
  while (!queue.empty()) {
    auto [header, how] = queue.front();
    queue.pop_front();
    for (const Include& include : graph.IncludesOf(header)) {
      const std::optional<std::string> resolved = graph.Resolve(header, include.target);
      const std::string name = resolved.value_or(include.target);
      if (name == file || !seen.insert(name).second) continue;
      Reached hit{.name = name, .line = how.line, .via = how.via};
      hit.via.push_back(how.name);
      reached.push_back(hit);
      if (resolved) queue.emplace_back(*resolved, hit);
    }
  }
  return reached;
}

}  // namespace

absl::StatusOr<std::vector<LayeringRule>> ReadLayeringRules(const std::string& root) {
  std::vector<LayeringRule> rules;
  for (const std::string& file : FilesBelow(root)) {
    if (fs::path(file).filename() != "README.md") continue;
    std::optional<std::string> text = ReadFile(fs::path(root) / file);
    if (!text) return absl::NotFoundError(absl::StrCat(file, ": cannot be read"));
    std::string folder = fs::path(file).parent_path().generic_string();
    if (!folder.empty()) folder += "/";
    enum class Section { kNone, kAll, kOutsideTests } section = Section::kNone;
    std::istringstream lines(*text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(line);
      if (absl::StartsWith(trimmed, "#")) {
        section = trimmed == kSection               ? Section::kAll
                  : trimmed == kSectionOutsideTests ? Section::kOutsideTests
                                                    : Section::kNone;
        continue;
      }
      if (section == Section::kNone || !absl::StartsWith(trimmed, "- ")) continue;
      const std::vector<std::string> prefixes = PrefixesOfBullet(trimmed);
      if (prefixes.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            file, ":", number, ": a rule names no include prefix in backquotes before its colon: ", trimmed));
      }
      for (const std::string& prefix : prefixes) {
        rules.push_back({.folder = folder, .readme = file, .prefix = prefix, .tests_exempt = section == Section::kOutsideTests});
      }
    }
  }
  return rules;
}

absl::StatusOr<std::vector<LayeringViolation>> CheckLayering(const std::string& root) {
  absl::StatusOr<std::vector<LayeringRule>> rules = ReadLayeringRules(root);
  if (!rules.ok()) return rules.status();
  IncludeGraph graph{fs::path(root)};
  std::vector<LayeringViolation> violations;
  for (const std::string& file : FilesBelow(root)) {
    if (!IsSource(file)) continue;
    std::vector<const LayeringRule*> applicable;
    for (const LayeringRule& rule : *rules) {
      if (!absl::StartsWith(file, rule.folder)) continue;
      if (rule.tests_exempt && IsTest(file)) continue;
      applicable.push_back(&rule);
    }
    if (applicable.empty()) continue;
    for (const Reached& reached : ReachableIncludes(file, graph)) {
      for (const LayeringRule* rule : applicable) {
        if (!absl::StartsWith(reached.name, rule->prefix)) continue;
        violations.push_back({.file = file, .line = reached.line, .forbidden_include = reached.name,
                              .via = reached.via, .rule = *rule});
      }
    }
  }
  std::stable_sort(violations.begin(), violations.end(), [](const LayeringViolation& a, const LayeringViolation& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  return violations;
}

std::string DescribeViolation(const LayeringViolation& violation) {
  std::string out = absl::StrCat(violation.file, ":", violation.line, " includes ", violation.forbidden_include);
  if (!violation.via.empty()) absl::StrAppend(&out, " (via ", absl::StrJoin(violation.via, " -> "), ")");
  absl::StrAppend(&out, ", which ", violation.rule.readme, " says ",
                  violation.rule.folder.empty() ? "the tree" : violation.rule.folder, " never includes",
                  violation.rule.tests_exempt ? " outside tests" : "", " (`", violation.rule.prefix, "`)");
  return out;
}

}  // namespace footprint::layering
