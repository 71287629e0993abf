#include "analyzer/memory/folding.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint {
namespace {

// Ops whose output differs from run to run: ORT's IsOperationDeterministic
// (onnxruntime/core/optimizer/utils.cc) lists exactly these of ai.onnx.
bool IsRandomOp(const std::string& op_type) {
  static const absl::flat_hash_set<std::string>* const kRandom = new absl::flat_hash_set<std::string>{
      "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"};
  return kRandom->contains(op_type);
}

bool IsWeight(ValueOrigin origin) {
  return origin == ValueOrigin::kInitializer || origin == ValueOrigin::kConstant || origin == ValueOrigin::kFolded;
}

}  // namespace

bool IsFoldableOp(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node)) return false;
  return !IsRandomOp(node.op_type()) && BodiesOf(node).empty();
}

FoldedGraph FoldConstants(IrGraph& graph, const std::vector<bool>& not_constant,
                          const std::vector<bool>& constant_outer) {
  FoldedGraph folded;
  std::vector<bool> is_folded(graph.nodes.size(), false);
  // Folded values feed later folds: repeat until nothing changes, as ORT's
  // topological pass does in one sweep (the file's order need not be one).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t node_id = 0; node_id < graph.nodes.size(); ++node_id) {
      if (is_folded[node_id]) continue;
      const IrNode& node = graph.nodes[node_id];
      if (node.inputs.empty() || !node.implicit_inputs.empty() || !IsFoldableOp(*node.proto)) continue;
      bool foldable = true;
      for (ValueId input : node.inputs) {
        const bool constant = not_constant.empty() || !not_constant[input];
        const ValueOrigin origin = graph.values[input].origin;
        const bool outer_weight = origin == ValueOrigin::kOuterScope && !constant_outer.empty() && constant_outer[input];
        foldable = foldable && constant && (IsWeight(origin) || outer_weight);
      }
      for (ValueId output : node.outputs) foldable = foldable && !graph.values[output].is_graph_output;
      if (!foldable) continue;
      is_folded[node_id] = true;
      changed = true;
      ++folded.folded_nodes;
      for (ValueId output : node.outputs) {
        IrValue& value = graph.values[output];
        value.origin = ValueOrigin::kFolded;
        value.producer = -1;
        value.folded_from = node.proto;
        folded.folded_values.push_back(output);
      }
    }
  }
  if (folded.folded_nodes > 0) RemoveNodes(is_folded, graph);
  return folded;
}
}  // namespace footprint
