// ORT's transpose optimizer (core/optimizer/transpose_optimization/), level
// 1, as far as the models here need it: a Transpose, a Softmax or LogSoftmax
// along one axis, and the inverse Transpose cancel.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// Level 1, ORT's transpose optimizer (core/optimizer/transpose_optimization/):
// a Transpose, a Softmax or LogSoftmax along one axis, and the inverse
// Transpose cancel; the op then works along the permuted axis of the first
// Transpose's input and writes the second's output. Measured (a [3, 5,
// 21600] tensor): Transpose, LogSoftmax(axis 2), inverse Transpose peaks
// exactly like LogSoftmax(axis 1) alone, whose kernel then transposes (see
// SoftmaxWorkspaceBytes).
PassChange CancelTransposePairs(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t first_id = 0; first_id < graph.nodes.size(); ++first_id) {
    const IrNode& first = graph.nodes[first_id];
    if (removed[first_id] || !IsDefaultDomain(*first.proto) || first.proto->op_type() != "Transpose" ||
        first.inputs.size() != 1 || first.outputs.size() != 1) {
      continue;
    }
    const std::vector<int64_t> perm = IntsAttribute(*first.proto, "perm");  // Empty: the default reversal.
    const NodeId middle_id = SoleReader(graph, first.outputs[0]);
    if (perm.empty() || middle_id < 0 || removed[middle_id]) continue;
    IrNode& middle = graph.nodes[middle_id];
    const std::string& op = middle.proto->op_type();
    if (!IsDefaultDomain(*middle.proto) || (op != "Softmax" && op != "LogSoftmax") || middle.inputs.size() != 1 ||
        middle.outputs.size() != 1) {
      continue;
    }
    const NodeId last_id = SoleReader(graph, middle.outputs[0]);
    if (last_id < 0 || removed[last_id]) continue;
    const IrNode& last = graph.nodes[last_id];
    if (!IsDefaultDomain(*last.proto) || last.proto->op_type() != "Transpose" || last.outputs.size() != 1) continue;
    const std::vector<int64_t> back = IntsAttribute(*last.proto, "perm");
    const int64_t rank = static_cast<int64_t>(perm.size());
    bool inverse = static_cast<int64_t>(back.size()) == rank;
    for (int64_t i = 0; inverse && i < rank; ++i) {
      inverse = perm[i] >= 0 && perm[i] < rank && back[perm[i]] == i;
    }
    const onnx::AttributeProto* axis_attribute = FindAttribute(*middle.proto, "axis");
    if (!inverse || axis_attribute == nullptr) continue;  // The default axis differs by opset.
    int64_t axis = axis_attribute->i();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    auto proto = std::make_shared<onnx::NodeProto>(*middle.proto);
    FindAttribute(*proto, "axis")->set_i(perm[axis]);
    UseRuntimeProto(context.rewrite, middle, std::move(proto));
    const ValueId source = first.inputs[0];
    for (ValueId gone : {first.outputs[0], middle.outputs[0]}) MarkFusedAway(graph, context.rewrite, gone);
    std::replace(graph.values[source].consumers.begin(), graph.values[source].consumers.end(),
                 static_cast<NodeId>(first_id), middle_id);
    middle.inputs = {source};
    middle.outputs = last.outputs;
    graph.values[last.outputs[0]].producer = middle_id;
    removed[first_id] = true;
    removed[last_id] = true;
    change.fused_nodes += 2;
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

}  // namespace

const Pass kTransposeOptimizer = {.name = "TransposeOptimizer (Transpose, Softmax, inverse Transpose)",
                                  .stage = OrtStage::kLevel1,
                                  .source = "core/optimizer/transpose_optimization/onnx_transpose_optimization.cc",
                                  .apply = &CancelTransposePairs};

}  // namespace footprint::ort
