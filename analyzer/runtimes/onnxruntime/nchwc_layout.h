// ORT's NCHWc layout pass for the onnxruntime-cpu profile
// (runtime_profile.h): the level-3 rewrite of
// core/optimizer/nchwc_transformer.cc, which runs 2-D Convs, pools and the
// ops around them on tensors in a blocked channel layout. It changes which
// tensors exist and their sizes, so it is a graph rewrite like the fusions:
//  - a tensor an NCHWc node writes is a new value (NAME.nchwc) sized after
//    the NCHW value it stands for (IrValue::sized_as), its channels padded
//    to whole blocks (IrValue::channel_block): 8 channels with AVX2, 16 with
//    AVX-512F (cpu_isa.h; no NCHWc at all on ARM64);
//  - ReorderInput and ReorderOutput nodes copy between the layouts where a
//    reader needs the other one, once per tensor;
//  - an Add/Sum of a single-use NchwcConv is fused into it, written over the
//    other addend (FusionSummary::writes_over), then an activation.
// What it does not model: the NchwcArgument shape tracking ORT uses to prove
// symbolic shapes equal (we compare known dims), and MLAS's Strassen 1x1
// path at block 16 (snchwc_strassen.cpp: only when explicitly enabled).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Rewrites `graph` in place (nodes reordered topologically, removed and
// added; values added); counts into `summary`. `has_activation` is indexed
// like graph.nodes, before and after: a Conv whose kernel already applies
// an activation (ORT's level-2 fusion), which takes in no Sum then. `block`:
// channels per NCHWc block of the target ISA (NchwcBlockSize, > 1). The
// nodes are taken in ORT's own order (execution_order.h; NchwcTransformer
// walks GraphViewer's order), so the nodes made are numbered as ORT numbers
// them.
void ApplyNchwcLayout(int64_t block, const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph,
                      std::vector<bool>& has_activation);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NCHWC_LAYOUT_H_
