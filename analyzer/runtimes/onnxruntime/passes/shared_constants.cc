// ORT's level-1 CSE on small constants and folded ConstantOfShape values
// (shared_constants.h).
#include "analyzer/runtimes/onnxruntime/passes/shared_constants.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// The element types and count up to which ORT's common subexpression
// elimination tells constant initializers apart by value rather than by name
// (measured, ORT 1.30: two Adds of equal initializers of <= 8 float, float16,
// double, int32 or int64 elements, raw or typed data, become one; of 9, or of
// int8/uint8, two; dims must match). Larger ones stay distinct.
constexpr int64_t kCseMaxValueElements = 8;
bool ComparedByValue(int32_t data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16 ||
         data_type == onnx::TensorProto::DOUBLE || data_type == onnx::TensorProto::INT32 ||
         data_type == onnx::TensorProto::INT64;
}

// The contents of a tensor without its name: equal keys, equal tensors.
std::string ContentKey(const onnx::TensorProto& tensor) {
  onnx::TensorProto unnamed = tensor;
  unnamed.clear_name();
  unnamed.clear_doc_string();
  return unnamed.SerializeAsString();
}

// What decides a folded ConstantOfShape's value: its shape input's contents
// and its value attribute; nullopt when the shape is not a weight of the
// model (then ORT's CSE compares values we do not have).
std::optional<std::string> ConstantOfShapeKey(const IrGraph& graph, const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node) || node.op_type() != "ConstantOfShape" ||
      node.input_size() != 1) {
    return std::nullopt;
  }
  auto it = graph.value_by_name.find(node.input(0));
  if (it == graph.value_by_name.end()) return std::nullopt;
  const IrValue& shape = graph.values[it->second];
  std::string key;
  if (shape.origin == ValueOrigin::kInitializer) {
    key = ContentKey(*shape.initializer);
  } else if (shape.origin == ValueOrigin::kConstant) {
    const onnx::TensorProto* tensor = TensorAttribute(*shape.constant, "value");
    if (tensor != nullptr) key = ContentKey(*tensor);
    if (key.empty()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::string value = "default";  // No value attribute: a float 0.
  if (const onnx::TensorProto* tensor = TensorAttribute(node, "value")) value = ContentKey(*tensor);
  return absl::StrCat(key.size(), ":", key, value);
}

}  // namespace

std::optional<std::string> SmallConstantKey(const onnx::TensorProto& tensor) {
  if (!ComparedByValue(tensor.data_type()) || tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) return std::nullopt;
    count *= dim;
    if (count > kCseMaxValueElements) return std::nullopt;
  }
  std::string key = absl::StrCat(tensor.data_type(), ":", tensor.dims_size());
  for (int64_t dim : tensor.dims()) absl::StrAppend(&key, ",", dim);
  key += ":";
  auto append = [&key](const void* data, size_t bytes) { key.append(static_cast<const char*>(data), bytes); };
  if (!tensor.raw_data().empty()) {
    key += tensor.raw_data();
  } else if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    for (float value : tensor.float_data()) append(&value, sizeof(value));
  } else if (tensor.data_type() == onnx::TensorProto::DOUBLE) {
    for (double value : tensor.double_data()) append(&value, sizeof(value));
  } else if (tensor.data_type() == onnx::TensorProto::INT64) {
    for (int64_t value : tensor.int64_data()) append(&value, sizeof(value));
  } else if (tensor.data_type() == onnx::TensorProto::INT32) {
    for (int32_t value : tensor.int32_data()) append(&value, sizeof(value));
  } else {  // FLOAT16: its bits in int32_data.
    for (int32_t value : tensor.int32_data()) {
      const uint16_t bits = static_cast<uint16_t>(value);
      append(&bits, sizeof(bits));
    }
  }
  return key;
}

namespace {

// Level-1 CSE of those constants in the graph: every reader of a small
// initializer or Constant equal to an earlier one reads the earlier one (a
// graph output or an overridable initializer keeps its own). The copies
// keep their origin, now unread, as ORT drops them. Why in the graph: the
// float16 rules decide by a weight's readers (a Cast of a weight read once is
// converted at load, fp16_casts.cc): PyTorch's per-Clip min and max, merged,
// are read by every Clip.
PassChange ShareEqualSmallConstants(IrGraph& graph, PassContext& context) {
  const GraphRewrite& rewrite = context.rewrite;
  absl::flat_hash_map<std::string, ValueId> first_of;
  std::vector<ValueId> replaced_by(graph.values.size(), -1);
  bool any = false;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    if (value.is_graph_output || value.consumers.empty()) continue;
    if (IsOverridable(rewrite, static_cast<ValueId>(id))) continue;
    const onnx::TensorProto* tensor = ConstantTensor(graph, static_cast<ValueId>(id));
    if (tensor == nullptr) continue;
    const std::optional<std::string> key = SmallConstantKey(*tensor);
    if (!key.has_value()) continue;
    auto [it, inserted] = first_of.emplace(*key, static_cast<ValueId>(id));
    if (inserted) continue;
    replaced_by[id] = it->second;
    any = true;
  }
  if (!any) return {};
  for (IrNode& node : graph.nodes) {
    for (std::vector<ValueId>* inputs : {&node.inputs, &node.implicit_inputs}) {
      for (ValueId& input : *inputs) {
        if (replaced_by[input] >= 0) input = replaced_by[input];
      }
    }
  }
  RelinkValues(graph);
  return {};
}

// Readers of a duplicate folded ConstantOfShape value read the first one
// instead; the duplicate becomes kFusedAway. Graph outputs are kept.
PassChange ShareEqualConstantsOfShape(IrGraph& graph, PassContext& context) {
  absl::flat_hash_map<std::string, ValueId> first_of;
  std::vector<ValueId> replaced_by(graph.values.size(), -1);
  bool any = false;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr) continue;
    const std::optional<std::string> key = ConstantOfShapeKey(graph, *value.folded_from);
    if (!key.has_value()) continue;
    auto [it, inserted] = first_of.emplace(*key, static_cast<ValueId>(id));
    if (inserted || value.is_graph_output) continue;
    replaced_by[id] = it->second;
    any = true;
  }
  if (!any) return {};
  for (size_t node_id = 0; node_id < graph.nodes.size(); ++node_id) {
    IrNode& node = graph.nodes[node_id];
    for (std::vector<ValueId>* inputs : {&node.inputs, &node.implicit_inputs}) {
      for (ValueId& input : *inputs) {
        if (replaced_by[input] < 0) continue;
        input = replaced_by[input];
        graph.values[input].consumers.push_back(static_cast<NodeId>(node_id));
      }
    }
  }
  for (size_t id = 0; id < graph.values.size(); ++id) {
    if (replaced_by[id] < 0) continue;
    MarkFusedAway(graph, context.rewrite, static_cast<ValueId>(id));
  }
  return {};
}

}  // namespace

const Pass kSmallConstantsCse = {.name = "CommonSubexpressionElimination (small constants)",
                                 .stage = OrtStage::kLevel1,
                                 .source = "core/optimizer/common_subexpression_elimination.cc",
                                 .apply = &ShareEqualSmallConstants};

const Pass kConstantsOfShapeCse = {.name = "CommonSubexpressionElimination (ConstantOfShape), ConstantFolding",
                                   .stage = OrtStage::kLevel1,
                                   .source = "core/optimizer/common_subexpression_elimination.cc",
                                   .apply = &ShareEqualConstantsOfShape};

}  // namespace footprint::ort
