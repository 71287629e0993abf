// The dims of graph inputs that no binding gives a value, named up front in
// every report with the flags that bind them, and the sizes the model itself
// states for them (an output declared [1, 4420, 2] whose first dim is
// `batch` says batch = 1).
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_UNBOUND_DIMS_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_UNBOUND_DIMS_H_

#include <string>
#include <vector>

#include "analyzer/memory/analysis_result.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// The unbound dims of `bound_model`'s inputs (after --dim, --input-shape,
// --dim-default), in input order; a dim_param that is a formula
// ("past + 1") names each of its symbols. `engine_dims` are the made-up
// symbols --dim bound through the engine ("<input>_dim<k>"): bound too.
// `declared` is the graph whose declared output and value dims state sizes
// (the model as loaded), `shapes` the engine's values of the main graph
// (nullptr: no example sizes, each example is 1).
std::vector<UnboundDim> FindUnboundDims(const onnx::ModelProto& bound_model, const symbolic::SymbolValues& engine_dims,
                                        const onnx::GraphProto& declared, const symbolic::GraphShapes* shapes);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_UNBOUND_DIMS_H_
