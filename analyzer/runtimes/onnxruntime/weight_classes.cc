// Facts about a graph's weights for ORT's load rules (weight_classes.h).
#include "analyzer/runtimes/onnxruntime/weight_classes.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/shared_constants.h"

namespace footprint::ort {
namespace {

// Ops ORT's common subexpression elimination never merges (optimizer
// utils IsOperationDeterministic, common_subexpression_elimination.cc
// IsNodeSupported).
bool MergeableOp(const onnx::NodeProto& node) {
  static const std::set<std::string> kNever = {"RandomNormal",     "RandomUniform",     "RandomNormalLike",
                                               "RandomUniformLike", "Multinomial",       "DequantizeLinear"};
  if (!IsDefaultDomain(node)) return false;
  return BodiesOf(node).empty() && kNever.count(node.op_type()) == 0;
}

}  // namespace

std::optional<KnownWeight> Known(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                 ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, rewrite, shape_of, id);
  if (!shape.has_value()) return std::nullopt;
  const int bits = ElementBits(shape->data_type);
  if (bits <= 0) return std::nullopt;
  KnownWeight weight{.data_type = shape->data_type};
  int64_t elements = 1;
  for (const std::optional<int64_t>& dim : shape->dims) {
    if (!dim.has_value() || *dim < 0) return std::nullopt;
    weight.dims.push_back(*dim);
    elements *= *dim;
  }
  weight.bytes = (elements * bits + 7) / 8;
  return weight;
}


bool IsWeight(const IrValue& value) {
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

bool InExternalFile(const IrValue& value) {
  return value.origin == ValueOrigin::kInitializer && value.initializer != nullptr &&
         value.initializer->data_location() == onnx::TensorProto::EXTERNAL;
}

int64_t FileBytes(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  static const GraphRewrite kAsInFile;
  const std::optional<KnownWeight> weight = Known(graph, kAsInFile, shape_of, id);
  return weight.has_value() ? weight->bytes : 0;
}

std::optional<std::string> WeightClasses::Key(ValueId id) {
  const IrValue& value = graph_.values[id];
  if (value.origin == ValueOrigin::kInitializer) {
    std::optional<std::string> key = SmallConstantKey(*value.initializer);
    if (key.has_value()) return absl::StrCat("t:", *key);
    return std::nullopt;
  }
  if (value.origin == ValueOrigin::kConstant) {  // ORT makes a Constant node an initializer at load.
    const onnx::TensorProto* tensor = TensorAttribute(*value.constant, "value");
    std::optional<std::string> key = tensor != nullptr ? SmallConstantKey(*tensor) : std::nullopt;
    if (key.has_value()) return absl::StrCat("t:", *key);
    return std::nullopt;
  }
  if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr || value.is_graph_output) {
    return std::nullopt;
  }
  const onnx::NodeProto& node = *value.folded_from;
  if (!MergeableOp(node)) return std::nullopt;
  std::string key = absl::StrCat("n:", node.op_type(), ":");
  int output_index = -1;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i) == value.name) output_index = i;
  }
  absl::StrAppend(&key, output_index, ":");
  for (const std::string& input : node.input()) {
    if (input.empty()) {
      key += "-,";
      continue;
    }
    const auto found = graph_.value_by_name.find(input);
    if (found == graph_.value_by_name.end()) return std::nullopt;
    absl::StrAppend(&key, Of(found->second), ",");
  }
  std::vector<std::pair<std::string, std::string>> attributes;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    attributes.emplace_back(attribute.name(), attribute.SerializeAsString());
  }
  std::sort(attributes.begin(), attributes.end());
  for (const auto& [name, bytes] : attributes) absl::StrAppend(&key, ";", name, "=", bytes.size(), ":", bytes);
  return key;
}


}  // namespace footprint::ort
