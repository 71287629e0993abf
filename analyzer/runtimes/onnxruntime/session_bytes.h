// The heap ONNX Runtime's session keeps for its own structures (graph,
// kernels, plans) beside the weights: LoadedWeights::session_bytes, a linear
// model whose terms were measured on probe chains (session_bytes.cc names
// each probe).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_BYTES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_BYTES_H_

#include <cstdint>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// The session's structures for `graph` as the rewrites left it: its nodes
// with their attributes, `held_weights` (the initializers it keeps) and
// `new_initializers` the rewrites made, and what the rewrites took out of
// the file's graph (`removed_initializers` of its weights among them).
int64_t SessionBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                     const std::vector<ValueId>& held_weights, int64_t new_initializers, int64_t removed_initializers);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_BYTES_H_
