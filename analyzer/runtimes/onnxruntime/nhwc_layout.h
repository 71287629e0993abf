// ORT's NhwcTransformer for quantized kernels: which of them run
// channels-last, and the Transposes around them (nhwc_layout.cc has the
// rule, its source and its probe).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NHWC_LAYOUT_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NHWC_LAYOUT_H_

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Rewrites `graph`: each channels-last node reads and writes channels-last
// copies (new values of the same bytes, `NAME.nhwc`), with a Transpose where
// an NCHW tensor enters or leaves; counted in summary.reorder_nodes. Every
// value such a node writes is marked IrValue::channels_last (its dims are
// permuted in ORT, so the planner never gives its buffer to an NCHW tensor).
void ApplyNhwcLayout(const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_NHWC_LAYOUT_H_
