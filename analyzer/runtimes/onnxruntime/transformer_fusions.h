// Two of ORT's level-2 fusions on the CPU provider that transformer blocks
// (ViT, SegFormer, BERT-like encoders as torch.onnx.export writes them)
// meet at every layer; each removes full-size activations:
//  - GeluFusion (core/optimizer/gelu_fusion.cc): Div(x, sqrt 2) -> Erf ->
//    Add(1) -> Mul with x -> Mul(0.5), or Mul(x, 0.5) times (Erf + 1), is one
//    com.microsoft Gelu reading x; the four tensors between never exist.
//    Its CPU kernel is float32 only (contrib_ops/cpu/activations.cc), so only
//    float32 chains are fused here; it does not run in place.
//  - MatMulScaleFusion (core/optimizer/matmul_scale_fusion.cc): a float32
//    MatMul's input that is a Mul or Div by a constant scalar, or its one
//    reader that is, folds into FusedMatMul's alpha: the scaled tensor never
//    exists (attention's q * scale or scores / sqrt(d), 1 x heads x N x N).
//    A MatMul whose one reader is an Add of a weight became a Gemm at level 1
//    (matmul_add_fusion.cc) and is left to that chain rule.
// Measured (ORT 1.30, AVX-512): the ViT-like model of
// bench/ground_truth/vision_models.py runs Gelu and FusedMatMul nodes
// (profile), and the probes vit_gelu_* and vit_scale_* of probe_models.py.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TRANSFORMER_FUSIONS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TRANSFORMER_FUSIONS_H_

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Fuses each float32 Erf-form GELU into one com.microsoft Gelu node (a new
// proto in graph.runtime_protos, on the last Mul) that reads x and writes
// the last Mul's output; the values between become kFusedAway.
void FuseGelu(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph);

// Folds Mul / Div by constant scalars around float32 MatMuls into a
// com.microsoft FusedMatMul (a new proto on the MatMul): the MatMul reads the
// unscaled input (the scaling node goes when the MatMul was its only reader)
// and writes its scaling reader's output.
void FuseMatMulScale(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TRANSFORMER_FUSIONS_H_
