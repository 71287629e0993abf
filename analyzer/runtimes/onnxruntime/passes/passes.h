// Every pass of ONNX Runtime's session creation that the targets' tables
// (../targets.cc) run, each defined in the file named beside it. A pass is a
// Pass (../pass.h): its name, stage and source, and Apply. Adding one is a
// file here, its line below, and a row in a table.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_PASSES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_PASSES_H_

#include "analyzer/runtimes/onnxruntime/pass.h"

namespace footprint::ort {

// Graph construction and the session state.
extern const Pass kOverridableInitializers;   // overridable_initializers.cc: initializers also graph inputs.
extern const Pass kCallerOwnedInputs;         // session_state.cc: the graph's inputs live to the run's end.
extern const Pass kExecutionOrder;            // session_state.cc: GraphViewer's order, with ORT's node indices.
extern const Pass kShapesOrtCannotInfer;      // overridable_initializers.cc: no static shape behind an override.

// Partitioning and InsertCastTransformer.
extern const Pass kBfloat16WithoutKernel;     // fp16_casts.cc: refuses a bfloat16 op with no kernel.
extern const Pass kInlineFloat16Functions;    // fp16_function_bodies.cc: a float16 op's function body.
extern const Pass kInsertCastTransformer;     // fp16_casts.cc: float16 ops with no kernel run in float32.

// Before level 1 and level 1.
extern const Pass kEnsureUniqueDQForNodeUnit;  // unique_dequantizers.cc: a DequantizeLinear per reader.
extern const Pass kNoopElimination;            // noop_elimination.cc: x + 0, x * 1, ... taken out.
extern const Pass kSmallConstantsCse;          // shared_constants.cc: equal small constants are one.
extern const Pass kConstantsOfShapeCse;        // shared_constants.cc: equal folded ConstantOfShape are one.
extern const Pass kPadFusion;                  // pad_fusion.cc: a zero Pad into its Conv or MaxPool.
extern const Pass kQuantizerCse;               // quantizer_merging.cc: equal QuantizeLinear are one.
extern const Pass kDynamicQuantizerCse;        // dynamic_quantization.cc: equal DynamicQuantizeLinear are one.
extern const Pass kUnfoldedDequantizeLinear;   // unfolded_weights.cc: a weight's DequantizeLinear is not folded.
extern const Pass kTransposeOptimizer;         // transpose_optimizer.cc: Transpose pairs around Softmax cancel.

// Level 2.
extern const Pass kQdqS8ToU8;                    // qdq_fusion.cc: int8 Q -> DQ pairs run in uint8.
extern const Pass kQdqSelectorActions;           // qdq_fusion.cc: DQ -> op -> Q groups as one quantized node.
extern const Pass kDynamicQuantizeMatMulFusion;  // dynamic_quantization.cc: DynamicQuantizeMatMul.
extern const Pass kQuickGeluFusion;              // quick_gelu_fusion.cc: x * Sigmoid(x) as QuickGelu.
extern const Pass kGeluFusion;                   // transformer_fusions.cc: Erf GELU as one Gelu.
extern const Pass kMatMulScaleFusion;            // transformer_fusions.cc: scaling into FusedMatMul.
extern const Pass kConvFusions;                  // conv_fusions.cc: Conv + BatchNormalization/Mul/Add + activation.
extern const Pass kConvFusionsAfterCasts;        // conv_fusions.cc: the same on the Convs the Casts made float32.

// Level 3.
extern const Pass kNhwcTransformer;          // nhwc_layout.cc: quantized Convs channels-last.
extern const Pass kNchwcTransformer;         // nchwc_layout.cc: float Convs and pools in NCHWc.
extern const Pass kConvAddActivationFusion;  // conv_fusions.cc: Conv + Add (+ activation) left after NCHWc.

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_PASSES_H_
