// ORT's EnsureUniqueDQForNodeUnit (core/optimizer/qdq_transformer/
// ensure_unique_dq_for_node_unit.cc): before its level-1 passes
// (InferenceSession::TransformGraph runs it first whenever the QDQ rules are
// on, graph_transformer_utils.cc registers it again at level 1), ORT gives
// every reader of a DequantizeLinear its own copy of it, so that each QDQ
// group has DequantizeLinear nodes of its own. Each copy is a new node
// (Graph::AddNode: a higher NodeIndex, which decides where ORT's order runs
// it, execution_order.h), reads the original's inputs and writes a new
// tensor of the original's type and dims. A copy the QDQ rules do not fuse
// (qdq_fusion.h) makes its own float tensor at every run.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNIQUE_DEQUANTIZERS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNIQUE_DEQUANTIZERS_H_

#include "analyzer/loader/graph_ir.h"

namespace footprint::ort {

// For each DequantizeLinear node of `graph` (either domain), in ORT's order:
// its output's reader edges in the order ORT keeps them (reader NodeIndex,
// then input slot); readers inside a subgraph (implicit inputs) keep the
// original. When the output is also a graph output or read from a subgraph,
// every explicit reader edge gets a copy; otherwise the first keeps the
// original and every further one gets a copy. A copy is placed just before
// its reader in graph.nodes (which stays topological), its proto in
// graph.runtime_protos (made before any other rule's nodes, as in ORT) and
// its output sized as the original's (IrValue::sized_as). Weights'
// DequantizeLinear the analysis folded are not copied (ORT copies them too,
// when shared: not modelled). Copies of a com.microsoft DequantizeLinear are
// merged again by the CSE of quantizer_merging.h (ORT's level-1 CSE merges
// them, and its second EnsureUniqueDQForNodeUnit at the end of level 1
// copies them again: not modelled).
void EnsureUniqueDequantizers(IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNIQUE_DEQUANTIZERS_H_
