// ORT's PadFusion (core/optimizer/pad_fusion.cc, a level-1 rewrite rule): a
// constant-mode Pad of zeros on the spatial dims, read only by a Conv or a
// MaxPool with explicit padding, is taken into that node's pads. The padded
// tensor never exists: TensorFlow exports (SSD, EfficientDet, MobileNets)
// write such a Pad before every stride-2 Conv ("SAME" padding). Measured (ORT
// 1.30, AVX-512): an SSD-shaped detector's five Pads are gone from ORT's
// optimized model, their Convs' pads asymmetric ([0, 0, 1, 1]).
//
// The conditions, as ORT checks them: Pad with at most three inputs (no
// axes), one reader and not a graph output; its pads and constant value
// constant weights (not overridable), the value zero, the pads zero on N and
// C and none negative; the reader a Conv or a MaxPool with one output and no
// auto_pad. ORT 1.30 takes every opset (probes at 13 and 21 to 24, Conv and
// MaxPool; an older snapshot of the rule listed Pad's versions up to 19).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PAD_FUSION_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PAD_FUSION_H_

#include <cstdint>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Removes each such Pad (counted in summary.fused_nodes, its output
// kFusedAway); its reader reads the Pad's input, with the pads added to its
// own (a new proto in graph.runtime_protos). `opset` is the model's default
// opset: before 11, the pads and value are Pad's attributes.
void FusePads(int64_t opset, FusionSummary& summary, IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PAD_FUSION_H_
