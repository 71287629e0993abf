// ORT's NCHWc layout pass for the onnxruntime-cpu profile
// (runtime_profile.h): the level-3 rewrite of
// core/optimizer/nchwc_transformer.cc, which runs 2-D Convs, pools and the
// ops around them on tensors in a blocked channel layout. It changes which
// tensors exist and their sizes, so it is a graph rewrite like the fusions:
//  - a tensor an NCHWc node writes is a new value (NAME.nchwc) sized after
//    the NCHW value it stands for (IrValue::sized_as), its channels padded
//    to whole blocks of 8 (IrValue::channel_block; AVX2's block);
//  - ReorderInput and ReorderOutput nodes copy between the layouts where a
//    reader needs the other one, once per tensor;
//  - an Add/Sum of a single-use NchwcConv is fused into it, written over the
//    other addend (FusionSummary::writes_over), then an activation.
// What it does not model: AVX-512's block of 16, and the NchwcArgument shape
// tracking ORT uses to prove symbolic shapes equal (we compare known dims).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Rewrites `graph` in place (nodes reordered topologically, removed and
// added; values added); counts into `summary`. `has_activation` is indexed
// like graph.nodes, before and after: a Conv whose kernel already applies
// an activation (ORT's level-2 fusion), which takes in no Sum then.
void ApplyNchwcLayout(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph,
                      std::vector<bool>& has_activation);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_
