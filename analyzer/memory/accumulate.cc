// The accumulate mode (accumulate.h).
#include "analyzer/memory/accumulate.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/onnx_domain.h"
#include "analyzer/loader/onnx_ops.h"
#include "analyzer/memory/folding.h"

namespace footprint {
namespace {

bool IsConv(const IrNode& node) { return IsDefaultDomain(*node.proto) && node.proto->op_type() == "Conv"; }

bool IsTwoInputSum(const IrNode& node) {
  if (!IsDefaultDomain(*node.proto) || node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  return node.proto->op_type() == "Add" || node.proto->op_type() == "Sum";
}

// The value's type and dims when every dim is known.
std::optional<ValueShape> KnownShape(const ShapeLookup& shape_of, const IrValue& value) {
  if (!shape_of) return std::nullopt;
  std::optional<ValueShape> shape = shape_of(value.name);
  if (!shape.has_value() || shape->data_type == 0) return std::nullopt;
  for (const std::optional<int64_t>& dim : shape->dims) {
    if (!dim.has_value()) return std::nullopt;
  }
  return shape;
}

bool SameShape(const ValueShape& a, const ValueShape& b) { return a.data_type == b.data_type && a.dims == b.dims; }

bool IsWeight(const IrValue& value) {
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

// A BatchNormalization at inference whose statistics are weights: runtimes
// fold it into the Conv before it (scale and shift per channel).
bool IsFoldableBatchNorm(const IrGraph& graph, const IrNode& node) {
  if (!IsInferenceBatchNorm(*node.proto) || node.inputs.size() != 5 || node.outputs.size() != 1) return false;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (!IsWeight(graph.values[node.inputs[i]])) return false;
  }
  return true;
}

// The one node that reads `value`, or -1 (none, several, or a graph output).
NodeId OnlyReader(const IrGraph& graph, ValueId value) {
  const IrValue& v = graph.values[value];
  if (v.is_graph_output || v.consumers.size() != 1) return -1;
  return v.consumers[0];
}

}  // namespace

bool MayAccumulate(const IrGraph& graph) {
  for (const IrNode& node : graph.nodes) {
    if (!IsConv(node) || node.outputs.size() != 1) continue;
    for (NodeId reader : graph.values[node.outputs[0]].consumers) {
      const IrNode& next = graph.nodes[reader];
      if (IsTwoInputSum(next)) return true;
      if (!IsFoldableBatchNorm(graph, next)) continue;
      for (NodeId after : graph.values[next.outputs[0]].consumers) {
        if (IsTwoInputSum(graph.nodes[after])) return true;
      }
    }
  }
  return false;
}

AccumulatedAdds AccumulateResidualAdds(const ShapeLookup& shape_of, IrGraph& graph) {
  AccumulatedAdds result;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t head_id = 0; head_id < graph.nodes.size(); ++head_id) {
    IrNode& head = graph.nodes[head_id];
    if (removed[head_id] || !IsConv(head) || head.outputs.size() != 1) continue;
    std::vector<NodeId> absorbed;     // The BatchNormalization (if any), then the Add.
    std::vector<ValueId> links;       // The tensors between them, which go.
    ValueId product = head.outputs[0];  // What the Add reads of the chain.
    NodeId add_id = OnlyReader(graph, product);
    if (add_id >= 0 && !removed[add_id] && IsFoldableBatchNorm(graph, graph.nodes[add_id])) {
      absorbed.push_back(add_id);
      links.push_back(product);
      product = graph.nodes[add_id].outputs[0];
      add_id = OnlyReader(graph, product);
    }
    if (add_id < 0 || removed[add_id] || add_id == static_cast<NodeId>(head_id)) continue;
    IrNode& add = graph.nodes[add_id];
    if (!IsTwoInputSum(add) || add.inputs[0] == add.inputs[1]) continue;
    const ValueId residual = add.inputs[0] == product ? add.inputs[1] : add.inputs[0];
    const ValueId sum = add.outputs[0];
    const std::optional<ValueShape> product_shape = KnownShape(shape_of, graph.values[product]);
    const std::optional<ValueShape> residual_shape = KnownShape(shape_of, graph.values[residual]);
    const std::optional<ValueShape> sum_shape = KnownShape(shape_of, graph.values[sum]);
    if (!product_shape || !residual_shape || !sum_shape || !SameShape(*product_shape, *residual_shape) ||
        !SameShape(*product_shape, *sum_shape)) {
      continue;
    }
    absorbed.push_back(add_id);
    links.push_back(product);
    // The Conv reads the absorbed nodes' other inputs (the statistics, the
    // residual) in their place and writes the sum.
    for (NodeId node_id : absorbed) {
      IrNode& node = graph.nodes[node_id];
      for (ValueId input : node.inputs) {
        if (std::find(links.begin(), links.end(), input) != links.end()) continue;
        head.inputs.push_back(input);
        std::vector<NodeId>& readers = graph.values[input].consumers;
        std::replace(readers.begin(), readers.end(), node_id, static_cast<NodeId>(head_id));
      }
      for (ValueId input : node.implicit_inputs) head.implicit_inputs.push_back(input);
      removed[node_id] = true;
    }
    head.outputs = add.outputs;
    graph.values[sum].producer = static_cast<NodeId>(head_id);
    for (ValueId link : links) {
      IrValue& value = graph.values[link];
      value.origin = ValueOrigin::kFusedAway;
      value.producer = -1;
      value.consumers.clear();
      result.fused_tensors.push_back(value.name);
    }
    if (result.writes_over.empty()) result.writes_over.assign(graph.values.size(), -1);
    result.writes_over[sum] = residual;
    ++result.fused_nodes;
  }
  if (result.fused_nodes > 0) RemoveNodes(removed, graph);
  return result;
}

}  // namespace footprint
