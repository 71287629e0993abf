// ORT's NhwcTransformer for quantized kernels (level 3): which of them run
// channels-last, and the Transposes around them.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
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
bool IsChannelsLastKernel(const IrNode& node, const PassContext& context, const IrGraph& graph) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  // QOperator-format models have ONNX's QLinearConv (the same inputs).
  if (proto.op_type() != "QLinearConv" || (proto.domain() != "com.microsoft" && !IsDefaultDomain(proto))) return false;
  const std::optional<ValueShape> input = ShapeOfValue(graph, context, node.inputs[0]);
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

bool IsRankFour(const IrGraph& graph, const PassContext& context, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
  return shape.has_value() && shape->dims.size() == 4;
}

// EstimateValueRank: the dims that are not 1 (5 when the shape is unknown),
// the cost of transposing a value.
int TransposeCost(const IrGraph& graph, const PassContext& context, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
  if (!shape.has_value()) return 5;
  int cost = 0;
  for (const std::optional<int64_t>& dim : shape->dims) cost += dim.has_value() && *dim == 1 ? 0 : 1;
  return cost;
}

bool ProducedChannelsLast(const IrGraph& graph, const std::vector<bool>& channels_last, ValueId id) {
  const IrValue& value = graph.values[id];
  return value.origin == ValueOrigin::kNodeOutput && value.producer >= 0 && channels_last[value.producer];
}

bool IsEightBitMaxPool(const IrNode& node, const PassContext& context, const IrGraph& graph) {
  if (!IsDefaultDomain(*node.proto) || node.proto->op_type() != "MaxPool" || node.outputs.size() != 1) return false;
  const std::optional<ValueShape> output = ShapeOfValue(graph, context, node.outputs[0]);
  return output.has_value() &&
         (output->data_type == onnx::TensorProto::UINT8 || output->data_type == onnx::TensorProto::INT8);
}

// OptimizeImpl's outputs_leading_to_transpose: the values a Transpose reads
// (the model's own, and those NhwcTransformer put before each QLinearConv),
// and the inputs of a node that moves Transposes whose output leads to one.
std::vector<bool> LeadToTranspose(const IrGraph& graph, const std::vector<bool>& channels_last) {
  std::vector<bool> leads(graph.values.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
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
  return leads;
}

// Whether the transpose optimizer pushes the Transposes to NCHW through node
// `id` (which moves Transposes and runs NCHW so far). ProcessTranspose:
// OrtEPCostCheck pushes through an (8-bit: HandleMaxPool) MaxPool; else the
// default cost (CalculateCost): each input read channels-last saves its
// cost, each other non-constant input costs its own, and when that is a
// saving the output's Transpose costs too unless the output leads to a
// Transpose; pushed when the total is below 0.
bool PushesThrough(const IrGraph& graph, const PassContext& context, const std::vector<bool>& channels_last,
                   const std::vector<bool>& leads, NodeId id) {
  const IrNode& node = graph.nodes[id];
  bool reads_channels_last = false;
  int cost = 0;
  for (ValueId input : node.inputs) {
    if (IsConstantWeight(graph, context.rewrite, input)) continue;
    if (ProducedChannelsLast(graph, channels_last, input) && IsRankFour(graph, context, input)) {
      reads_channels_last = true;
      cost -= TransposeCost(graph, context, input);
    } else {
      cost += TransposeCost(graph, context, input);
    }
  }
  if (!reads_channels_last) return false;
  for (ValueId output : node.outputs) {
    if (!IsRankFour(graph, context, output)) return false;
  }
  if (node.proto->op_type() == "MaxPool") {
    return IsEightBitMaxPool(node, context, graph) && ProducedChannelsLast(graph, channels_last, node.inputs[0]);
  }
  if (cost < 0) {
    bool output_leads = false;
    int output_cost = 0;
    for (ValueId output : node.outputs) {
      output_leads = output_leads || leads[output];
      output_cost = std::max(output_cost, TransposeCost(graph, context, output));
    }
    if (!output_leads) cost += output_cost;
  }
  return cost < 0;
}

// The transpose optimizer's second pass (OptimizeImpl, core/optimizer/
// transpose_optimization/onnx_transpose_optimization.cc): a Transpose that
// is the only reader of a DequantizeLinear and feeds no QuantizeLinear moves
// above it, so the DequantizeLinear runs NCHW and the Transpose copies the
// 8-bit tensor, not the float one. Here: a channels-last DequantizeLinear
// whose readers all run NCHW runs NCHW. Probes: ORT's optimized models of
// light_shufflenet's QDQ copy (a Transpose after each QLinearConv, before
// the DequantizeLinear of its float BatchNormalization) and of FastestDet's
// with int8 activations (before the DequantizeLinear of a float MaxPool).
void DequantizeBeforeTranspose(const IrGraph& graph, std::vector<bool>& channels_last) {
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
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
}

// Per node: whether it runs channels-last (empty when no node does). The
// pushes are taken in node order.
std::vector<bool> ChannelsLastNodes(const PassContext& context, const IrGraph& graph) {
  const size_t node_count = graph.nodes.size();
  std::vector<bool> channels_last(node_count, false);
  bool any = false;
  for (size_t id = 0; id < node_count; ++id) {
    channels_last[id] = IsChannelsLastKernel(graph.nodes[id], context, graph);
    any = any || channels_last[id];
  }
  if (!any) return {};
  const std::vector<bool> leads = LeadToTranspose(graph, channels_last);
  for (size_t id = 0; id < node_count; ++id) {
    const IrNode& node = graph.nodes[id];
    if (channels_last[id] || !MovesTransposes(*node.proto) || node.outputs.empty()) continue;
    channels_last[id] = PushesThrough(graph, context, channels_last, leads, static_cast<NodeId>(id));
  }
  DequantizeBeforeTranspose(graph, channels_last);
  return channels_last;
}

// The channels-last nodes' new values and Transposes.
class NhwcRewriter {
 public:
  NhwcRewriter(IrGraph& graph, PassContext& context, std::vector<bool> channels_last)
      : graph_(graph), context_(context), channels_last_(std::move(channels_last)),
        before_(graph.nodes.size() + 1) {}

  // Each NCHW image a channels-last node reads goes through one Transpose
  // to NHWC (one per tensor, before its first such reader).
  void ConvertInputs() {
    for (size_t id = 0; id < channels_last_.size(); ++id) {
      if (!channels_last_[id]) continue;
      for (size_t slot = 0; slot < graph_.nodes[id].inputs.size(); ++slot) {
        const ValueId input = graph_.nodes[id].inputs[slot];
        if (IsConstantWeight(graph_, context_.rewrite, input) || !IsRankFour(graph_, context_, input) ||
            ProducedChannelsLast(graph_, channels_last_, input)) {
          continue;
        }
        if (IsChannelsLastKernel(graph_.nodes[id], context_, graph_) && slot > 0) continue;  // Only X is an image.
        auto it = to_nhwc_.find(input);
        if (it == to_nhwc_.end()) {
          const ValueId copy = AddCopy(input);
          AddTranspose(input, copy, "TransposeToNhwc", before_[id]);
          it = to_nhwc_.emplace(input, copy).first;
        }
        graph_.nodes[id].inputs[slot] = it->second;
      }
    }
  }

  // Each output a channels-last node writes is channels-last; where an NCHW
  // node or the caller reads it, the node writes a channels-last copy and a
  // Transpose writes the NCHW value, before its first NCHW reader.
  void ConvertOutputs() {
    const size_t node_count = channels_last_.size();
    for (size_t id = 0; id < node_count; ++id) {
      if (!channels_last_[id]) continue;
      for (ValueId& output : graph_.nodes[id].outputs) {
        // Copies: AddCopy below grows graph.values, which may move them.
        const std::vector<NodeId> consumers = graph_.values[output].consumers;
        const bool is_graph_output = graph_.values[output].is_graph_output;
        std::optional<size_t> first_outside;
        for (NodeId reader : consumers) {
          if (!channels_last_[reader] && (!first_outside || static_cast<size_t>(reader) < *first_outside)) {
            first_outside = reader;
          }
        }
        if (!first_outside && !is_graph_output) {
          // Read channels-last only: the value itself is channels-last. The
          // transpose optimizer permutes the dims of each output it moves a
          // Transpose past (TransposeOutput: PermuteDims(perm_inv)), and the
          // planner's SameSize compares dims: an NCHW tensor of the same
          // bytes never takes its buffer. Probe qdq_channels_last_add; the
          // float AveragePool of light_densenet121's int8 copy, whose NCHW
          // input takes block 1's early Concat buffers, not its Mul/Add
          // chains' ones.
          MutableHeld(graph_, context_.rewrite, output).channels_last = IsRankFour(graph_, context_, output);
          continue;
        }
        const ValueId nchw = output;
        const ValueId nhwc = AddCopy(nchw);
        for (NodeId reader : consumers) {
          if (!channels_last_[reader]) continue;
          for (ValueId& input : graph_.nodes[reader].inputs) {
            if (input == nchw) input = nhwc;
          }
        }
        output = nhwc;
        AddTranspose(nhwc, nchw, "TransposeToNchw", before_[first_outside.value_or(node_count)]);
      }
    }
  }

  // Puts the Transposes into graph.nodes, each before the node that needs
  // it first (the last entry: after every node), and recomputes every
  // producer and consumer from the nodes.
  int64_t Finish() {
    const size_t node_count = graph_.nodes.size();
    std::vector<IrNode> nodes;
    for (size_t id = 0; id <= node_count; ++id) {
      for (IrNode& transpose : before_[id]) nodes.push_back(std::move(transpose));
      if (id < node_count) nodes.push_back(std::move(graph_.nodes[id]));
    }
    graph_.nodes = std::move(nodes);
    RelinkValues(graph_);
    return transposes_;
  }

 private:
  // A channels-last copy of `like` (the same bytes), NAME.nhwc.
  ValueId AddCopy(ValueId like) {
    return AddValue(graph_, context_.rewrite,
                    IrValue{.name = graph_.values[like].name + ".nhwc", .origin = ValueOrigin::kNodeOutput},
                    HeldValue{.sized_as = like, .channels_last = true});
  }

  void AddTranspose(ValueId from, ValueId to, const char* perm_name, std::vector<IrNode>& where) {
    auto proto = NewNodeProto("Transpose", "", std::string(perm_name) + "(" + graph_.values[from].name + ")",
                              {graph_.values[from].name}, {graph_.values[to].name});
    where.push_back(MadeNode(context_.rewrite, std::move(proto), {from}, {to}));
    ++transposes_;
  }

  IrGraph& graph_;
  PassContext& context_;
  const std::vector<bool> channels_last_;           // Per original node.
  std::vector<std::vector<IrNode>> before_;         // Per original node: the Transposes it needs first.
  absl::flat_hash_map<ValueId, ValueId> to_nhwc_;   // NCHW value -> its channels-last copy.
  int64_t transposes_ = 0;
};

// Rewrites `graph`: each channels-last node reads and writes channels-last
// copies (new values of the same bytes, `NAME.nhwc`), with a Transpose where
// an NCHW tensor enters or leaves; counted as reorder nodes. Every
// value such a node writes is held channels-last (HeldValue::channels_last: its dims are
// permuted in ORT, so the planner never gives its buffer to an NCHW tensor).
PassChange ApplyNhwcLayout(IrGraph& graph, PassContext& context) {
  std::vector<bool> channels_last = ChannelsLastNodes(context, graph);
  if (channels_last.empty()) return {};
  NhwcRewriter rewriter(graph, context, std::move(channels_last));
  rewriter.ConvertInputs();
  rewriter.ConvertOutputs();
  return {.reorder_nodes = rewriter.Finish()};
}

}  // namespace

const Pass kNhwcTransformer = {.name = "NhwcTransformer",
                               .stage = OrtStage::kLevel3,
                               .source = "core/optimizer/nhwc_transformer.cc",
                               .apply = &ApplyNhwcLayout};

}  // namespace footprint::ort
