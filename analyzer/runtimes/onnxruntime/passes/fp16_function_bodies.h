// The ONNX function bodies ORT 1.30 inlines for float16 ops on its CPU
// provider. An op with no float16 CPU kernel whose schema has a function
// body that ORT accepts at the model's opset is not run in float32 as one
// node: graph partitioning replaces it by the body's nodes
// (core/framework/graph_partitioner.cc, InlineFunctionsAOT and the
// "_inlfunc_" nodes), each of which then gets a float16 kernel or runs in
// float32 behind Casts (fp16_casts.h). The body's intermediate tensors are
// what one op does not show: LeakyRelu's Mul and Less outputs next to its
// Where's, HardSwish's HardSigmoid next to its Mul.
//
// Which ops and opsets, measured (bench/ground_truth/fp16_probes.py,
// optimized models of single float16 ops at opsets 12 to 23): a body is
// inlined only at the opsets whose versions of the body's ops match the
// body's own (ONNX's function-body validation), so LeakyRelu's is taken at
// 16 to 18 and not at 19 and later (CastLike's version 19); Relu's, Elu's,
// Selu's ... only at 18. Softmax and LogSoftmax (13 and later) are inlined
// too but left as one op here: their body's reductions have a shape no value
// of the model has, and its peak (two full tensors) equals the op's.
//
// GroupNormalization (opset 18 on) has no CPU kernel in any type, so ORT
// inlines its body in float32 models too; it is expanded here whatever its
// type (its input, deviation and square live together).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_FUNCTION_BODIES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_FUNCTION_BODIES_H_

#include <cstdint>
#include <string>

namespace footprint::ort {

// Whether ORT 1.30 inlines the function body of default-domain op `op` with
// a float16 input at default-domain opset `opset` (and it is modelled here).
bool InlinesFloat16Body(const std::string& op, int64_t opset);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASSES_FP16_FUNCTION_BODIES_H_
