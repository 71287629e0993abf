#include "analyzer/shapes/tensor_size.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

struct DataTypeEntry {
  int32_t value;     // TensorProto.DataType.
  const char* name;  // Our short name.
  int bits;          // 0: no byte size.
};

// The bit widths are the spec's; the numbers are onnx.proto's.
constexpr DataTypeEntry kDataTypes[] = {
    {1, "float32", 32},      {2, "uint8", 8},          {3, "int8", 8},
    {4, "uint16", 16},       {5, "int16", 16},         {6, "int32", 32},
    {7, "int64", 64},        {8, "string", 0},         {9, "bool", 8},
    {10, "float16", 16},     {11, "float64", 64},      {12, "uint32", 32},
    {13, "uint64", 64},      {14, "complex64", 64},    {15, "complex128", 128},
    {16, "bfloat16", 16},    {17, "float8e4m3fn", 8},  {18, "float8e4m3fnuz", 8},
    {19, "float8e5m2", 8},   {20, "float8e5m2fnuz", 8}, {21, "uint4", 4},
    {22, "int4", 4},
};

const DataTypeEntry* FindDataType(int32_t data_type) {
  for (const DataTypeEntry& entry : kDataTypes) {
    if (entry.value == data_type) return &entry;
  }
  return nullptr;
}

constexpr __int128 kInt64Max = std::numeric_limits<int64_t>::max();

}  // namespace

std::optional<int> BitsPerElement(int32_t data_type) {
  const DataTypeEntry* entry = FindDataType(data_type);
  if (entry == nullptr || entry->bits == 0) return std::nullopt;
  return entry->bits;
}

std::string DataTypeName(int32_t data_type) {
  const DataTypeEntry* entry = FindDataType(data_type);
  if (entry == nullptr) return data_type == 0 ? "undefined" : absl::StrCat("type", data_type);
  return entry->name;
}

absl::StatusOr<int64_t> TensorByteSize(const std::vector<int64_t>& dims, int bits_per_element) {
  __int128 elements = 1;
  bool empty = false;
  for (int64_t dim : dims) {
    if (dim < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", dim));
    if (dim == 0) empty = true;
  }
  if (empty) return 0;
  for (int64_t dim : dims) {
    elements *= dim;
    if (elements > kInt64Max) return absl::OutOfRangeError("byte size overflows 64 bits");
  }
  const __int128 bits = elements * bits_per_element;
  const __int128 bytes = (bits + 7) / 8;
  if (bytes > kInt64Max) return absl::OutOfRangeError("byte size overflows 64 bits");
  return static_cast<int64_t>(bytes);
}

absl::StatusOr<int64_t> AlignUp(int64_t bytes, int64_t alignment) {
  if (alignment < 1) return absl::InvalidArgumentError(absl::StrCat("alignment ", alignment, " < 1"));
  const __int128 rounded = (static_cast<__int128>(bytes) + alignment - 1) / alignment * alignment;
  if (rounded > kInt64Max) return absl::OutOfRangeError("aligned byte size overflows 64 bits");
  return static_cast<int64_t>(rounded);
}

absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return absl::OutOfRangeError("byte count overflows 64 bits");
  return sum;
}

}  // namespace footprint
