// Constant folding as runtimes do it at load: a node whose inputs are all
// weights (initializers, Constant values or values folded before it) and
// whose op is deterministic is evaluated once when the session is created,
// and its outputs are held as weights. The memory model
// (docs/figures.md, "Modes beyond the baseline": fold)
// counts them in folded_weights_bytes, never in the arena; the folded nodes
// take no step. Off in the spec's baseline.
//
// The rule follows ONNX Runtime's ConstantFolding pass
// (onnxruntime/core/optimizer/constant_folding.cc): every input constant, no
// subgraph, no output that is a graph output (ORT keeps such a node), and a
// deterministic op (optimizer_utils::IsOperationDeterministic: no Random*,
// Multinomial, Bernoulli).
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_FOLDING_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_FOLDING_H_

#include <cstdint>
#include <vector>

#include "analyzer/loader/graph_ir.h"

namespace footprint {

// What folding did to one graph.
struct FoldedGraph {
  std::vector<ValueId> folded_values;  // Now ValueOrigin::kFolded, in the order folded.
  int64_t folded_nodes = 0;            // Nodes removed from the graph.
};

// True when a node of this op may be evaluated at load: the default domain,
// deterministic, no subgraph.
bool IsFoldableOp(const onnx::NodeProto& node);

// Folds every foldable node of `graph` in place: their outputs become
// kFolded values (folded_from set), the nodes leave graph.nodes (the others
// keep their order; producers and consumers are renumbered).
// `not_constant` (indexed like graph.values, may be empty) marks weights a
// runtime does not treat as constant (RuntimeModel::NonConstantWeights): a
// node reading one is not folded. In a body, `constant_outer` (indexed like
// graph.values, may be empty) marks the kOuterScope values that are constant
// weights of an enclosing graph: a runtime that folds bodies
// (RuntimeModel::FoldsBodyConstants) reads them as constants.
FoldedGraph FoldConstants(IrGraph& graph, const std::vector<bool>& not_constant = {},
                          const std::vector<bool>& constant_outer = {});


}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_FOLDING_H_
