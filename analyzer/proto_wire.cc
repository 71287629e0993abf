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

absl::Status Reader::Malformed(std::string_view what) const {
  const size_t offset = static_cast<size_t>(bytes_.data() - origin_) + pos_;
  return absl::InvalidArgumentError(
      absl::StrCat("not an ONNX model: malformed protobuf (", absl::string_view(what.data(), what.size()), " at byte ", offset, ")"));
}

absl::StatusOr<uint64_t> Reader::ReadVarint() {
  uint64_t value = 0;
  if (!DecodeVarint(bytes_, pos_, value)) return Malformed("bad or truncated varint");
  return value;
}

absl::StatusOr<bool> Reader::Next(Field& field) {
  if (pos_ >= bytes_.size()) return false;
  const size_t start = pos_;
  absl::StatusOr<uint64_t> tag = ReadVarint();
  if (!tag.ok()) return tag.status();
  if (*tag > UINT32_MAX || (*tag >> 3) == 0) {
    pos_ = start;
    return Malformed("invalid field tag");
  }
  field.number = static_cast<uint32_t>(*tag >> 3);
  field.varint = 0;
  field.payload = {};
  switch (*tag & 7) {
    case 0: {
      field.type = WireType::kVarint;
      absl::StatusOr<uint64_t> value = ReadVarint();
      if (!value.ok()) return value.status();
      field.varint = *value;
      break;
    }
    case 1:
    case 5: {
      field.type = (*tag & 7) == 1 ? WireType::kFixed64 : WireType::kFixed32;
      const size_t width = field.type == WireType::kFixed64 ? 8 : 4;
      if (bytes_.size() - pos_ < width) return Malformed("truncated fixed-width field");
      field.payload = bytes_.substr(pos_, width);
      pos_ += width;
      break;
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      absl::StatusOr<uint64_t> length = ReadVarint();
      if (!length.ok()) return length.status();
      if (*length > bytes_.size() - pos_) return Malformed("length past the end of its message");
      // Only the length is read: the payload's pages are not touched here.
      field.payload = bytes_.substr(pos_, static_cast<size_t>(*length));
      pos_ += static_cast<size_t>(*length);
      break;
    }
    case 3:
    case 4:
      pos_ = start;
      return Malformed("protobuf groups are not supported");
    default:
      pos_ = start;
      return Malformed("invalid wire type");
  }
  field.raw = bytes_.substr(start, pos_ - start);
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
