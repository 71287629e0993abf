// ORT's QuickGeluFusion (core/optimizer/quick_gelu_fusion.cc, a level-2 pass
// on the CPU provider): x * Sigmoid(x), the SiLU or Swish of every YOLO,
// EfficientNet and Llama MLP, and x * Sigmoid(alpha * x) with alpha a
// constant scalar, become one com.microsoft QuickGelu node. The Sigmoid's
// output (and the alpha Mul's) never exists: at a SiLU, ORT holds the input
// and the output where the unfused pair holds three tensors. Measured (ORT
// 1.30, AVX-512, 1 MiB probes): Neg -> SiLU -> Neg and Conv -> SiLU -> Conv
// peak at three tensors, not four; a Sigmoid read by another node too is
// not fused.
//
// QuickGelu's CPU kernel is float32 only (the contrib registration), so
// only float32 pairs are fused: a float16 SiLU is fused when the Casts made
// it float32 and ORT runs level 2 again after them (fp16_casts.h; measured:
// the float16 copies of the YOLO-shaped detectors run QuickGelu nodes).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUICK_GELU_FUSION_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUICK_GELU_FUSION_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Fuses each float32 [Mul(x, alpha) ->] Sigmoid -> Mul(x, .) whose Sigmoid
// (and alpha Mul) has that one reader into a QuickGelu node (a new proto in
// graph.runtime_protos) that writes the last Mul's output; the values
// between become kFusedAway (summary.fused_tensors, fused_nodes). A value
// is float32 by its IrValue::runtime_data_type when set, else by the model.
// `per_node`, when given, is indexed like graph.nodes and kept in step.
void FuseQuickGelu(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph,
                   std::vector<bool>* per_node = nullptr);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUICK_GELU_FUSION_H_
