// ORT's level-1 CommonSubexpressionElimination on the constants our
// folding computes (core/optimizer/common_subexpression_elimination.cc,
// before ConstantFolding): ConstantOfShape nodes whose shape inputs are
// weights of equal contents and whose values are equal are one node, so
// their folded outputs are one weight that all their readers share.
// Measured (ORT 1.30 optimized-model dumps): two ConstantOfShape of the same
// shape and value read by two MatMuls fold into one initializer; two
// initializers of equal contents stay two, as do two ConstantOfShape of
// different values. The two passes (passes.h: kSmallConstantsCse,
// kConstantsOfShapeCse) are in shared_constants.cc; the key by which ORT
// tells small constants apart is here for the weights after load too.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_SHARED_CONSTANTS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_SHARED_CONSTANTS_H_

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

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_SHARED_CONSTANTS_H_
