#include "analyzer/memory/quantization.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint {

QuantizedForm QuantizedFormOf(std::string_view domain, std::string_view op_type) {
  // ONNX QLinearConv/QLinearMatMul/ConvInteger/MatMulInteger, ORT's QLinearAdd,
  // QLinearMul, QLinearConcat, QLinear{Average,GlobalAverage}Pool,
  // QLinearSigmoid, QLinearLeakyRelu; Relu and Clip fold into the quantized
  // range; MaxPool commutes with quantization; Resize, HardSigmoid,
  // HardSwish, Tanh, PRelu run on int8 tables in TFLite and ORT's QDQ path;
  // a Sum (old exports' residual) is an Add of its inputs.
  static const auto* const kQuantized = new absl::flat_hash_set<std::string_view>{
      "Conv",      "ConvTranspose", "MatMul",  "Gemm",        "Add",         "Mul",
      "Concat",    "MaxPool",       "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Relu",
      "Clip",      "LeakyRelu",     "PRelu",   "Sigmoid",     "HardSigmoid", "HardSwish",
      "Tanh",      "Resize",        "Upsample", "BatchNormalization", "Sum"};
  static const auto* const kDataMovement = new absl::flat_hash_set<std::string_view>{
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Transpose", "Slice",  "Gather",
      "Split",   "Pad",     "Tile",    "Expand",    "DepthToSpace", "SpaceToDepth", "Dropout"};
  if (!IsDefaultDomain(domain)) return QuantizedForm::kFloat;
  if (kQuantized->contains(op_type)) return QuantizedForm::kQuantized;
  if (kDataMovement->contains(op_type)) return QuantizedForm::kDataMovement;
  return QuantizedForm::kFloat;
}

std::vector<QuantizedWeight> QuantizedWeightsOf(const onnx::NodeProto& node) {
  if (QuantizedFormOf(node.domain(), node.op_type()) != QuantizedForm::kQuantized) return {};
  const std::string& op = node.op_type();
  if (op == "Conv") return {{.input = 1, .channel_axis = 0}, {.input = 2, .bias = true}};
  if (op == "ConvTranspose") return {{.input = 1, .channel_axis = 1}, {.input = 2, .bias = true}};
  if (op == "Gemm") {
    return {{.input = 0}, {.input = 1, .channel_axis = static_cast<int>(IntAttribute(node, "transB", 0)) != 0 ? 0 : 1},
            {.input = 2, .bias = true}};
  }
  if (op == "MatMul") return {{.input = 0}, {.input = 1, .channel_axis = QuantizedWeight::kLastAxis}};
  if (op == "Add" || op == "Sum" || op == "Mul" || op == "Concat" || op == "PRelu") {
    std::vector<QuantizedWeight> slots;
    for (int i = 0; i < node.input_size(); ++i) slots.push_back({.input = i});
    return slots;
  }
  if (op == "BatchNormalization") return {{.input = 1}, {.input = 2}, {.input = 3}, {.input = 4}};
  return {};
}

}  // namespace footprint
