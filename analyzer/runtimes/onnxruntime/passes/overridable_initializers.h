// Initializers the caller may override, and what ONNX Runtime then cannot
// know of the graph: two passes of the onnxruntime-cpu targets (passes.h:
// kOverridableInitializers, kShapesOrtCannotInfer), and the hook
// RuntimeModel::NonConstantWeights.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_OVERRIDABLE_INITIALIZERS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_OVERRIDABLE_INITIALIZERS_H_

#include <cstdint>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// The initializers a caller may override (indexed like graph.values; empty
// below IR version 4): those also listed as graph inputs. ORT treats them as
// not constant (core/graph/graph.cc, GetConstantInitializer and
// CanOverrideInitializer), so ConstantFolding skips every node reading one
// (graph_utils::AllNodeInputsAreConstant) and no rule that needs a constant
// weight applies to them (GraphRewrite::overridable; the pass kOverridableInitializers sets it).
std::vector<bool> OverridableInitializers(int64_t ir_version, const IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_OVERRIDABLE_INITIALIZERS_H_
