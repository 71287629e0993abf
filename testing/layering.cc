#include "testing/layering.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "testing/source_tree.h"

namespace footprint::layering {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kSection = "## Never includes";
constexpr absl::string_view kSectionOutsideTests = "## Never includes outside tests";

// The backquoted words of a bullet before its first colon outside quotes;
// nullopt when its line has no such colon (its prefixes may have wrapped
// onto the next line, where they would be lost).
std::optional<std::vector<std::string>> PrefixesOfBullet(absl::string_view bullet) {
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
      return prefixes;
    }
  }
  return std::nullopt;
}

struct Include {
  int line = 0;         // 1-based line of the #include.
  std::string target;   // As written between the quotes or the angle brackets.
  bool quoted = false;  // "..." (may be the project's: followed); <...> is matched only.
};

std::vector<Include> IncludesIn(const std::string& text) {
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
    if (rest.empty() || (rest[0] != '"' && rest[0] != '<')) continue;
    const char close_char = rest[0] == '"' ? '"' : '>';
    const bool quoted = rest[0] == '"';
    rest.remove_prefix(1);
    const size_t close = rest.find(close_char);
    if (close == absl::string_view::npos) continue;
    includes.push_back({number, std::string(rest.substr(0, close)), quoted});
  }
  return includes;
}

// Reads and caches the includes of the project's files.
class IncludeGraph {
 public:
  explicit IncludeGraph(fs::path root) : root_(std::move(root)) {}

  // The project file a quoted include names, relative to the root: against
  // the including file's folder first, as the compiler looks, then against
  // the root (the project's style). <...> names the system's headers.
  std::optional<std::string> Resolve(const std::string& from, const Include& include) {
    if (!include.quoted) return std::nullopt;
    const std::string& target = include.target;
    for (const fs::path& candidate : {fs::path(from).parent_path() / target, fs::path(target)}) {
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
      if (std::optional<std::string> text = ReadFile(root_ / file)) it->second = IncludesIn(*text);
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
  std::string name;              // Root-relative for a project file, else as written.
  int line = 0;                  // The file's own #include line that leads here.
  std::vector<std::string> via;  // Project headers in between.
  bool in_project = false;       // A file of the checkout.
};

// Breadth first, so that each header is reported by its shortest chain.
std::vector<Reached> ReachableIncludes(const std::string& file, IncludeGraph& graph) {
  std::vector<Reached> reached;
  std::set<std::string> seen;
  std::deque<std::pair<std::string, Reached>> queue;  // (project file to open, how it was reached)
  for (const Include& include : graph.IncludesOf(file)) {
    const std::optional<std::string> resolved = graph.Resolve(file, include);
    const std::string name = resolved.value_or(include.target);
    if (!seen.insert(name).second) continue;
    Reached hit{.name = name, .line = include.line, .in_project = resolved.has_value()};
    reached.push_back(hit);
    if (resolved) queue.emplace_back(*resolved, hit);
  }
  while (!queue.empty()) {
    auto [header, how] = queue.front();
    queue.pop_front();
    for (const Include& include : graph.IncludesOf(header)) {
      const std::optional<std::string> resolved = graph.Resolve(header, include);
      const std::string name = resolved.value_or(include.target);
      if (name == file || !seen.insert(name).second) continue;
      Reached hit{.name = name, .line = how.line, .via = how.via, .in_project = resolved.has_value()};
      hit.via.push_back(how.name);
      reached.push_back(hit);
      if (resolved) queue.emplace_back(*resolved, hit);
    }
  }
  return reached;
}

// The unit of a source file for FindIncludeCycles: its path without extension.
std::string UnitOf(const std::string& file) { return fs::path(file).replace_extension().generic_string(); }

// The include of the next unit that a unit's files make first (in file order, then line order).
using UnitIncludes = std::map<std::string, std::map<std::string, CycleStep>>;

// The units on the shortest way from `from` to `to` (both included); empty
// when there is none. Breadth first over sorted units: one way, always the same.
std::vector<std::string> ShortestWay(const UnitIncludes& includes, const std::string& from, const std::string& to) {
  std::map<std::string, std::string> came_from{{from, ""}};
  std::deque<std::string> queue{from};
  while (!queue.empty()) {
    const std::string unit = queue.front();
    queue.pop_front();
    if (unit == to) {
      std::vector<std::string> way;
      for (std::string at = to; !at.empty(); at = came_from[at]) way.insert(way.begin(), at);
      return way;
    }
    const auto it = includes.find(unit);
    if (it == includes.end()) continue;
    for (const auto& [next, step] : it->second) {
      if (came_from.try_emplace(next, unit).second) queue.push_back(next);
    }
  }
  return {};
}

}  // namespace

absl::StatusOr<std::vector<LayeringRule>> ReadLayeringRules(const std::string& root) {
  absl::StatusOr<std::vector<std::string>> files = FilesBelow(root);
  if (!files.ok()) return files.status();
  std::vector<LayeringRule> rules;
  for (const std::string& file : *files) {
    if (fs::path(file).filename() != "README.md") continue;
    std::optional<std::string> text = ReadFile(fs::path(root) / file);
    if (!text) return absl::NotFoundError(absl::StrCat(file, ": cannot be read"));
    std::string folder = fs::path(file).parent_path().generic_string();
    if (!folder.empty()) folder += "/";
    enum class Section { kNone, kAll, kOutsideTests } section = Section::kNone;
    bool in_code = false;  // Inside a ``` fence: examples, not rules.
    std::istringstream lines(*text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(line);
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(trimmed), "```")) in_code = !in_code;
      if (in_code || absl::StartsWith(absl::StripLeadingAsciiWhitespace(trimmed), "```")) continue;
      if (absl::StartsWith(trimmed, "#")) {
        section = trimmed == kSection               ? Section::kAll
                  : trimmed == kSectionOutsideTests ? Section::kOutsideTests
                                                    : Section::kNone;
        if (section == Section::kNone && absl::StrContains(trimmed, "Never includes")) {
          return absl::InvalidArgumentError(absl::StrCat(file, ":", number, ": a rules heading must read exactly '",
                                                         kSection, "' or '", kSectionOutsideTests, "': ", trimmed));
        }
        continue;
      }
      if (section == Section::kNone || !absl::StartsWith(absl::StripLeadingAsciiWhitespace(trimmed), "- ")) continue;
      const std::optional<std::vector<std::string>> prefixes = PrefixesOfBullet(trimmed);
      if (!prefixes.has_value() || prefixes->empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            file, ":", number, ": a rule names its include prefixes in backquotes, then a colon, on its first line: ",
            trimmed));
      }
      for (const std::string& prefix : *prefixes) {
        rules.push_back(
            {.folder = folder, .readme = file, .prefix = prefix, .tests_exempt = section == Section::kOutsideTests});
      }
    }
  }
  if (rules.empty()) return absl::NotFoundError(absl::StrCat("no README.md below ", root, " states a rule"));
  return rules;
}

absl::StatusOr<std::vector<LayeringViolation>> CheckLayering(const std::string& root) {
  absl::StatusOr<std::vector<LayeringRule>> rules = ReadLayeringRules(root);
  if (!rules.ok()) return rules.status();
  absl::StatusOr<std::vector<std::string>> files = FilesBelow(root);
  if (!files.ok()) return files.status();
  IncludeGraph graph{fs::path(root)};
  std::vector<LayeringViolation> violations;
  for (const std::string& file : *files) {
    if (!IsSource(file)) continue;
    const bool is_test = IsTest(file);
    std::vector<const LayeringRule*> applicable;
    for (const LayeringRule& rule : *rules) {
      if (!absl::StartsWith(file, rule.folder)) continue;
      if (rule.tests_exempt && is_test) continue;
      applicable.push_back(&rule);
    }
    for (const Reached& reached : ReachableIncludes(file, graph)) {
      bool broke_a_rule = false;
      for (const LayeringRule* rule : applicable) {
        if (!absl::StartsWith(reached.name, rule->prefix)) continue;
        violations.push_back({.file = file, .line = reached.line, .forbidden_include = reached.name,
                              .via = reached.via, .rule = *rule});
        broke_a_rule = true;
      }
      // Wherever it is, a test's helper is for tests only (said once: a rule may say it already).
      if (!broke_a_rule && !is_test && reached.in_project && IsTest(reached.name)) {
        violations.push_back({.file = file, .line = reached.line, .forbidden_include = reached.name,
                              .via = reached.via,
                              .rule = {.readme = "testing/layering.h", .prefix = reached.name, .tests_exempt = true}});
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
  if (violation.rule.folder.empty() && violation.rule.prefix == violation.forbidden_include) {
    return absl::StrCat(out, ", a test helper: only tests and benchmarks include those (testing/layering.h)");
  }
  absl::StrAppend(&out, ", which ", violation.rule.readme, " says ",
                  violation.rule.folder.empty() ? "the tree" : violation.rule.folder, " never includes",
                  violation.rule.tests_exempt ? " outside tests" : "", " (`", violation.rule.prefix, "`)");
  return out;
}

absl::StatusOr<std::vector<IncludeCycle>> FindIncludeCycles(const std::string& root, const std::string& folder) {
  std::string prefix = fs::path(folder).generic_string();
  if (!prefix.empty() && !absl::EndsWith(prefix, "/")) prefix += "/";
  absl::StatusOr<std::vector<std::string>> files = FilesBelow(fs::path(root) / prefix);
  if (!files.ok()) return files.status();
  IncludeGraph graph{fs::path(root)};
  UnitIncludes includes;
  for (const std::string& below : *files) {
    if (!IsSource(below)) continue;
    const std::string file = prefix + below;
    const std::string unit = UnitOf(file);
    std::map<std::string, CycleStep>& nexts = includes[unit];
    for (const Include& include : graph.IncludesOf(file)) {
      const std::optional<std::string> header = graph.Resolve(file, include);
      if (!header || !absl::StartsWith(*header, prefix) || !IsSource(*header) || UnitOf(*header) == unit) continue;
      nexts.try_emplace(UnitOf(*header),
                        CycleStep{.unit = unit, .file = file, .line = include.line, .includes = *header});
    }
  }
  if (includes.empty()) return absl::NotFoundError(absl::StrCat(root, "/", prefix, ": no source file below"));
  // Each include u -> v closes a cycle when v leads back to u; the shortest
  // way back gives the shortest such cycle. Rotated to start at its least
  // unit, a cycle closed by several includes is found once.
  std::set<std::vector<std::string>> rings;
  for (const auto& [unit, nexts] : includes) {
    for (const auto& [next, step] : nexts) {
      std::vector<std::string> ring = ShortestWay(includes, next, unit);
      if (ring.empty()) continue;
      ring.pop_back();
      ring.insert(ring.begin(), unit);
      std::rotate(ring.begin(), std::min_element(ring.begin(), ring.end()), ring.end());
      rings.insert(std::move(ring));
    }
  }
  std::vector<IncludeCycle> cycles;
  for (const std::vector<std::string>& ring : rings) {
    IncludeCycle& cycle = cycles.emplace_back();
    for (size_t i = 0; i < ring.size(); ++i) cycle.steps.push_back(includes[ring[i]].at(ring[(i + 1) % ring.size()]));
  }
  return cycles;
}

std::string DescribeCycle(const IncludeCycle& cycle) {
  std::vector<std::string> units;
  std::vector<std::string> steps;
  for (const CycleStep& step : cycle.steps) {
    units.push_back(step.unit);
    steps.push_back(absl::StrCat(step.file, ":", step.line, " includes ", step.includes));
  }
  if (!units.empty()) units.push_back(units.front());
  return absl::StrCat("include cycle ", absl::StrJoin(units, " -> "), ": ", absl::StrJoin(steps, ", "));
}

}  // namespace footprint::layering
