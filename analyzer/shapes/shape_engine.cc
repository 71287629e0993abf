// SymValue's and GraphShapes' methods, BytesOf, and InferSymbolicShapes,
// which runs the Engine (engine/engine.h) on a model.
#include "analyzer/shapes/shape_engine.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/engine/engine.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/tensor_size.h"

namespace footprint::symbolic {

bool SymValue::HasFullShape() const {
  if (!shape.has_value()) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Expr& d) { return d.known(); });
}

void GraphShapes::Set(absl::string_view name, SymValue value) {
  auto [it, inserted] = index.try_emplace(name, static_cast<int32_t>(values.size()));
  if (inserted) {
    values.push_back(std::move(value));
  } else {
    values[it->second] = std::move(value);
  }
}

bool SymValue::HasConcreteShape() const {
  if (!shape.has_value()) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Expr& d) { return d.AsConstant().has_value(); });
}

std::optional<std::vector<int64_t>> SymValue::ConcreteShape() const {
  if (!shape.has_value()) return std::nullopt;
  std::vector<int64_t> dims;
  dims.reserve(shape->size());
  for (const Expr& d : *shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c.has_value()) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

Expr BytesOf(const SymValue& value) {
  if (value.kind == SymValue::Kind::kSequence) {
    if (!value.elements_known) return Expr::Unknown();
    Expr sum = 0;
    for (const SymValue& element : value.elements) sum = sum + BytesOf(element);
    return sum;
  }
  if (value.kind != SymValue::Kind::kTensor || !value.shape.has_value()) return Expr::Unknown();
  const std::optional<int> bits = BitsPerElement(value.elem_type);
  if (!bits.has_value()) return Expr::Unknown();
  const Expr count = ElementCount(*value.shape);
  if (*bits % 8 == 0) return count * Expr(*bits / 8);
  return Expr::CeilDiv(count * Expr(*bits), 8);
}

namespace {

bool GraphNeedsOnnxFallback(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    const bool default_domain = IsDefaultDomain(node);
    if (default_domain && node.op_type() != "Constant" && node.op_type() != "If" && node.op_type() != "Loop" &&
        node.op_type() != "Scan" && FindStandardShapeFunction(node.op_type()) == nullptr) {
      return true;
    }
    if (node.domain() == "com.microsoft" && FindContribShapeFunction(node.op_type()) == nullptr) return true;
    for (const onnx::GraphProto* body : BodiesOf(node)) {
      if (GraphNeedsOnnxFallback(*body)) return true;
    }
  }
  return false;
}

}  // namespace

bool NeedsOnnxFallback(const onnx::ModelProto& model) { return GraphNeedsOnnxFallback(model.graph()); }

absl::StatusOr<ShapeTables> InferSymbolicShapes(const onnx::ModelProto& model, const TensorShapes& tensor_shapes,
                                                const SymbolValues& symbol_values, bool onnx_fallback,
                                                const InputValues& input_values) {
  ShapeTables tables;
  Engine engine(model, tensor_shapes, symbol_values, onnx_fallback, tables, input_values);
  engine.InferGraph(model.graph(), nullptr, nullptr, 0);
  engine.Finish();
  for (const auto& [name, value] : symbol_values) {
    if (!engine.used_symbol_values_.contains(name)) tables.unused_symbol_values.push_back(name);
  }
  for (const auto& [name, dims] : tensor_shapes) {
    if (!engine.used_tensor_shapes_.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tensor-shape ", name, ": no node output is named '", name, "'"));
    }
  }
  return tables;
}

}  // namespace footprint::symbolic
