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

#include <optional>
#include <string>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// The value of a small constant tensor as bytes (type, dims, little-endian
// data), by which ORT's common subexpression elimination
// (common_subexpression_elimination.cc, level 1) tells constants apart:
// measured, ORT 1.30: two Adds of equal initializers of <= 8 float, float16,
// double, int32 or int64 elements, raw or typed data, become one; of 9, or of
// int8/uint8, two; dims must match. nullopt for a tensor it does not compare
// by value (those stay distinct).
std::optional<std::string> SmallConstantKey(const onnx::TensorProto& tensor);

// Level-1 CSE of those constants in the graph: every reader of a small
// initializer or Constant equal to an earlier one reads the earlier one (a
// graph output or an overridable initializer keeps its own). The copies
// keep their origin, now unread, as ORT drops them. Why in the graph: the
// float16 rules decide by a weight's readers (a Cast of a weight read once is
// converted at load, fp16_casts.h): PyTorch's per-Clip min and max, merged,
// are read by every Clip.
void ShareEqualSmallConstants(FusionSummary& summary, IrGraph& graph);

// Readers of a duplicate folded ConstantOfShape value read the first one
// instead; the duplicate becomes kFusedAway (listed in
// summary.fused_tensors). Graph outputs are kept.
void ShareEqualConstantsOfShape(FusionSummary& summary, IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SHARED_CONSTANTS_H_
