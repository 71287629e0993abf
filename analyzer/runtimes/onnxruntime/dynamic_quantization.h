// ORT's level-2 rules for dynamically quantized graphs (ONNX Runtime's
// quantize_dynamic output): equal DynamicQuantizeLinear nodes on one input
// merged (its CSE), and DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul
// fused into DynamicQuantizeMatMul. Called by ApplyQuantizedRewrites
// (qdq_fusion.h); nodes it takes out are marked in `removed`.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_DYNAMIC_QUANTIZATION_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_DYNAMIC_QUANTIZATION_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// CommonSubexpressionElimination on DynamicQuantizeLinear: one per input.
void MergeDynamicQuantizers(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed);

// DynamicQuantizeMatMulFusion: the four nodes as one DynamicQuantizeMatMul.
void FuseDynamicQuantizeMatMul(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_DYNAMIC_QUANTIZATION_H_
