// ORT's handling of float16 tensors on its CPU execution provider, which has
// float16 kernels for few ops: what InsertCastTransformer and the passes
// that follow it (core/optimizer/insert_cast_transformer.cc,
// fuse_initializers_transformer.cc) leave of a float16 graph in ORT 1.30,
// read from its optimized-model dumps (bench/ground_truth/fp16_probes.py):
//  - a default-domain node with a float16 input and no float16 CPU kernel
//    runs in float32, behind a Cast to float32 of each float16 input and a
//    Cast back to float16 of each float16 output;
//  - a node that has a float16 kernel but whose float16 inputs all come from
//    such nodes and whose float16 outputs only they read (not a graph
//    output) runs in float32 too (ForceSingleNodeCPUFloat16ToFloat32);
//  - Casts that meet cancel (RemoveDuplicateCastTransformer): between two
//    float32 nodes no Cast is left; the model's own Cast to float16 before a
//    float32 node and its Cast to float32 after one go with them (a Cast
//    that gives a graph output stays, copying the float32 value);
//  - a float16 weight read by one float32 input is converted at load, the
//    float16 original gone (FuseInitializersTransformer); one read by more
//    stays float16 and is Cast to float32 at every run.
// ORT 1.30 does this after its level-1 passes and before levels 2 and 3
// (NCHWc, Conv + activation), which then see float32 tensors (its row in
// ../targets.cc; the passes, kInsertCastTransformer and
// kBfloat16WithoutKernel, are in fp16_casts.cc). bfloat16 is left as it is: ORT inserts Casts for
// float16 only (a bfloat16 op without a bfloat16 kernel makes ORT refuse
// the model). Ops without a float16 kernel that have an ONNX function body
// ORT takes at the model's opset (LeakyRelu, PRelu, HardSwish, ...) are
// replaced by the body's nodes before this pass (fp16_function_bodies.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_CASTS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_CASTS_H_

#include <string>

namespace footprint::ort {

// Whether ORT 1.30's CPU provider has a float16 kernel for the default-domain
// op `op` (measured on x86-64; ARM64 builds add MLAS float16 kernels that are
// not modelled).
bool HasFloat16CpuKernel(const std::string& op);

// Whether ORT 1.30's CPU provider has a float16 kernel for com.microsoft op
// `op` (SkipLayerNormalization, RotaryEmbedding, MatMulNBits, ...).
bool HasFloat16ContribKernel(const std::string& op);

// Whether com.microsoft op `op` runs in float32 behind Casts on float16
// inputs (MultiHeadAttention, Attention, QuickGelu, ...). An op of that
// domain on neither list is left as the file gives it.
bool ContribRunsInFloat32(const std::string& op);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_CASTS_H_
