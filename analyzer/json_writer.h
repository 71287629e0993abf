// A streaming JSON writer whose text is, byte for byte, what
// nlohmann::ordered_json::dump(2, ' ', false, error_handler_t::replace)
// prints for the same values: two-space indentation, `"key": value`, `{}` and
// `[]` when empty, strings escaped with ensure_ascii off and invalid UTF-8
// replaced by U+FFFD.
//
// Usage:
//   JsonWriter json;
//   json.BeginObject();
//   json.Key("name").String("conv1");
//   json.Key("shape").BeginArray().Int(1).Int(64).EndArray();
//   json.Key("baseline").Embed(diff_json);  // An existing ordered_json value.
//   json.EndObject();
//   std::string text = std::move(json).Release();
//
// Why not build an ordered_json and dump it: the report of an 18,000-node
// model is ~40,000 small objects and arrays; allocating them, dumping them and
// freeing them cost more than the whole analysis. Writing the text directly
// costs an append per value.
//
// What it does not do: check the nesting. A Key outside an object, a value
// after a value in an object or an unclosed container gives invalid JSON
// (asserted in debug builds only); the callers are a few fixed functions.
#ifndef ONNX_FOOTPRINT_ANALYZER_JSON_WRITER_H_
#define ONNX_FOOTPRINT_ANALYZER_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace footprint {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();

  // The next value written is this key's (inside an object only).
  JsonWriter& Key(std::string_view key);

  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // As nlohmann prints a double: shortest round-trip digits ("0.1", "1e-05",
  // "100.0"), and null for NaN and infinities.
  JsonWriter& Double(double value);
  // An existing value, indented to where it lands: for small pieces that
  // already exist as a DOM (a diff against a baseline report).
  JsonWriter& Embed(const nlohmann::ordered_json& value);

  // The text so far; complete once every container is closed.
  const std::string& text() const { return text_; }
  std::string Release() && { return std::move(text_); }

 private:
  // Separator, newline and indentation before a value (none after a Key).
  void BeforeValue();
  void Open(char bracket, bool is_object);
  void Close(char bracket, bool is_object);
  void AppendQuoted(std::string_view value);

  struct OpenContainer {
    bool is_object = false;  // Else an array.
    bool is_empty = true;    // No member written yet: it closes as {} or [].
  };

  std::string text_;
  std::vector<OpenContainer> open_;  // Innermost last; its size is the depth.
  bool after_key_ = false;           // A Key was written; its value comes next.
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_JSON_WRITER_H_
