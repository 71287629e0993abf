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

// NhwcTransformer (level 3, core/optimizer/nhwc_transformer.cc): each
// QLinearConv with a 4-D input runs channels-last, wrapped in a Transpose
// to NHWC before it and one back to NCHW after it; then the transpose
// optimizer (Optimize with OrtEPCostCheck, core/optimizer/
// transpose_optimization/) walks the nodes in order and pushes each
// Transpose to NCHW through the node reading it when its cost check says
// so, and Transposes that meet cancel. What is left: a node runs
// channels-last when it is a QLinearConv, or one of the ops below whose
// push was taken; a Transpose copies each NCHW tensor such a node reads
// (one per tensor) and each channels-last tensor another node or the
// caller reads, as a new value of the same bytes. Probe: FastestDet's QDQ
// copy keeps 43 Transposes in ORT's optimized model (+14 of its own), at
// its channel shuffles' Reshapes and its head.
bool IsChannelsLastKernel(const IrNode& node, const ShapeLookup& shape_of, const IrGraph& graph) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  // QOperator-format models have ONNX's QLinearConv (the same inputs).
  if (proto.op_type() != "QLinearConv" || (proto.domain() != "com.microsoft" && !IsDefaultDomain(proto))) return false;
  const std::optional<ValueShape> input = ShapeOfValue(graph, shape_of, node.inputs[0]);
  return input.has_value() && input->dims.size() == 4;
}

// The ops of our model whose handler (onnx_transpose_optimization.cc's
// handler_map, ort_transpose_optimization.cc's OrtExtendedHandlers) moves
// a Transpose from their inputs to their outputs: elementwise ops, Q and
// DQ, Concat, Split, ORT's QLinear binary ops and pools, and an 8-bit
// MaxPool (NhwcMaxPool). Every one transposes its outputs.
bool MovesTransposes(const onnx::NodeProto& proto) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "QLinearAveragePool",
      "QLinearGlobalAveragePool", "Add", "Sub", "Mul", "Div", "Sum", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu",
      "QuantizeLinear", "DequantizeLinear", "Cast", "Concat", "Split", "Identity", "MaxPool"};
  return (IsDefaultDomain(proto) || proto.domain() == "com.microsoft") && kOps->contains(proto.op_type());
}

bool IsRankFour(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  return shape.has_value() && shape->dims.size() == 4;
}

// EstimateValueRank: the dims that are not 1 (5 when the shape is unknown),
// the cost of transposing a value.
int TransposeCost(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  if (!shape.has_value()) return 5;
  int cost = 0;
  for (const std::optional<int64_t>& dim : shape->dims) cost += dim.has_value() && *dim == 1 ? 0 : 1;
  return cost;
}

bool ProducedChannelsLast(const IrGraph& graph, const std::vector<bool>& channels_last, ValueId id) {
  const IrValue& value = graph.values[id];
  return value.origin == ValueOrigin::kNodeOutput && value.producer >= 0 && channels_last[value.producer];
}

bool IsEightBitMaxPool(const IrNode& node, const ShapeLookup& shape_of, const IrGraph& graph) {
  if (!IsDefaultDomain(*node.proto) || node.proto->op_type() != "MaxPool" || node.outputs.size() != 1) return false;
  const std::optional<ValueShape> output = ShapeOfValue(graph, shape_of, node.outputs[0]);
  return output.has_value() &&
         (output->data_type == onnx::TensorProto::UINT8 || output->data_type == onnx::TensorProto::INT8);
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
  // OptimizeImpl's outputs_leading_to_transpose: the values a Transpose
  // reads (the model's own, and those NhwcTransformer put before each
  // QLinearConv), and the inputs of a node that moves Transposes whose
  // output leads to one.
  std::vector<bool> leads(graph.values.size(), false);
  for (size_t i = node_count; i-- > 0;) {
    const IrNode& node = graph.nodes[i];
    if (node.inputs.empty()) continue;
    if (channels_last[i] || (IsDefaultDomain(*node.proto) && node.proto->op_type() == "Transpose")) {
      leads[node.inputs[0]] = true;
      continue;
    }
    if (!MovesTransposes(*node.proto)) continue;
    bool output_leads = false;
    for (ValueId output : node.outputs) output_leads = output_leads || leads[output];
    if (!output_leads) continue;
    for (ValueId input : node.inputs) leads[input] = true;
  }
  // The pushes, in node order. ProcessTranspose: OrtEPCostCheck pushes
  // through an (8-bit: HandleMaxPool) MaxPool; else the default cost
  // (CalculateCost): each input read channels-last saves its cost, each
  // other non-constant input costs its own, and when that is a saving the
  // output's Transpose costs too unless the output leads to a Transpose;
  // pushed when the total is below 0.
  for (size_t id = 0; id < node_count; ++id) {
    const IrNode& node = graph.nodes[id];
    if (channels_last[id] || !MovesTransposes(*node.proto) || node.outputs.empty()) continue;
    bool reads_channels_last = false;
    int cost = 0;
    for (ValueId input : node.inputs) {
      if (IsConstantWeight(graph, summary, input)) continue;
      if (ProducedChannelsLast(graph, channels_last, input) && IsRankFour(graph, shape_of, input)) {
        reads_channels_last = true;
        cost -= TransposeCost(graph, shape_of, input);
      } else {
        cost += TransposeCost(graph, shape_of, input);
      }
    }
    if (!reads_channels_last) continue;
    bool outputs_four = true;
    for (ValueId output : node.outputs) outputs_four = outputs_four && IsRankFour(graph, shape_of, output);
    if (!outputs_four) continue;
    if (node.proto->op_type() == "MaxPool") {
      if (IsEightBitMaxPool(node, shape_of, graph) && ProducedChannelsLast(graph, channels_last, node.inputs[0])) {
        channels_last[id] = true;
      }
      continue;
    }
    if (cost < 0) {
      bool output_leads = false;
      int output_cost = 0;
      for (ValueId output : node.outputs) {
        output_leads = output_leads || leads[output];
        output_cost = std::max(output_cost, TransposeCost(graph, shape_of, output));
      }
      if (!output_leads) cost += output_cost;
    }
    channels_last[id] = cost < 0;
  }
  // The transpose optimizer's second pass (OptimizeImpl, core/optimizer/
  // transpose_optimization/onnx_transpose_optimization.cc): a Transpose
  // that is the only reader of a DequantizeLinear and feeds no
  // QuantizeLinear moves above it, so the DequantizeLinear runs NCHW and
  // the Transpose copies the 8-bit tensor, not the float one. Here: a
  // channels-last DequantizeLinear whose readers all run NCHW runs NCHW.
  // Probes: ORT's optimized models of light_shufflenet's QDQ copy (a
  // Transpose after each QLinearConv, before the DequantizeLinear of its
  // float BatchNormalization) and of FastestDet's with int8 activations
  // (before the DequantizeLinear of a float MaxPool).
  for (size_t id = 0; id < node_count; ++id) {
    const IrNode& node = graph.nodes[id];
    if (!channels_last[id] || !IsDequantizeLinear(*node.proto) || node.outputs.size() != 1) {
      continue;
    }
    const IrValue& output = graph.values[node.outputs[0]];
    if (output.consumers.empty() && !output.is_graph_output) continue;
    bool readers_nchw = true;
    for (NodeId reader : output.consumers) {
      readers_nchw = readers_nchw && !channels_last[reader] && !IsQuantizeLinear(*graph.nodes[reader].proto);
    }
    if (readers_nchw) channels_last[id] = false;
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
                                   .sized_as = like, .channels_last = true});
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
      if (!first_outside && !is_graph_output) {
        // Read channels-last only: the value itself is channels-last. The
        // transpose optimizer permutes the dims of each output it moves a
        // Transpose past (TransposeOutput: PermuteDims(perm_inv)), and the
        // planner's SameSize compares dims: an NCHW tensor of the same bytes
        // never takes its buffer. Probe qdq_channels_last_add; the float
        // AveragePool of light_densenet121's int8 copy, whose NCHW input
        // takes block 1's early Concat buffers, not its Mul/Add chains' ones.
        graph.values[output].channels_last = rank_four(output);
        continue;
      }
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
