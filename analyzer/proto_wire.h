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
//   while (true) {
//     absl::StatusOr<bool> more = reader.Next(field);
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     ...
//   }
class Reader {
 public:
  // `origin` is where the whole input starts; errors give offsets from it.
  Reader(std::string_view bytes, const char* origin) : bytes_(bytes), origin_(origin) {}

  // Reads the next field: true when one was read, false at the end of the message.
  absl::StatusOr<bool> Next(Field& field);

 private:
  absl::StatusOr<uint64_t> ReadVarint();
  absl::Status Malformed(std::string_view what) const;

  std::string_view bytes_;
  size_t pos_ = 0;
  const char* origin_;
};

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
