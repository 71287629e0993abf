#include "analyzer/proto_wire.h"

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

absl::Status Reader::status() const {
  if (error_ == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("not an ONNX model: malformed protobuf (", error_, " at byte ",
                                                 error_at_ - origin_, ")"));
}

bool Reader::NextSlow(Field& field) {
  const std::string_view bytes(begin_, static_cast<size_t>(end_ - begin_));
  const size_t start = static_cast<size_t>(pos_ - begin_);
  size_t pos = start;
  // A bad varint is reported where its decoding stopped.
  const auto bad_varint = [&] { return Fail("bad or truncated varint", begin_ + pos); };
  uint64_t tag = 0;
  if (!DecodeVarint(bytes, pos, tag)) return bad_varint();
  if (tag > UINT32_MAX || (tag >> 3) == 0) return Fail("invalid field tag", pos_);
  field.number = static_cast<uint32_t>(tag >> 3);
  field.varint = 0;
  field.payload = {};
  switch (tag & 7) {
    case 0:
      field.type = WireType::kVarint;
      if (!DecodeVarint(bytes, pos, field.varint)) return bad_varint();
      break;
    case 1:
    case 5: {
      field.type = (tag & 7) == 1 ? WireType::kFixed64 : WireType::kFixed32;
      const size_t width = field.type == WireType::kFixed64 ? 8 : 4;
      if (bytes.size() - pos < width) return Fail("truncated fixed-width field", begin_ + pos);
      field.payload = bytes.substr(pos, width);
      pos += width;
      break;
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      uint64_t length = 0;
      if (!DecodeVarint(bytes, pos, length)) return bad_varint();
      if (length > bytes.size() - pos) return Fail("length past the end of its message", begin_ + pos);
      // Only the length is read: the payload's pages are not touched here.
      field.payload = bytes.substr(pos, static_cast<size_t>(length));
      pos += static_cast<size_t>(length);
      break;
    }
    case 3:
    case 4:
      return Fail("protobuf groups are not supported", pos_);
    default:
      return Fail("invalid wire type", pos_);
  }
  field.raw = bytes.substr(start, pos - start);
  pos_ = begin_ + pos;
  return true;
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
