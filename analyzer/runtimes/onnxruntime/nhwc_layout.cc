// ORT's channels-last layout of quantized kernels (nhwc_layout.h).
#include "analyzer/runtimes/onnxruntime/nhwc_layout.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// NhwcTransformer (level 3, core/optimizer/nhwc_transformer.cc, with the
// layout transformer and transpose optimizer of core/optimizer/
// transpose_optimization/): the quantized Conv and pools run channels-last
// (QLinearConv channels_last, NhwcMaxPool for an 8-bit MaxPool,
// QLinearAveragePool, QLinearGlobalAveragePool); the transposes it wraps
// them in cancel between such nodes and move through the elementwise ops and
// Concat/Split between them, and stay where an NCHW op (Reshape, Resize,
// a float op...) reads or writes a channels-last tensor. Here: a node is
// channels-last if it is one of those 4-D kernels, or an elementwise op,
// Concat or Split whose 4-D inputs are all channels-last; a Transpose copies
// each NCHW tensor such a node reads (one per tensor) and each channels-last
// tensor another node or the caller reads, as a new value of the same bytes.
// Probe: FastestDet's QDQ copy keeps 43 Transposes in ORT's optimized model
// (+14 of its own), at its channel shuffles' Reshapes and its head.
bool IsChannelsLastKernel(const IrNode& node, const ShapeLookup& shape_of, const IrGraph& graph) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  const std::optional<ValueShape> input = ShapeOfValue(graph, shape_of, node.inputs[0]);
  if (!input.has_value() || input->dims.size() != 4) return false;
  if (proto.domain() == "com.microsoft") {
    return proto.op_type() == "QLinearConv" || proto.op_type() == "QLinearAveragePool" ||
           proto.op_type() == "QLinearGlobalAveragePool";
  }
  // QOperator-format models have ONNX's QLinearConv (the same inputs).
  if (IsDefaultDomain(proto) && proto.op_type() == "QLinearConv") return true;
  return IsDefaultDomain(proto) && proto.op_type() == "MaxPool" &&
         (input->data_type == onnx::TensorProto::UINT8 || input->data_type == onnx::TensorProto::INT8);
}

bool MovesTransposes(const onnx::NodeProto& proto) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "Add", "Sub", "Mul", "Div",
      "Sum", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "QuantizeLinear", "DequantizeLinear", "Cast", "Concat",
      "Split", "Identity"};
  return (IsDefaultDomain(proto) || proto.domain() == "com.microsoft") && kOps->contains(proto.op_type());
}

bool IsRankFour(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  return shape.has_value() && shape->dims.size() == 4;
}

bool ProducedChannelsLast(const IrGraph& graph, const std::vector<bool>& channels_last, ValueId id) {
  const IrValue& value = graph.values[id];
  return value.origin == ValueOrigin::kNodeOutput && value.producer >= 0 && channels_last[value.producer];
}

// Per node: whether it runs channels-last (empty when no node does).
std::vector<bool> ChannelsLastNodes(const ShapeLookup& shape_of, const IrGraph& graph, const FusionSummary& summary) {
  const size_t node_count = graph.nodes.size();
  std::vector<bool> channels_last(node_count, false);
  bool any = false;
  for (size_t id = 0; id < node_count; ++id) {
    channels_last[id] = IsChannelsLastKernel(graph.nodes[id], shape_of, graph);
    any = any || channels_last[id];
  }
  if (!any) return {};
  auto rank_four = [&](ValueId id) { return IsRankFour(graph, shape_of, id); };
  auto produced_channels_last = [&](ValueId id) { return ProducedChannelsLast(graph, channels_last, id); };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t id = 0; id < node_count; ++id) {
      const IrNode& node = graph.nodes[id];
      if (channels_last[id] || !MovesTransposes(*node.proto) || node.outputs.empty()) continue;
      bool reads_channels_last = false;
      bool all = true;
      for (ValueId input : node.inputs) {
        if (IsConstantWeight(graph, summary, input) || !rank_four(input)) continue;
        if (produced_channels_last(input)) {
          reads_channels_last = true;
        } else {
          all = false;
        }
      }
      bool outputs_four = true;
      for (ValueId output : node.outputs) outputs_four = outputs_four && rank_four(output);
      if (reads_channels_last && all && outputs_four) {
        channels_last[id] = true;
        changed = true;
      }
    }
  }
  return channels_last;
}

// Puts the Transposes of `before` (per node: those it needs first; the last
// entry: after every node) into graph.nodes and recomputes every producer and
// consumer from the nodes.
void InsertBefore(std::vector<std::vector<IrNode>>& before, IrGraph& graph, FusionSummary& summary) {
  const size_t node_count = graph.nodes.size();
  std::vector<IrNode> nodes;
  for (size_t id = 0; id <= node_count; ++id) {
    for (IrNode& transpose : before[id]) nodes.push_back(std::move(transpose));
    if (id < node_count) nodes.push_back(std::move(graph.nodes[id]));
  }
  graph.nodes = std::move(nodes);
  RelinkValues(graph);
  if (!summary.writes_over.empty()) summary.writes_over.resize(graph.values.size(), -1);
  if (!summary.overridable.empty()) summary.overridable.resize(graph.values.size(), false);
}

}  // namespace

void ApplyNhwcLayout(const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary) {
  const std::vector<bool> channels_last = ChannelsLastNodes(shape_of, graph, summary);
  if (channels_last.empty()) return;
  const size_t node_count = graph.nodes.size();
  auto rank_four = [&](ValueId id) { return IsRankFour(graph, shape_of, id); };
  auto produced_channels_last = [&](ValueId id) { return ProducedChannelsLast(graph, channels_last, id); };
  // New values and Transposes; `before` holds the Transposes each node needs first.
  std::vector<std::vector<IrNode>> before(node_count + 1);
  auto add_transpose = [&](ValueId from, ValueId to, const char* perm_name, std::vector<IrNode>& where) {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Transpose");
    proto->set_name(std::string(perm_name) + "(" + graph.values[from].name + ")");
    proto->add_input(graph.values[from].name);
    proto->add_output(graph.values[to].name);
    IrNode node;
    node.proto = proto.get();
    node.proto_index = -1;
    node.display_name = proto->name();
    node.inputs = {from};
    node.outputs = {to};
    graph.runtime_protos.push_back(std::move(proto));
    where.push_back(std::move(node));
    ++summary.reorder_nodes;
  };
  auto add_value = [&](ValueId like, const char* suffix) {
    const ValueId id = static_cast<ValueId>(graph.values.size());
    graph.values.push_back(IrValue{.name = graph.values[like].name + suffix, .origin = ValueOrigin::kNodeOutput,
                                   .sized_as = like});
    return id;
  };
  absl::flat_hash_map<ValueId, ValueId> to_nhwc;  // NCHW value -> its channels-last copy.
  for (size_t id = 0; id < node_count; ++id) {
    if (!channels_last[id]) continue;
    for (size_t slot = 0; slot < graph.nodes[id].inputs.size(); ++slot) {
      const ValueId input = graph.nodes[id].inputs[slot];
      if (IsConstantWeight(graph, summary, input) || !rank_four(input) || produced_channels_last(input)) continue;
      if (IsChannelsLastKernel(graph.nodes[id], shape_of, graph) && slot > 0) continue;  // Only X is an image.
      auto it = to_nhwc.find(input);
      if (it == to_nhwc.end()) {
        const ValueId copy = add_value(input, ".nhwc");
        add_transpose(input, copy, "TransposeToNhwc", before[id]);
        it = to_nhwc.emplace(input, copy).first;
      }
      graph.nodes[id].inputs[slot] = it->second;
    }
  }
  for (size_t id = 0; id < node_count; ++id) {
    if (!channels_last[id]) continue;
    for (ValueId& output : graph.nodes[id].outputs) {
      // Copies: add_value below grows graph.values, which may move them.
      const std::vector<NodeId> consumers = graph.values[output].consumers;
      const bool is_graph_output = graph.values[output].is_graph_output;
      std::optional<size_t> first_outside;
      for (NodeId reader : consumers) {
        if (!channels_last[reader] && (!first_outside || static_cast<size_t>(reader) < *first_outside)) {
          first_outside = reader;
        }
      }
      if (!first_outside && !is_graph_output) continue;
      // The node writes a channels-last copy; a Transpose writes the NCHW
      // value the outside readers (and the caller) read.
      const ValueId nchw = output;
      const ValueId nhwc = add_value(nchw, ".nhwc");
      for (NodeId reader : consumers) {
        if (!channels_last[reader]) continue;
        for (ValueId& input : graph.nodes[reader].inputs) {
          if (input == nchw) input = nhwc;
        }
      }
      output = nhwc;
      add_transpose(nhwc, nchw, "TransposeToNchw", before[first_outside.value_or(node_count)]);
    }
  }
  InsertBefore(before, graph, summary);
}

}  // namespace footprint::ort
