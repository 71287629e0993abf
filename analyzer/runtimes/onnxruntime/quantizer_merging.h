// ORT's level-1 CommonSubexpressionElimination on the quantizers of QDQ
// graphs: equal QuantizeLinear nodes (and com.microsoft DequantizeLinear
// ones) on the same inputs become one. Called by ApplyQuantizedRewrites
// (qdq_fusion.h) before the QDQ selectors; nodes it takes out are marked in
// `removed`.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZER_MERGING_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZER_MERGING_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// A QuantizeLinear (either domain) or a com.microsoft DequantizeLinear with
// the same inputs and attributes as an earlier one: its readers read the
// earlier one's output, and it goes.
void MergeEqualQuantizers(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZER_MERGING_H_
