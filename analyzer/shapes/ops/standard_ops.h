// Internal to ops/: the default domain's shape functions, registered one op
// family at a time into the table behind FindStandardShapeFunction
// (op_context.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_STANDARD_OPS_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_STANDARD_OPS_H_

#include "analyzer/shapes/ops/op_helpers.h"

namespace footprint::symbolic {

// Arithmetic, comparisons and logic (broadcast), unary math, Where, Cast.
void AddElementwiseFunctions(ShapeFunctionTable& table);
// Shape, Size, and the ops that build a tensor from a shape: Expand,
// ConstantOfShape, Range, Tile.
void AddShapeTensorFunctions(ShapeFunctionTable& table);
// Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Gather, Slice, Pad, and
// the data-dependent NonZero, Unique, Compress.
void AddReshapeFunctions(ShapeFunctionTable& table);
// Conv and pools for symbolic spatial dims, global pools, MatMul, Gemm.
void AddConvPoolFunctions(ShapeFunctionTable& table);
// Reductions, Split, Resize and the normalizations.
void AddReduceNormFunctions(ShapeFunctionTable& table);
// Sequence*, SplitToSequence, ConcatFromSequence.
void AddSequenceFunctions(ShapeFunctionTable& table);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_STANDARD_OPS_H_
