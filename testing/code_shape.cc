#include "testing/code_shape.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "testing/source_tree.h"

namespace footprint::layering {
namespace {

namespace fs = std::filesystem;

bool IsWordChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The end of the preprocessing number that starts at `at` (a digit): digits,
// letters, '.', digit separators (1'000) and exponent signs (1e+5).
size_t NumberEnd(absl::string_view text, size_t at) {
  size_t end = at;
  while (end < text.size()) {
    const char c = text[end];
    const bool separator = c == '\'' && end + 1 < text.size() && IsWordChar(text[end + 1]);
    const bool sign = (c == '+' || c == '-') && absl::StrContains("eEpP", text[end - 1]);
    if (!IsWordChar(c) && c != '.' && !separator && !sign) break;
    ++end;
  }
  return end;
}

// The end (one past the closing quote) of the literal whose opening quote
// is at `at`; a raw string's when `raw`. An unclosed one ends its line.
size_t LiteralEnd(absl::string_view text, size_t at, bool raw) {
  if (raw) {
    const size_t open = text.find('(', at);
    if (open == absl::string_view::npos) return text.size();
    const std::string close = absl::StrCat(")", text.substr(at + 1, open - at - 1), "\"");
    const size_t found = text.find(close, open);
    return found == absl::string_view::npos ? text.size() : found + close.size();
  }
  const char quote = text[at];
  size_t end = at + 1;
  while (end < text.size() && text[end] != quote && text[end] != '\n') end += text[end] == '\\' ? 2 : 1;
  return std::min(end + 1, text.size());
}

// Blanks the lines of every #include (whose targets are not identifiers),
// or with `all` of every preprocessor directive, its continued lines too.
void BlankDirectives(std::string& code, bool all) {
  size_t at = 0;
  while (at < code.size()) {
    const size_t end = std::min(code.find('\n', at), code.size());
    absl::string_view line = absl::StripLeadingAsciiWhitespace(absl::string_view(code).substr(at, end - at));
    if (absl::ConsumePrefix(&line, "#") &&
        (all || absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "include"))) {
      size_t last = end;  // The end of the directive's last line: a line ending in '\' goes on.
      auto goes_on = [&] {
        return absl::EndsWith(absl::StripTrailingAsciiWhitespace(absl::string_view(code).substr(at, last - at)), "\\");
      };
      while (last < code.size() && goes_on()) last = std::min(code.find('\n', last + 1), code.size());
      for (size_t i = at; i < last; ++i) {
        if (code[i] != '\n') code[i] = ' ';
      }
      at = last + 1;
    } else {
      at = end + 1;
    }
  }
}

}  // namespace

std::string CodeOnly(absl::string_view source) {
  std::string code(source);
  auto blank = [&code](size_t from, size_t to) {
    for (size_t i = from; i < to && i < code.size(); ++i) {
      if (code[i] != '\n') code[i] = ' ';
    }
  };
  size_t at = 0;
  while (at < source.size()) {
    const absl::string_view rest = source.substr(at);
    if (absl::StartsWith(rest, "//")) {
      const size_t end = std::min(source.find('\n', at), source.size());
      blank(at, end);
      at = end;
    } else if (absl::StartsWith(rest, "/*")) {
      const size_t close = source.find("*/", at + 2);
      const size_t end = close == absl::string_view::npos ? source.size() : close + 2;
      blank(at, end);
      at = end;
    } else if (absl::ascii_isdigit(static_cast<unsigned char>(source[at]))) {
      at = NumberEnd(source, at);
    } else if (IsWordChar(source[at])) {
      size_t end = at;
      while (end < source.size() && IsWordChar(source[end])) ++end;
      const absl::string_view word = source.substr(at, end - at);
      const bool quote_follows = end < source.size() && (source[end] == '"' || source[end] == '\'');
      const bool raw = quote_follows && source[end] == '"' &&
                       (word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R");
      const bool prefix = quote_follows && (word == "L" || word == "u" || word == "U" || word == "u8");
      if (raw || prefix) {
        const size_t literal_end = LiteralEnd(source, end, raw);
        blank(end + 1, literal_end - 1);
        at = literal_end;
      } else {
        at = end;
      }
    } else if (source[at] == '"' || source[at] == '\'') {
      const size_t end = LiteralEnd(source, at, /*raw=*/false);
      blank(at + 1, end - 1);
      at = end;
    } else {
      ++at;
    }
  }
  return code;
}

std::string RuntimeWordIn(absl::string_view identifier) {
  std::string lowered;     // Its letters and digits, lower-cased, without the underscores.
  std::vector<bool> edge;  // edge[i]: a word part starts at lowered[i] (and one past the end).
  bool after_underscore = false;
  for (size_t i = 0; i < identifier.size(); ++i) {
    const unsigned char c = identifier[i];
    if (c == '_') {
      after_underscore = true;
      continue;
    }
    bool starts = lowered.empty() || after_underscore;
    if (!starts) {
      const unsigned char before = identifier[i - 1];
      const bool next_lower = i + 1 < identifier.size() && absl::ascii_islower(identifier[i + 1]);
      starts = (absl::ascii_isupper(c) && (absl::ascii_islower(before) || absl::ascii_isdigit(before))) ||
               (absl::ascii_isupper(c) && absl::ascii_isupper(before) && next_lower) ||
               (absl::ascii_isdigit(c) != absl::ascii_isdigit(before));
    }
    edge.push_back(starts);
    lowered.push_back(absl::ascii_tolower(c));
    after_underscore = false;
  }
  edge.push_back(true);
  for (absl::string_view word : kRuntimeWords) {
    const std::string joined = absl::StrReplaceAll(word, {{"_", ""}});
    for (size_t at = lowered.find(joined); at != std::string::npos; at = lowered.find(joined, at + 1)) {
      const size_t end = at + joined.size();
      if (edge[at] && (edge[end] || (lowered[end] == 's' && edge[end + 1]))) return std::string(word);
    }
  }
  return "";
}

std::vector<RuntimeName> RuntimeNamesIn(absl::string_view source) {
  std::string code = CodeOnly(source);
  BlankDirectives(code, /*all=*/false);
  std::vector<RuntimeName> names;
  std::set<std::pair<int, std::string>> seen;  // Each identifier once a line.
  int line = 1;
  size_t at = 0;
  while (at < code.size()) {
    if (code[at] == '\n') ++line;
    if (!IsWordChar(code[at])) {
      ++at;
      continue;
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(code[at]))) {
      at = NumberEnd(code, at);
      continue;
    }
    size_t end = at;
    while (end < code.size() && IsWordChar(code[end])) ++end;
    const std::string identifier = code.substr(at, end - at);
    std::string word = RuntimeWordIn(identifier);
    if (!word.empty() && seen.insert({line, identifier}).second) {
      names.push_back({.line = line, .identifier = identifier, .word = std::move(word)});
    }
    at = end;
  }
  return names;
}

absl::StatusOr<std::vector<RuntimeName>> FindRuntimeNames(const std::string& root, const std::string& folder) {
  std::string prefix = fs::path(folder).generic_string();
  if (!prefix.empty() && !absl::EndsWith(prefix, "/")) prefix += "/";
  absl::StatusOr<std::vector<std::string>> files = FilesBelow(fs::path(root) / prefix);
  if (!files.ok()) return files.status();
  std::vector<RuntimeName> names;
  bool any_header = false;
  for (const std::string& below : *files) {
    if (fs::path(below).extension() != ".h") continue;
    any_header = true;
    const std::string file = prefix + below;
    const std::optional<std::string> text = ReadFile(fs::path(root) / file);
    if (!text) return absl::NotFoundError(absl::StrCat(file, ": cannot be read"));
    for (RuntimeName& name : RuntimeNamesIn(*text)) {
      name.file = file;
      names.push_back(std::move(name));
    }
  }
  if (!any_header) return absl::NotFoundError(absl::StrCat(root, "/", prefix, ": no header below"));
  return names;
}

std::string DescribeRuntimeName(const RuntimeName& name) {
  return absl::StrCat(name.file, ":", name.line, " names `", name.identifier, "`, which holds the runtime word `",
                      name.word, "`");
}

}  // namespace footprint::layering
