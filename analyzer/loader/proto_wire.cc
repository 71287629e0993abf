#include "analyzer/loader/proto_wire.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace footprint::wire {

bool DecodeVarint(std::string_view bytes, size_t& pos, uint64_t& value) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= bytes.size()) return false;
    const uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
    // The tenth byte may only hold the 64th bit.
    if (i == 9 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      value = result;
      return true;
    }
  }
  return false;
}

void Source::Release() {
  // The newest read is where the walk goes on: it moves to the front of the
  // first block, so that the next reads of the walk find it there.
  const bool keep_last = last_data_ != nullptr && last_.size <= kBlockBytes / 4;
  if (keep_last) std::memmove(blocks_[0].get(), last_data_, last_.size);
  block_ = 0;
  block_used_ = keep_last ? last_.size : 0;
  large_.clear();
  if (keep_last) {
    last_data_ = blocks_[0].get();
  } else {
    last_ = {};
    last_data_ = nullptr;
  }
  buffered_bytes_ = block_used_;
  ++generation_;
}

std::string_view Source::Read(uint64_t offset, uint64_t min_size, bool window) {
  if (last_data_ != nullptr && offset >= last_.offset && offset + min_size <= last_.end()) {
    return std::string_view(last_data_ + (offset - last_.offset), last_.end() - offset);
  }
  // Forward from inside (or the end of) the newest buffer: a run of structure.
  const bool in_a_row = last_data_ != nullptr && offset >= last_.offset && offset <= last_.end();
  window_ = in_a_row ? std::min<uint64_t>(2 * window_, kMaxWindowBytes) : kWindowBytes;
  const uint64_t size = std::min(std::max(min_size, window ? window_ : 0), size_ - offset);
  char* const buffer = Allocate(size);
  uint64_t done = 0;
  while (done < size && status_.ok()) {
    const ssize_t got = pread(fd_, buffer + done, size - done, static_cast<off_t>(offset + done));
    if (got > 0) {
      done += static_cast<uint64_t>(got);
    } else if (got == 0) {
      status_ = absl::DataLossError("the file became shorter while it was read");
    } else if (errno != EINTR) {
      status_ = absl::DataLossError(absl::StrCat("cannot read the file: ", std::strerror(errno)));
    }
  }
  if (done < size) std::memset(buffer + done, 0, size - done);
  last_ = {offset, size};
  last_data_ = buffer;
  buffered_bytes_ += size;
  return std::string_view(last_data_, size);
}

char* Source::Allocate(uint64_t size) {
  if (size > kBlockBytes / 4) {
    large_.push_back(std::unique_ptr<char[]>(new char[size]));
    return large_.back().get();
  }
  if (blocks_.empty()) blocks_.push_back(std::unique_ptr<char[]>(new char[kBlockBytes]));
  if (block_used_ + size > kBlockBytes) {
    if (++block_ == blocks_.size()) blocks_.push_back(std::unique_ptr<char[]>(new char[kBlockBytes]));
    block_used_ = 0;
  }
  char* const at = blocks_[block_].get() + block_used_;
  block_used_ += size;
  return at;
}

absl::Status Reader::status() const {
  if (error_ == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("not an ONNX model: malformed protobuf (", error_, " at byte ", error_at_, ")"));
}

bool Reader::NextSlow(Field& field) {
  // A tag and a length are at most 10 bytes each; a view of them, never past
  // the end of the message, so that a varint cut by it fails where it did.
  const uint64_t available = std::min<uint64_t>(end_ - pos_, 20);
  if (view_ == nullptr || view_generation_ != source_->generation() || pos_ < view_offset_ ||
      pos_ - view_offset_ + available > view_size_) {
    const std::string_view view = source_->View(pos_, available);
    view_ = view.data();
    view_offset_ = pos_;
    view_size_ = view.size();
    view_generation_ = source_->generation();
  }
  const std::string_view bytes(view_ + (pos_ - view_offset_), available);
  size_t pos = 0;
  // A bad varint is reported where its decoding stopped.
  const auto bad_varint = [&] { return Fail("bad or truncated varint", pos_ + pos); };
  uint64_t tag = 0;
  if (!DecodeVarint(bytes, pos, tag)) return bad_varint();
  if (tag > UINT32_MAX || (tag >> 3) == 0) return Fail("invalid field tag", pos_);
  field.number = static_cast<uint32_t>(tag >> 3);
  field.varint = 0;
  field.payload = {};
  uint64_t payload_size = 0;
  switch (tag & 7) {
    case 0:
      field.type = WireType::kVarint;
      if (!DecodeVarint(bytes, pos, field.varint)) return bad_varint();
      break;
    case 1:
    case 5:
      field.type = (tag & 7) == 1 ? WireType::kFixed64 : WireType::kFixed32;
      payload_size = field.type == WireType::kFixed64 ? 8 : 4;
      if (end_ - pos_ - pos < payload_size) return Fail("truncated fixed-width field", pos_ + pos);
      break;
    case 2:
      field.type = WireType::kLengthDelimited;
      if (!DecodeVarint(bytes, pos, payload_size)) return bad_varint();
      if (payload_size > end_ - pos_ - pos) return Fail("length past the end of its message", pos_ + pos);
      break;
    case 3:
    case 4:
      return Fail("protobuf groups are not supported", pos_);
    default:
      return Fail("invalid wire type", pos_);
  }
  // Only the length is read: the payload is not, unless the caller asks for it.
  field.payload = {pos_ + pos, payload_size};
  field.raw = {pos_, pos + payload_size};
  pos_ += pos + payload_size;
  return true;
}

size_t VarintSize(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void AppendTag(std::string& out, uint32_t number, WireType type) {
  AppendVarint(out, (static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(type));
}

void AppendLengthDelimited(std::string& out, uint32_t number, std::string_view payload) {
  AppendTag(out, number, WireType::kLengthDelimited);
  AppendVarint(out, payload.size());
  out.append(payload);
}

void WritePaddedVarint32(char* at, uint32_t value) {
  for (size_t i = 0; i + 1 < kPaddedVarint32Size; ++i) {
    at[i] = static_cast<char>(((value >> (7 * i)) & 0x7f) | 0x80);
  }
  at[kPaddedVarint32Size - 1] = static_cast<char>(value >> 28);
}

}  // namespace footprint::wire
