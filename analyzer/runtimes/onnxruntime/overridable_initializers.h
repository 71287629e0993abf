// Initializers the caller may override, and what ONNX Runtime then cannot
// know of the graph: part of the onnxruntime-cpu profile (runtime_profile.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_OVERRIDABLE_INITIALIZERS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_OVERRIDABLE_INITIALIZERS_H_

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
// weight applies to them (FusionSummary::overridable).
std::vector<bool> OverridableInitializers(int64_t ir_version, const IrGraph& graph);

// ORT's shape inference takes only constant initializers as data
// (graph.cc, InferenceContextImpl::getInputData: GetConstantInitializer; no
// partial data propagation): an op sized by the data of an overridable
// initializer (graph inputs too), such as a Slice's bounds, a Reshape's
// shape or a ConstantOfShape's shape, gets an output of unknown dims, and so
// does every node whose output dims follow from a value of unknown dims, up
// to a Reshape to stored dims or a value whose dims the file itself gives
// (value_info, graph outputs: ORT keeps the file's shape where its
// inference has none). Its planner never hands such a value a freed buffer
// nor its buffer to another (allocation_planner.cc: SameSize needs known
// dims): each is freed at its last use. fit --emit-model writes the
// patches so (patching/rewrite.h). Measured: the generated ResNet-50
// patched 3x3 (written by main before this: 8,620,408; with overridable
// bounds 4,852,840); QDQ copies of light_* models whose weights are
// ConstantOfShape of overridable shapes, with no value_info
// (light_resnet50 1.771 -> 0.998 of ORT); the fp16 copy with value_info
// for every value keeps its reuse (1.000).
void MarkShapesOrtCannotInfer(const FusionSummary& summary, IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_OVERRIDABLE_INITIALIZERS_H_
