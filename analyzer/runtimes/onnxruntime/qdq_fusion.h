// The onnxruntime-cpu profile's rules for quantized graphs (issue 23): what
// ONNX Runtime 1.30's CPU provider does to QDQ and dynamically quantized
// models before it plans memory, and the scratch of its quantized kernels.
// Each rule of qdq_fusion.cc cites ORT's source (github.com/microsoft/
// onnxruntime) or a probe measured with bench/ground_truth/ (heap shim,
// ORT's optimized-model dump).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QDQ_FUSION_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QDQ_FUSION_H_

#include <cstdint>
#include <optional>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Rewrites `graph` (after the analysis's constant folding, before ORT's other
// rules) as ORT's QDQ and dynamic-quantization transformers do:
//  - each DequantizeLinear -> op -> QuantizeLinear group a selector of
//    core/optimizer/qdq_transformer/selectors_actions/ takes becomes one node
//    (QLinearConv, QLinearMatMul, QGemm, QLinearAdd/Mul, QLinearConcat,
//    QLinear pools and activations; or the op itself on the quantized
//    tensor for data-movement ops, whose Q/DQ are dropped) that reads the
//    DequantizeLinear inputs and writes the QuantizeLinear outputs; the float
//    tensors inside become kFusedAway, weights stay quantized;
//  - a DequantizeLinear of a weight that no group takes runs at every run
//    (ORT's constant folding skips DequantizeLinear): it is scheduled again
//    as a node, its float output a run tensor;
//  - MatMulInteger -> Cast -> Mul (-> Mul) after a DynamicQuantizeLinear
//    becomes DynamicQuantizeMatMul (core/optimizer/
//    dynamic_quantize_matmul_fusion.cc);
//  - level 3, NhwcTransformer: the quantized Conv and pools run channels-last,
//    with Transposes (new values of the same bytes) where an NCHW op meets
//    them.
//  - on x86-64 (`isa` not ARM64), int8 Q -> DQ pairs of one reader run in
//    uint8 first, and an int8 Conv or MatMul is not fused;
// Counts what it fused in `summary`.
void ApplyQuantizedRewrites(CpuIsa isa, const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QDQ_FUSION_H_
