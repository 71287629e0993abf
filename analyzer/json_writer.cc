#include "analyzer/json_writer.h"

#include <cassert>

#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kIndent = 2;  // dump(2): two spaces per level.

// Printable ASCII: nlohmann writes it as is, escaping only '"' and '\'.
bool IsPrintableAscii(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) return false;
  }
  return true;
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
  text_.append(open_.back().is_empty ? "\n" : ",\n");
  open_.back().is_empty = false;
  text_.append(open_.size() * kIndent, ' ');
  AppendQuoted(key);
  text_.append(": ");
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
  absl::StrAppend(&text_, value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  text_.append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  text_.append("null");
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  // nlohmann's shortest round-trip form (with its ".0" and exponent rules);
  // a report has a handful of doubles, so its own printer is cheap enough.
  BeforeValue();
  text_.append(Json(value).dump());
  return *this;
}

JsonWriter& JsonWriter::Embed(const nlohmann::ordered_json& value) {
  BeforeValue();
  // A dumped value has no raw newline inside its strings (dump escapes them),
  // so each newline is a line break of the layout: indent it to our depth.
  const std::string dumped = value.dump(kIndent, ' ', false, Json::error_handler_t::replace);
  const size_t depth_spaces = open_.size() * kIndent;
  for (const char c : dumped) {
    text_.push_back(c);
    if (c == '\n') text_.append(depth_spaces, ' ');
  }
  return *this;
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) {
    assert(text_.empty() && "one top-level value only");
    return;
  }
  assert(!open_.back().is_object && "a value in an object needs a Key first");
  text_.append(open_.back().is_empty ? "\n" : ",\n");
  open_.back().is_empty = false;
  text_.append(open_.size() * kIndent, ' ');
}

void JsonWriter::Open(char bracket, bool is_object) {
  BeforeValue();
  text_.push_back(bracket);
  open_.push_back({.is_object = is_object});
}

void JsonWriter::Close(char bracket, [[maybe_unused]] bool is_object) {
  assert(!open_.empty() && open_.back().is_object == is_object && !after_key_);
  const bool was_empty = open_.back().is_empty;
  open_.pop_back();
  if (!was_empty) {
    text_.push_back('\n');
    text_.append(open_.size() * kIndent, ' ');
  }
  text_.push_back(bracket);
}

void JsonWriter::AppendQuoted(std::string_view value) {
  if (!IsPrintableAscii(value)) {
    // Control characters, UTF-8 and invalid bytes: nlohmann's own escaping
    // and U+FFFD replacement, so the text stays identical to dump()'s.
    text_.append(Json(std::string(value)).dump(-1, ' ', false, Json::error_handler_t::replace));
    return;
  }
  text_.push_back('"');
  for (const char c : value) {
    if (c == '"' || c == '\\') text_.push_back('\\');
    text_.push_back(c);
  }
  text_.push_back('"');
}

}  // namespace footprint
