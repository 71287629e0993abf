// A bounds-checked reader and writer for the protobuf wire format.
//
// Why: the loader walks a model's bytes without parsing them into messages, so
// that it can skip the payloads of large tensors without reading them. Every
// read is checked against the end of its message: a malformed varint, a
// length past the end or an unsupported wire type is an InvalidArgument
// naming the byte offset, never a crash or a hang.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_PROTO_WIRE_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_PROTO_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
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

// A range of bytes of the input, by offset from its start.
struct Span {
  uint64_t offset = 0;  // First byte.
  uint64_t size = 0;    // Bytes.
  uint64_t end() const { return offset + size; }
};

// The bytes of a model: in memory, or an open file read on demand.
//
// Why not map the file: the walk skips the weights but reads the few bytes
// before and after each one. On a mapping every page it touches makes the
// kernel map (and the loader later unmap) 16 pages around it, nearly all
// weights: on a model of many mid-sized tensors that cost more than the rest
// of the load. Reads in small windows copy only the bytes around the
// structure, and never bring the weights into RSS.
//
// How: Bytes() and View() return views of buffers kept until Release();
// reads of a file are at least kWindowBytes, growing up to kMaxWindowBytes
// while they go forward in a row (a run of nodes), back to kWindowBytes
// after a jump (over a weight). They land in blocks of kBlockBytes, reused
// after each Release() (fresh memory would cost a page fault per 4 KiB
// read); reads over a quarter block get their own buffer. A failed read (an
// I/O error, or a file that shrank) yields zeros and makes status() an
// error, which the caller checks after the walk; the walk itself never sees
// a short view.
class Source {
 public:
  static constexpr uint64_t kWindowBytes = 2 << 10;
  static constexpr uint64_t kMaxWindowBytes = 64 << 10;
  static constexpr uint64_t kBlockBytes = 256 << 10;

  explicit Source(std::string_view bytes) : memory_(bytes), size_(bytes.size()) {}
  // `fd` stays open, and owned by the caller, while the Source is used.
  Source(int fd, uint64_t size) : fd_(fd), size_(size) {}
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  uint64_t size() const { return size_; }

  // The bytes of `span`, which lies inside the input.
  std::string_view Bytes(Span span) {
    if (fd_ < 0) return memory_.substr(span.offset, span.size);
    return Read(span.offset, span.size, /*window=*/false).substr(0, span.size);
  }
  // Bytes from `offset` on: at least `min_size` of them (which lie inside the input), maybe more.
  std::string_view View(uint64_t offset, uint64_t min_size) {
    if (fd_ < 0) return memory_.substr(offset);
    return Read(offset, min_size, /*window=*/true);
  }

  // Whether the reads since the last Release() fill half a block: time to call it.
  bool ShouldRelease() const { return buffered_bytes_ >= kBlockBytes / 2; }
  // Frees what Bytes() and View() returned; views taken before are invalid.
  void Release();
  // Counts Release() calls, so that a view can tell when it went stale.
  uint64_t generation() const { return generation_; }
  // OK, or why a read of the file failed.
  const absl::Status& status() const { return status_; }

 private:
  std::string_view Read(uint64_t offset, uint64_t min_size, bool window);
  char* Allocate(uint64_t size);

  std::string_view memory_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;  // Kept by Release(), for reuse.
  size_t block_ = 0;                             // The block reads land in.
  uint64_t block_used_ = 0;                      // Bytes of blocks_[block_] handed out.
  std::vector<std::unique_ptr<char[]>> large_;   // Reads larger than a quarter block.
  Span last_;                                    // What the newest read holds.
  const char* last_data_ = nullptr;
  uint64_t window_ = kWindowBytes;
  uint64_t buffered_bytes_ = 0;
  uint64_t generation_ = 0;
  absl::Status status_;
};

struct Field {
  uint32_t number = 0;                    // Field number (1 .. 2^29-1).
  WireType type = WireType::kVarint;      // How the value is encoded.
  uint64_t varint = 0;                    // The value of a kVarint field.
  Span payload;                           // A length-delimited or fixed field's value (not read).
  Span raw;                               // The whole field (tag, length, payload), to copy verbatim.
};

// Reads the fields of one message in order. Only tags and lengths are read:
// a payload is read when the caller asks the Source for its Bytes().
//
//   Reader reader(source, message);
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
  Reader(Source& source, Span message) : source_(&source), pos_(message.offset), end_(message.end()) {}

  // Reads the next field: true when one was read; false at the end of the
  // message or on malformed input (then ok() is false).
  bool Next(Field& field);

  bool ok() const { return error_ == nullptr; }
  // OK, or InvalidArgument naming what is malformed and its byte offset in the input.
  absl::Status status() const;

 private:
  bool NextSlow(Field& field);
  bool Fail(const char* what, uint64_t at) {
    error_ = what;
    error_at_ = at;
    return false;
  }

  Source* source_;
  uint64_t pos_;
  uint64_t end_;
  // Bytes of the input from view_offset_ on, read from source_ at generation view_generation_.
  const char* view_ = nullptr;
  uint64_t view_offset_ = 0;
  uint64_t view_size_ = 0;
  uint64_t view_generation_ = 0;
  const char* error_ = nullptr;  // What is malformed; nullptr while the input is well formed.
  uint64_t error_at_ = 0;        // Where.
};

inline bool Reader::Next(Field& field) {
  if (pos_ >= end_ || error_ != nullptr) return false;
  // Fast path: a one-byte tag of a varint or length-delimited field whose
  // value or length fits in one byte, in the bytes already at hand; anything
  // else takes NextSlow.
  const uint64_t at = pos_ - view_offset_;
  if (end_ - pos_ >= 2 && view_ != nullptr && pos_ >= view_offset_ && at + 2 <= view_size_ &&
      view_generation_ == source_->generation()) {
    const uint8_t tag = static_cast<uint8_t>(view_[at]);
    const uint8_t next = static_cast<uint8_t>(view_[at + 1]);
    if (tag < 0x80 && tag >= 8 && next < 0x80) {
      if ((tag & 7) == 0) {
        field.number = tag >> 3;
        field.type = WireType::kVarint;
        field.varint = next;
        field.payload = {pos_ + 2, 0};
        field.raw = {pos_, 2};
        pos_ += 2;
        return true;
      }
      if ((tag & 7) == 2 && next <= end_ - pos_ - 2) {
        field.number = tag >> 3;
        field.type = WireType::kLengthDelimited;
        field.varint = 0;
        field.payload = {pos_ + 2, next};
        field.raw = {pos_, 2u + next};
        pos_ += 2 + next;
        return true;
      }
    }
  }
  return NextSlow(field);
}

// Decodes a varint at `pos` of `bytes`, advancing `pos`; false when malformed or truncated.
bool DecodeVarint(std::string_view bytes, size_t& pos, uint64_t& value);

// The bytes `value` takes as a varint (1 to 10).
size_t VarintSize(uint64_t value);

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

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_PROTO_WIRE_H_
