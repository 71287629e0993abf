#include "analyzer/report/json_writer.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>

#include "absl/strings/numbers.h"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kIndent = 2;  // dump(2): two spaces per level.

// ",\n" and spaces: a separator, line break and indentation up to this deep
// are one copy of a fixed size, which the compiler turns into a few stores.
constexpr size_t kShallowSpaces = 32;
constexpr char kBreakAndSpaces[] = ",\n                                ";
static_assert(sizeof(kBreakAndSpaces) == 2 + kShallowSpaces + 1);

// What a string needs before nlohmann's dump would print it as we do.
enum class StringKind {
  kVerbatim,      // Printable ASCII without '"' or '\\': quoted as it is.
  kQuoteOrSlash,  // Printable ASCII with '"' or '\\': those two get a backslash.
  kOther,         // Control characters, UTF-8 or invalid bytes: nlohmann's own escaping.
};

// Byte tests on eight bytes at once: the names in a big model's report add
// up to megabytes, and a byte-by-byte scan was the writer's largest cost.
// Each test is exact about whether some byte matches (a false hit can only
// sit above a true one).
constexpr uint64_t kEveryByte = 0x0101010101010101;
constexpr uint64_t kHighBits = 0x8080808080808080;

constexpr uint64_t HasByteBelow(uint64_t word, uint8_t limit) {  // limit <= 0x80.
  return (word - kEveryByte * limit) & ~word & kHighBits;
}
constexpr uint64_t HasByte(uint64_t word, uint8_t byte) { return HasByteBelow(word ^ (kEveryByte * byte), 1); }

StringKind KindOf(std::string_view text) {
  uint64_t other = 0;           // A byte below 0x20, 0x7f, or 0x80 and up.
  uint64_t quote_or_slash = 0;  // A '"' or '\\'.
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    other |= (word & kHighBits) | HasByteBelow(word, 0x20) | HasByte(word, 0x7f);
    quote_or_slash |= HasByte(word, '"') | HasByte(word, '\\');
  }
  for (; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    other |= byte < 0x20 || byte >= 0x7f;
    quote_or_slash |= byte == '"' || byte == '\\';
  }
  if (other != 0) return StringKind::kOther;
  return quote_or_slash != 0 ? StringKind::kQuoteOrSlash : StringKind::kVerbatim;
}

}  // namespace

JsonWriter& JsonWriter::BeginObject() {
  Open('{', /*is_object=*/true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  Close('}', /*is_object=*/true);
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  Open('[', /*is_object=*/false);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  Close(']', /*is_object=*/false);
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  assert(!open_.empty() && open_.back().is_object && !after_key_);
  AppendBreak(open_.back().is_empty, open_.size());
  open_.back().is_empty = false;
  AppendQuoted(key);
  char* out = Room(2);
  *out++ = ':';
  *out++ = ' ';
  Commit(out);
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendQuoted(value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  Commit(absl::numbers_internal::FastIntToBuffer(value, Room(absl::numbers_internal::kFastToBufferSize)));
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  Append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  Append("null");
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  // nlohmann's shortest round-trip form (with its ".0" and exponent rules);
  // a report has a handful of doubles, so its own printer is cheap enough.
  BeforeValue();
  Append(Json(value).dump());
  return *this;
}

JsonWriter& JsonWriter::Embed(const nlohmann::ordered_json& value) {
  BeforeValue();
  // A dumped value has no raw newline inside its strings (dump escapes them),
  // so each newline is a line break of the layout: indent it to our depth.
  const std::string dumped = value.dump(kIndent, ' ', false, Json::error_handler_t::replace);
  const std::string_view text(dumped);
  size_t line_start = 0;
  for (size_t newline = text.find('\n'); newline != std::string_view::npos; newline = text.find('\n', line_start)) {
    Append(text.substr(line_start, newline - line_start));
    AppendBreak(/*first=*/true, open_.size());
    line_start = newline + 1;
  }
  Append(text.substr(line_start));
  return *this;
}

std::string JsonWriter::Release() && {
  buffer_.resize(size_);
  size_ = 0;
  return std::move(buffer_);
}

void JsonWriter::Flush() {
  if (!sink_ || size_ == 0) return;
  sink_(std::string_view(buffer_.data(), size_));
  size_ = 0;
}

void JsonWriter::Grow(size_t bytes) {
  if (sink_) {
    Flush();
    if (bytes <= buffer_.size()) return;
  }
  // Doubling keeps the copies of a growing text linear in its size.
  buffer_.resize(std::max({buffer_.size() * 2, size_ + bytes, kSinkPieceBytes}));
}

void JsonWriter::Append(std::string_view piece) {
  if (piece.empty()) return;  // memcpy may not take the null data() of an empty view.
  char* out = Room(piece.size());
  std::memcpy(out, piece.data(), piece.size());
  Commit(out + piece.size());
}

void JsonWriter::AppendBreak(bool first, size_t depth, char closing) {
  const size_t spaces = depth * kIndent;
  const char* from = first ? kBreakAndSpaces + 1 : kBreakAndSpaces;
  const size_t length = (first ? 1 : 2) + spaces;
  char* out = Room(std::max(length, 2 + kShallowSpaces) + 1);
  if (spaces <= kShallowSpaces) {
    // The whole pattern, a fixed size; what lies past `length` is written over next.
    std::memcpy(out, from, 2 + kShallowSpaces);
  } else {
    std::memcpy(out, from, length - spaces);
    std::memset(out + length - spaces, ' ', spaces);
  }
  out += length;
  if (closing != '\0') *out++ = closing;
  Commit(out);
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) {
    assert(size_ == 0 && "one top-level value only");
    return;
  }
  assert(!open_.back().is_object && "a value in an object needs a Key first");
  AppendBreak(open_.back().is_empty, open_.size());
  open_.back().is_empty = false;
}

void JsonWriter::Open(char bracket, bool is_object) {
  BeforeValue();
  char* out = Room(1);
  *out++ = bracket;
  Commit(out);
  open_.push_back({.is_object = is_object});
}

void JsonWriter::Close(char bracket, [[maybe_unused]] bool is_object) {
  assert(!open_.empty() && open_.back().is_object == is_object && !after_key_);
  const bool was_empty = open_.back().is_empty;
  open_.pop_back();
  if (was_empty) {
    char* out = Room(1);
    *out++ = bracket;
    Commit(out);
  } else {
    AppendBreak(/*first=*/true, open_.size(), bracket);
  }
}

void JsonWriter::AppendQuoted(std::string_view value) {
  switch (KindOf(value)) {
    case StringKind::kVerbatim: {
      char* out = Room(value.size() + 2);
      *out++ = '"';
      if (!value.empty()) std::memcpy(out, value.data(), value.size());
      out += value.size();
      *out++ = '"';
      Commit(out);
      return;
    }
    case StringKind::kQuoteOrSlash: {
      char* out = Room(2 * value.size() + 2);
      *out++ = '"';
      for (const char c : value) {
        if (c == '"' || c == '\\') *out++ = '\\';
        *out++ = c;
      }
      *out++ = '"';
      Commit(out);
      return;
    }
    case StringKind::kOther:
      // Rare in a report: nlohmann's escaping and U+FFFD replacement keep
      // the text identical to dump()'s.
      Append(Json(std::string(value)).dump(-1, ' ', false, Json::error_handler_t::replace));
      return;
  }
}

}  // namespace footprint
