// Byte sizes of tensors, exactly as the memory model defines them (docs/figures.md, "Sizes").
//
// Why overflow-checked: a model file is input from strangers, and a dims
// product that wraps around would turn into a silent small (or negative)
// figure in a CI gate. Every size here is computed in 128 bits and refused
// when it does not fit in an int64_t.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_TENSOR_SIZE_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_TENSOR_SIZE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace footprint {

// ONNX TensorProto.DataType values, including the ones newer than ONNX 1.12.
inline constexpr int32_t kDataTypeString = 8;

// Bits per element of an ONNX data type, or nullopt when it has no byte size
// (string, undefined, unknown).
std::optional<int> BitsPerElement(int32_t data_type);

// A short lower-case name: "float32", "int64", "float8e4m3fn", "string"...
std::string DataTypeName(int32_t data_type);

// ceil(product(dims) * bits / 8). A rank-0 tensor has one element; a 0 dim
// gives 0 bytes. Negative dims and overflow of int64 are errors.
absl::StatusOr<int64_t> TensorByteSize(const std::vector<int64_t>& dims, int bits_per_element);

// `bytes` rounded up to a multiple of `alignment` (>= 1); overflow is an error.
absl::StatusOr<int64_t> AlignUp(int64_t bytes, int64_t alignment);

// a + b, or an error when it overflows int64.
absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_TENSOR_SIZE_H_
