// A streaming JSON writer whose text is, byte for byte, what
// nlohmann::ordered_json::dump(2, ' ', false, error_handler_t::replace)
// prints for the same values: two-space indentation, `"key": value`, `{}` and
// `[]` when empty, strings escaped with ensure_ascii off and invalid UTF-8
// replaced by U+FFFD.
//
// Usage:
//   JsonWriter json;                     // Or JsonWriter json(sink): see below.
//   json.BeginObject();
//   json.Key("name").String("conv1");
//   json.Key("shape").BeginArray().Int(1).Int(64).EndArray();
//   json.Key("baseline").Embed(diff_json);  // An existing ordered_json value.
//   json.EndObject();
//   std::string text = std::move(json).Release();
//
// Why not build an ordered_json and dump it: the report of an 18,000-node
// model is ~40,000 small objects and arrays, 10 MB of text; building, dumping
// and freeing them took over half as long as the analysis itself.
//
// Why a sink: holding those 10 MB whole costs more than writing them (a
// fresh buffer is thousands of page faults, twice over as it doubles). With
// a sink the writer hands the text on in pieces of kSinkPieceBytes and
// reuses one small buffer.
//
// What it does not do: check the nesting. A Key outside an object, a value
// after a value in an object or an unclosed container gives invalid JSON
// (asserted in debug builds only); the callers are a few fixed functions.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_JSON_WRITER_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_JSON_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace footprint {

class JsonWriter {
 public:
  // The size of the pieces a writer with a sink hands on.
  static constexpr size_t kSinkPieceBytes = 64 * 1024;

  // Keeps the whole text: text(), Release().
  JsonWriter() = default;
  // Hands the text to `sink` in pieces as it is written; Flush() hands on
  // the rest. `sink` must outlive the writer.
  explicit JsonWriter(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {}

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

  // The text so far (with a sink: what it has not been handed yet);
  // complete once every container is closed.
  std::string_view text() const { return std::string_view(buffer_.data(), size_); }
  std::string Release() &&;
  // Hands what is buffered to the sink, if there is one.
  void Flush();

 private:
  struct OpenContainer {
    bool is_object = false;  // Else an array.
    bool is_empty = true;    // No member written yet: it closes as {} or [].
  };

  // Room for at least `bytes` more characters after the text: returns where
  // they go. Commit(end) then keeps what was written up to `end`.
  char* Room(size_t bytes) {
    if (size_ + bytes > buffer_.size()) Grow(bytes);
    return buffer_.data() + size_;
  }
  void Commit(const char* end) { size_ = static_cast<size_t>(end - buffer_.data()); }
  // Makes room for `bytes`: hands the buffer to the sink, or enlarges it.
  void Grow(size_t bytes);
  void Append(std::string_view piece);
  // The separator before a member ("," unless it is the first), a line break
  // and the indentation of `depth`, then `closing` when not '\0'.
  void AppendBreak(bool first, size_t depth, char closing = '\0');
  // Separator, line break and indentation before a value (none after a Key).
  void BeforeValue();
  void Open(char bracket, bool is_object);
  void Close(char bracket, bool is_object);
  void AppendQuoted(std::string_view value);

  // The text is buffer_[0, size_); the rest is room to grow into. Writing
  // into spare room, not appending piece by piece through std::string, is
  // what makes this fast: a big report is ~500,000 short lines.
  std::string buffer_;
  size_t size_ = 0;
  std::function<void(std::string_view)> sink_;  // Empty: keep the whole text.
  std::vector<OpenContainer> open_;  // Innermost last; its size is the depth.
  bool after_key_ = false;           // A Key was written; its value comes next.
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_JSON_WRITER_H_
