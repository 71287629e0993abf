// ORT's level-1 CommonSubexpressionElimination on the constants our
// folding computes (core/optimizer/common_subexpression_elimination.cc,
// before ConstantFolding): ConstantOfShape nodes whose shape inputs are
// weights of equal contents and whose values are equal are one node, so
// their folded outputs are one weight that all their readers share.
// Measured (ORT 1.30 optimized-model dumps): two ConstantOfShape of the same
// shape and value read by two MatMuls fold into one initializer; two
// initializers of equal contents stay two, as do two ConstantOfShape of
// different values.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SHARED_CONSTANTS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SHARED_CONSTANTS_H_

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Readers of a duplicate folded ConstantOfShape value read the first one
// instead; the duplicate becomes kFusedAway (listed in
// summary.fused_tensors). Graph outputs are kept.
void ShareEqualConstantsOfShape(FusionSummary& summary, IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SHARED_CONSTANTS_H_
