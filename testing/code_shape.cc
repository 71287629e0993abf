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
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
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

// A token of the code before a brace (its head): a word, "::", "->" or any
// other character.
struct Token {
  std::string text;
  size_t at = 0;  // Its offset in the head.
};

std::vector<Token> Tokens(absl::string_view head) {
  std::vector<Token> tokens;
  size_t at = 0;
  while (at < head.size()) {
    if (absl::ascii_isspace(static_cast<unsigned char>(head[at]))) {
      ++at;
      continue;
    }
    size_t end = at + 1;
    if (IsWordChar(head[at])) {
      while (end < head.size() && IsWordChar(head[end])) ++end;
    } else if (absl::StartsWith(head.substr(at), "::") || absl::StartsWith(head.substr(at), "->")) {
      end = at + 2;
    }
    tokens.push_back({std::string(head.substr(at, end - at)), at});
    at = end;
  }
  return tokens;
}

bool IsWord(absl::string_view token) { return !token.empty() && IsWordChar(token[0]); }

// A macro's name: capitals, digits and underscores (TEST_F, ABSL_DEPRECATED).
bool IsMacroName(absl::string_view token) {
  return token.size() > 1 && absl::ascii_isupper(static_cast<unsigned char>(token[0])) &&
         std::all_of(token.begin(), token.end(),
                     [](char c) { return absl::ascii_isupper(c) || c == '_' || absl::ascii_isdigit(c); });
}

// What a '{' outside any function opens, told from its head.
struct Brace {
  enum class Kind {
    kScope,     // A namespace or an extern "C" block: more definitions inside.
    kClass,     // A class, struct or union: more definitions inside, named after it.
    kFunction,  // A function's body (or a lambda's, bound to a variable).
    kOther,     // An initializer or an enum's list: part of the head, skipped.
  } kind = Kind::kOther;
  std::string name;  // A class's or function's (not yet qualified by the classes around it).
  size_t at = 0;     // The head's offset of a function's name.
};

// The head's tokens with the depth of brackets, parentheses and (after a
// word: a template's) angle brackets each is in, a pair at the depth around
// it; `balanced` false when a '(' or '[' is still open at its end (a brace in
// a call's arguments).
struct Head {
  std::vector<Token> tokens;
  std::vector<int> depth;  // Of each token; 0: top level.
  bool balanced = true;

  explicit Head(absl::string_view text) : tokens(Tokens(text)) {
    int brackets = 0, angles = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i].text;
      const bool after_operator = i > 0 && tokens[i - 1].text == "operator";
      if (t == ")" || t == "]" || t == "}") --brackets;
      if (t == ">" && angles > 0 && !after_operator) --angles;
      depth.push_back(brackets + angles);
      if (t == "(" || t == "[" || t == "{") ++brackets;
      if (t == "<" && i > 0 && IsWord(tokens[i - 1].text) && !after_operator) ++angles;
    }
    balanced = brackets == 0;
  }

  // The first top-level token `text` from `from` on, or -1.
  int Find(absl::string_view text, int from = 0) const {
    for (int i = from; i < static_cast<int>(tokens.size()); ++i) {
      if (depth[i] == 0 && tokens[i].text == text) return i;
    }
    return -1;
  }

  // The index of the token that closes the bracket opened at `open`.
  int Closing(int open) const {
    for (int i = open + 1; i < static_cast<int>(tokens.size()); ++i) {
      if (depth[i] == depth[open] && (tokens[i].text == ")" || tokens[i].text == "]" || tokens[i].text == "}")) {
        return i;
      }
    }
    return static_cast<int>(tokens.size()) - 1;
  }

  // The first top-level '=' that is an assignment, not an operator's name or part of ==, <=, ...
  int Assignment() const {
    for (int i = 0; i < static_cast<int>(tokens.size()); ++i) {
      if (depth[i] != 0 || tokens[i].text != "=") continue;
      const std::string before = i > 0 ? tokens[i - 1].text : "";
      const std::string after = i + 1 < static_cast<int>(tokens.size()) ? tokens[i + 1].text : "";
      if (before == "operator" || absl::StrContains("=!<>+-*/%&|^", before) || after == "=") continue;
      return i;
    }
    return -1;
  }

  // The '(' of the parameter list: the first top-level one that is not
  // decltype's, an attribute's, operator()'s name or a macro's before
  // another (ABSL_DEPRECATED("") int F()); -1 when there is none.
  int Parameters() const {
    std::vector<int> candidates;
    for (int i = 1; i < static_cast<int>(tokens.size()); ++i) {
      if (depth[i] != 0 || tokens[i].text != "(") continue;
      const std::string& before = tokens[i - 1].text;
      if (before == "decltype" || before == "alignas" || before == "__attribute__" || before == "__declspec" ||
          before == "noexcept" || before == "throw" || before == "requires" || before == "operator") {
        continue;
      }
      candidates.push_back(i);
    }
    for (int i : candidates) {
      if (!IsMacroName(tokens[i - 1].text)) return i;
    }
    return candidates.empty() ? -1 : candidates.front();
  }

  // The qualified name that ends just before token `end` ("A::B", "~A",
  // "A::operator==") and the index of its first token.
  std::pair<std::string, int> NameBefore(int end) const {
    std::string name;
    int first = end;
    const int op = Find("operator");
    if (op >= 0 && op < end) {  // operator==, operator(), operator bool: every token up to the parameters.
      name = "operator";
      for (int i = op + 1; i < end; ++i) {
        absl::StrAppend(&name, IsWord(tokens[i].text) && IsWord(tokens[i - 1].text) ? " " : "", tokens[i].text);
      }
      first = op;
    } else if (first > 0 && IsWord(tokens[first - 1].text)) {
      name = tokens[--first].text;
      if (first > 0 && tokens[first - 1].text == "~") name = tokens[--first].text + name;
    }
    while (first > 1 && tokens[first - 1].text == "::" && IsWord(tokens[first - 2].text)) {
      name = absl::StrCat(tokens[first - 2].text, "::", name);
      first -= 2;
    }
    return {name, first};
  }
};

Brace Classify(absl::string_view text) {
  const Head head(text);
  const std::vector<Token>& tokens = head.tokens;
  if (tokens.empty() || !head.balanced) return {};
  if (head.Find("namespace") >= 0) return {.kind = Brace::Kind::kScope};
  const int parameters = head.Parameters();
  if (tokens[0].text == "extern" && parameters < 0) return {.kind = Brace::Kind::kScope};  // extern "C" {
  const int assignment = head.Assignment();
  if (assignment >= 0 && (parameters < 0 || assignment < parameters)) {
    if (assignment + 1 >= static_cast<int>(tokens.size()) || tokens[assignment + 1].text != "[") return {};
    auto [name, first] = head.NameBefore(assignment);  // A lambda bound to a variable.
    return {.kind = Brace::Kind::kFunction, .name = name, .at = tokens[first].at};
  }
  if (head.Find("enum") >= 0) return {};
  for (const char* keyword : {"class", "struct", "union"}) {
    const int at = head.Find(keyword);
    if (at < 0 || (parameters >= 0 && parameters < at)) continue;
    for (int i = at + 1; i < static_cast<int>(tokens.size()); ++i) {
      const bool called = i + 1 < static_cast<int>(tokens.size()) && tokens[i + 1].text == "(";  // alignas(8)
      if (head.depth[i] == 0 && IsWord(tokens[i].text) && !called) return {Brace::Kind::kClass, tokens[i].text};
    }
    return {.kind = Brace::Kind::kClass};  // Anonymous.
  }
  if (parameters < 0) return {};  // int x{3}, Point p{1, 2}: an initializer.
  const int closing = head.Closing(parameters);
  // After the parameters: a constructor's initializers (the body's brace
  // comes after one's ')' or '}', any other is an initializer's), or another
  // declarator (int a(1), b{2}: an initializer).
  if (head.Find(":", closing) >= 0) {
    if (tokens.back().text != ")" && tokens.back().text != "}") return {};
  } else if (head.Find(",", closing) >= 0) {
    return {};
  }
  auto [name, first] = head.NameBefore(parameters);
  if (IsMacroName(name)) {  // TEST(Suite, Name): the call is the name.
    const size_t from = tokens[parameters].at;
    name += absl::StrJoin(
        absl::StrSplit(text.substr(from, tokens[closing].at + 1 - from), absl::ByAnyChar(" \n\t"), absl::SkipEmpty()),
        " ");
  }
  return {.kind = Brace::Kind::kFunction, .name = name, .at = tokens[std::max(first, 0)].at};
}

// The offset of the '}' that closes the '{' at `open`, or nullopt.
std::optional<size_t> ClosingBrace(absl::string_view code, size_t open) {
  int depth = 0;
  for (size_t at = open; at < code.size(); ++at) {
    if (code[at] == '{') ++depth;
    if (code[at] == '}' && --depth == 0) return at;
  }
  return std::nullopt;
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

absl::StatusOr<std::vector<FunctionSpan>> FunctionsIn(absl::string_view source) {
  std::string code = CodeOnly(source);
  BlankDirectives(code, /*all=*/true);
  struct Scope {
    std::string class_name;  // "" for a namespace, an extern "C" block, an anonymous class.
    int line = 0;            // Of its '{'.
  };
  std::vector<Scope> scopes;
  std::vector<FunctionSpan> functions;
  std::string head;             // The code since the last ';', or '{' or '}' of a scope or function.
  std::vector<int> head_lines;  // The line of each of its characters.
  auto clear_head = [&] {
    head.clear();
    head_lines.clear();
  };
  int line = 1;
  for (size_t at = 0; at < code.size(); ++at) {
    const char c = code[at];
    if (c == ';' || c == '}') {
      if (c == '}' && scopes.empty())
        return absl::InvalidArgumentError(absl::StrCat("line ", line, ": '}' closes nothing"));
      if (c == '}') scopes.pop_back();
      clear_head();
      continue;
    }
    if (c != '{') {
      if (c == '\n') ++line;
      head.push_back(c);
      head_lines.push_back(line);
      if (c == ':') {  // An access label: no part of what follows.
        const absl::string_view label = absl::StripAsciiWhitespace(head);
        if (label == "public:" || label == "protected:" || label == "private:") clear_head();
      }
      continue;
    }
    const Brace brace = Classify(head);
    if (brace.kind == Brace::Kind::kScope || brace.kind == Brace::Kind::kClass) {
      scopes.push_back({.class_name = brace.name, .line = line});
      clear_head();
      continue;
    }
    // A function's body or an initializer: everything up to its closing brace.
    const std::optional<size_t> close = ClosingBrace(code, at);
    if (!close) return absl::InvalidArgumentError(absl::StrCat("line ", line, ": '{' that nothing closes"));
    const int close_line = line + static_cast<int>(std::count(code.begin() + at, code.begin() + *close, '\n'));
    if (brace.kind == Brace::Kind::kFunction) {
      std::string name;
      for (const Scope& scope : scopes) {
        if (!scope.class_name.empty()) absl::StrAppend(&name, scope.class_name, "::");
      }
      functions.push_back({.line = head_lines[brace.at], .name = name + brace.name, .lines = close_line - line + 1});
      clear_head();
    } else {
      head += "{}";
      head_lines.insert(head_lines.end(), {line, close_line});
    }
    line = close_line;
    at = *close;
  }
  if (!scopes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("line ", scopes.back().line, ": '{' that nothing closes"));
  }
  return functions;
}

absl::StatusOr<std::vector<FunctionSpan>> FindLongFunctions(const std::string& root, const std::string& folder,
                                                            int max_lines) {
  std::string prefix = fs::path(folder).generic_string();
  if (!prefix.empty() && !absl::EndsWith(prefix, "/")) prefix += "/";
  absl::StatusOr<std::vector<std::string>> files = FilesBelow(fs::path(root) / prefix);
  if (!files.ok()) return files.status();
  std::vector<FunctionSpan> long_ones;
  bool any_source = false;
  for (const std::string& below : *files) {
    const std::string file = prefix + below;
    if (!IsSource(file) || IsTest(file)) continue;
    any_source = true;
    const std::optional<std::string> text = ReadFile(fs::path(root) / file);
    if (!text) return absl::NotFoundError(absl::StrCat(file, ": cannot be read"));
    absl::StatusOr<std::vector<FunctionSpan>> functions = FunctionsIn(*text);
    if (!functions.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ": ", functions.status().message()));
    for (FunctionSpan& function : *functions) {
      if (function.lines <= max_lines) continue;
      function.file = file;
      long_ones.push_back(std::move(function));
    }
  }
  if (!any_source) return absl::NotFoundError(absl::StrCat(root, "/", prefix, ": no source below but tests"));
  return long_ones;
}

std::string DescribeLongFunction(const FunctionSpan& function, int max_lines) {
  return absl::StrCat(function.file, ":", function.line, " ", function.name, " is ", function.lines,
                      " lines from brace to brace (at most ", max_lines, ")");
}

}  // namespace footprint::layering
