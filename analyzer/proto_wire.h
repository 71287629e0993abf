// A bounds-checked reader and writer for the protobuf wire format.
//
// Why: the loader walks a model's bytes without parsing them into messages, so
// that it can skip the payloads of large tensors without copying (or even
// touching) them. Every read is checked against the end of its message: a
// malformed varint, a length past the end or an unsupported wire type is an
// InvalidArgument naming the byte offset, never a crash or a hang.
#ifndef ONNX_FOOTPRINT_ANALYZER_PROTO_WIRE_H_
#define ONNX_FOOTPRINT_ANALYZER_PROTO_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace footprint::wire {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,  // Deprecated groups: ONNX never uses them, so they are refused.
  kEndGroup = 4,
  kFixed32 = 5,
};

struct Field {
  uint32_t number = 0;                    // Field number (1 .. 2^29-1).
  WireType type = WireType::kVarint;      // How the value is encoded.
  uint64_t varint = 0;                    // The value of a kVarint field.
  std::string_view payload;               // The bytes of a length-delimited or fixed field.
  std::string_view raw;                   // The whole field (tag, length, payload), to copy verbatim.
};

// Reads the fields of one message in order.
//
//   Reader reader(message_bytes, file_begin);
//   Field field;
//   while (reader.Next(field)) {
//     ...
//   }
//   if (!reader.ok()) return reader.status();
//
// Why Next returns a bool, not a StatusOr: the loader reads a few hundred
// thousand fields per large model; the common case (one-byte tag, short
// length) is decoded inline, and a Status is built only for malformed input.
class Reader {
 public:
  // `origin` is where the whole input starts; errors give offsets from it.
  Reader(std::string_view bytes, const char* origin)
      : begin_(bytes.data()), pos_(bytes.data()), end_(bytes.data() + bytes.size()), origin_(origin) {}

  // Reads the next field: true when one was read; false at the end of the
  // message or on malformed input (then ok() is false).
  bool Next(Field& field);

  bool ok() const { return error_ == nullptr; }
  // OK, or InvalidArgument naming what is malformed and its byte offset from `origin`.
  absl::Status status() const;

 private:
  bool NextSlow(Field& field);
  bool Fail(const char* what, const char* at) {
    error_ = what;
    error_at_ = at;
    return false;
  }

  const char* begin_;
  const char* pos_;
  const char* end_;
  const char* origin_;
  const char* error_ = nullptr;     // What is malformed; nullptr while the input is well formed.
  const char* error_at_ = nullptr;  // Where.
};

inline bool Reader::Next(Field& field) {
  if (pos_ >= end_ || error_ != nullptr) return false;
  // Fast path: a one-byte tag of a varint or length-delimited field whose
  // value or length fits in one byte; anything else takes NextSlow.
  if (end_ - pos_ >= 2) {
    const uint8_t tag = static_cast<uint8_t>(pos_[0]);
    const uint8_t next = static_cast<uint8_t>(pos_[1]);
    if (tag < 0x80 && tag >= 8 && next < 0x80) {
      if ((tag & 7) == 0) {
        field.number = tag >> 3;
        field.type = WireType::kVarint;
        field.varint = next;
        field.payload = {};
        field.raw = std::string_view(pos_, 2);
        pos_ += 2;
        return true;
      }
      if ((tag & 7) == 2 && next <= end_ - pos_ - 2) {
        field.number = tag >> 3;
        field.type = WireType::kLengthDelimited;
        field.varint = 0;
        field.payload = std::string_view(pos_ + 2, next);
        field.raw = std::string_view(pos_, 2 + next);
        pos_ += 2 + next;
        return true;
      }
    }
  }
  return NextSlow(field);
}

// Decodes a varint at `pos` of `bytes`, advancing `pos`; false when malformed or truncated.
bool DecodeVarint(std::string_view bytes, size_t& pos, uint64_t& value);

// Appends an encoded varint / tag / length-delimited field to `out`.
void AppendVarint(std::string& out, uint64_t value);
void AppendTag(std::string& out, uint32_t number, WireType type);
void AppendLengthDelimited(std::string& out, uint32_t number, std::string_view payload);

// A varint always written on 5 bytes (continuation bits on the first four):
// protobuf decoders accept such redundant encodings, which lets a writer
// reserve a length before it knows it, then fill it in.
inline constexpr size_t kPaddedVarint32Size = 5;
void WritePaddedVarint32(char* at, uint32_t value);

}  // namespace footprint::wire

#endif  // ONNX_FOOTPRINT_ANALYZER_PROTO_WIRE_H_
