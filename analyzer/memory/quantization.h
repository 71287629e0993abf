// Which ops have a quantized form, as the spec's "Quantized graphs" uses the
// words: the qdq mode's groups and `fit`'s int8 / fp16 what-ifs read this
// one table, so that the two never disagree on what int8 runtimes quantize.
//
// Usage:
//   switch (QuantizedFormOf(node.domain(), node.op_type())) { ... }
//   for (const QuantizedWeight& slot : QuantizedWeightsOf(node)) { ... }
//
// Sources: the ops of the ONNX standard's QLinear* / *Integer family and of
// ONNX Runtime's QDQ selectors (Conv, MatMul, Gemm, Add, Mul, Concat, the
// pools, the activations it runs on int8 through a table or a clamp); the
// data-movement ops every int8 runtime runs on the quantized bytes as they
// are (ORT drops the Q/DQ pair around them). Everything else is computed in
// float by those runtimes (Softmax, LayerNormalization and the ops of its
// decomposed statistics, Div, Exp, Pow, Sqrt, Erf...), so it stays float.
// BatchNormalization counts as quantized: every int8 toolchain folds it into
// the convolution before it quantizes.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_QUANTIZATION_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_QUANTIZATION_H_

#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"

namespace footprint {

enum class QuantizedForm {
  kQuantized,     // Reads and writes the quantized tensors (QLinearConv, QLinearAdd, ...).
  kDataMovement,  // Moves bytes, whatever their dtype: its output has its data input's dtype.
  kFloat,         // Computed in float by int8 runtimes: reads dequantized, writes float.
};

// Default-domain ops only; every other domain is kFloat.
QuantizedForm QuantizedFormOf(std::string_view domain, std::string_view op_type);

// One input of a quantized op that is quantized with it when it is a weight.
struct QuantizedWeight {
  static constexpr int kPerTensor = -1;  // One scale and zero point for the whole tensor.
  static constexpr int kLastAxis = -2;   // Per-channel along the last axis (MatMul's columns).
  int input = 0;                         // Input index.
  int channel_axis = kPerTensor;         // The axis of output channels, or one of the two above.
  bool bias = false;                     // Stored int32 at input scale x weight scale, as quantizers write biases.
};

// The weight inputs of a kQuantized node that quantize with it: Conv's W
// (per output channel, axis 0) and B, ConvTranspose's W (axis 1) and B,
// Gemm's B (axis 0 with transB, else 1), A and C (Conv's, ConvTranspose's
// and Gemm's biases as int32: the accumulator's type), MatMul's operands (a 2-D
// right operand per column, the last axis), Add/Mul/Concat's operands,
// BatchNormalization's four statistics. Empty for other nodes.
std::vector<QuantizedWeight> QuantizedWeightsOf(const onnx::NodeProto& node);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_QUANTIZATION_H_
