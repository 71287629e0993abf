// ORT's dynamic-quantization rules (dynamic_quantization.h). Paths are in
// github.com/microsoft/onnxruntime; "probe" means an ORT 1.30 optimized-model
// dump or heap measurement of bench/ground_truth/.
#include "analyzer/runtimes/onnxruntime/dynamic_quantization.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// DynamicQuantizeMatMulFusion (core/optimizer/dynamic_quantize_matmul_fusion.cc):
// DynamicQuantizeLinear -> MatMulInteger (constant B) -> Cast -> Mul by the
// product of the scales becomes one DynamicQuantizeMatMul reading the float A:
// the uint8 A, the int32 product and its float copy never exist. Probe: the
// dynamic copy of tiny-random-lfm2 keeps one DynamicQuantizeMatMul and no
// DynamicQuantizeLinear, Cast or Mul.
void FuseDynamicQuantizeMatMul(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed) {
  auto sole_reader = [&](ValueId value, const char* op) -> NodeId {
    const IrValue& v = graph.values[value];
    if (v.is_graph_output || v.consumers.size() != 1) return -1;
    const NodeId reader = v.consumers[0];
    const onnx::NodeProto& proto = *graph.nodes[reader].proto;
    return !removed[reader] && IsDefaultDomain(proto) && proto.op_type() == op ? reader : -1;
  };
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    IrNode& matmul = graph.nodes[id];
    if (removed[id] || !IsDefaultDomain(*matmul.proto) || matmul.proto->op_type() != "MatMulInteger" ||
        matmul.inputs.size() < 2 || matmul.outputs.size() != 1) {
      continue;
    }
    const IrValue& a = graph.values[matmul.inputs[0]];
    if (a.origin != ValueOrigin::kNodeOutput || a.producer < 0) continue;
    const NodeId quantize_id = a.producer;
    IrNode& quantize = graph.nodes[quantize_id];
    if (removed[quantize_id] || quantize.proto->op_type() != "DynamicQuantizeLinear" || quantize.inputs.empty()) {
      continue;
    }
    const NodeId cast_id = sole_reader(matmul.outputs[0], "Cast");
    if (cast_id < 0) continue;
    const NodeId mul_id = sole_reader(graph.nodes[cast_id].outputs[0], "Mul");
    if (mul_id < 0) continue;
    // Every output of the DynamicQuantizeLinear read inside the group only:
    // by this MatMulInteger, or by the Mul of the scales feeding the last Mul.
    NodeId scale_mul_id = -1;
    bool inside = true;
    for (ValueId output : quantize.outputs) {
      for (NodeId reader : graph.values[output].consumers) {
        if (reader == static_cast<NodeId>(id)) continue;
        const IrNode& r = graph.nodes[reader];
        if (r.proto->op_type() == "Mul" && r.outputs.size() == 1 &&
            graph.values[r.outputs[0]].consumers.size() == 1 && graph.values[r.outputs[0]].consumers[0] == mul_id &&
            !graph.values[r.outputs[0]].is_graph_output) {
          scale_mul_id = reader;
          continue;
        }
        inside = false;
      }
      if (graph.values[output].is_graph_output) inside = false;
    }
    if (!inside) continue;
    // The bias: an Add of a constant [N] (or [1, ..., N]) after the last Mul,
    // N the weight's last dim (the fusion's CheckBiasShape), is taken in too.
    // Probe: the dynamic copy of vision_models.py's ViT, whose Add(bias,
    // product) nodes (bias first, as torch writes a Linear) ORT's optimized
    // model has as DynamicQuantizeMatMul's fifth input.
    NodeId bias_add_id = sole_reader(graph.nodes[mul_id].outputs[0], "Add");
    ValueId bias = -1;
    if (bias_add_id >= 0 && graph.nodes[bias_add_id].inputs.size() == 2) {
      const IrNode& add = graph.nodes[bias_add_id];
      bias = add.inputs[0] == graph.nodes[mul_id].outputs[0] ? add.inputs[1] : add.inputs[0];
      const onnx::TensorProto* bias_tensor = IsConstantWeight(graph, summary, bias) ? ConstantTensor(graph, bias) : nullptr;
      const onnx::TensorProto* weight = ConstantTensor(graph, matmul.inputs[1]);
      bool fits = bias_tensor != nullptr && weight != nullptr && bias_tensor->dims_size() >= 1 && weight->dims_size() >= 2;
      for (int axis = 0; fits && axis + 1 < bias_tensor->dims_size(); ++axis) fits = bias_tensor->dims(axis) == 1;
      fits = fits && bias_tensor->dims(bias_tensor->dims_size() - 1) == weight->dims(weight->dims_size() - 1);
      if (!fits) bias_add_id = -1;
    } else {
      bias_add_id = -1;
    }
    // The fused node: float A and the weights in, the last Mul's (or the
    // bias Add's) output out.
    const ValueId float_a = quantize.inputs[0];
    std::vector<ValueId> inputs = {float_a};
    for (size_t slot = 1; slot < matmul.inputs.size(); ++slot) inputs.push_back(matmul.inputs[slot]);
    if (bias_add_id >= 0) inputs.push_back(bias);
    for (ValueId input : matmul.inputs) EraseConsumer(graph.values[input], static_cast<NodeId>(id));
    for (NodeId gone : {quantize_id, cast_id, mul_id, scale_mul_id, bias_add_id}) {
      if (gone < 0) continue;
      for (ValueId input : graph.nodes[gone].inputs) EraseConsumer(graph.values[input], gone);
    }
    for (ValueId input : inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(id));
    std::vector<ValueId> gone_values = quantize.outputs;
    gone_values.push_back(matmul.outputs[0]);
    gone_values.push_back(graph.nodes[cast_id].outputs[0]);
    if (scale_mul_id >= 0) gone_values.push_back(graph.nodes[scale_mul_id].outputs[0]);
    if (bias_add_id >= 0) gone_values.push_back(graph.nodes[mul_id].outputs[0]);
    const ValueId result = graph.nodes[bias_add_id >= 0 ? bias_add_id : mul_id].outputs[0];
    for (ValueId value : gone_values) MarkFusedAway(graph, summary, value);
    matmul.inputs = inputs;
    matmul.outputs = {result};
    graph.values[result].producer = static_cast<NodeId>(id);
    auto proto = std::make_shared<onnx::NodeProto>(*matmul.proto);
    proto->set_op_type("DynamicQuantizeMatMul");
    proto->set_domain("com.microsoft");
    UseRuntimeProto(graph, matmul, std::move(proto));
    for (NodeId gone : {quantize_id, cast_id, mul_id, scale_mul_id, bias_add_id}) {
      if (gone < 0) continue;
      removed[gone] = true;
      ++summary.fused_nodes;
    }
  }
}

// CommonSubexpressionElimination (core/optimizer/common_subexpression_elimination.cc)
// for DynamicQuantizeLinear: quantize_dynamic writes one per reader of a
// tensor; ORT keeps the first and its readers all read it. Probe: the dynamic
// copy of FastestDet, 70 in the file, 63 in ORT's optimized model.
void MergeDynamicQuantizers(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed) {
  absl::flat_hash_map<ValueId, NodeId> first_of;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (removed[id] || !IsDefaultDomain(*node.proto) || node.proto->op_type() != "DynamicQuantizeLinear" ||
        node.inputs.size() != 1) {
      continue;
    }
    auto [it, inserted] = first_of.try_emplace(node.inputs[0], static_cast<NodeId>(id));
    if (inserted) continue;
    MergeIntoFirst(static_cast<NodeId>(id), it->second, graph, summary, removed);
  }
}

}  // namespace footprint::ort
