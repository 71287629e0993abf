// The scratch of ORT's quantized kernels (QLinearConv, QGemm, QLinearMatMul,
// ConvInteger, DynamicQuantizeMatMul), per ISA where MLAS's paths differ
// (quantized_workspaces.cc has each rule, its source and its probe).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_WORKSPACES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_WORKSPACES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// How ORT's QLinearConv kernel (core/providers/cpu/quantization/qlinearconv.cc)
// runs a node: what its PrePack and its Compute's scratch follow from. Read
// from X and W alone (Y's shape is not needed).
struct QLinearConvKernel {
  int64_t batch = 1;                 // X's dim 0.
  int64_t output_channels = 0;       // W's dim 0 (M).
  int64_t group = 1;                 // The group attribute.
  int64_t group_input_channels = 0;  // W's dim 1.
  int64_t kernel_size = 0;           // The product of W's spatial dims.
  int64_t filter_rank = 0;           // W's rank.
  bool depthwise = false;            // One input and one output channel per group.
  bool pointwise = false;            // Kernel 1, strides 1, no padding: no im2col.
  bool symmetric_conv = false;       // TryConvSymPrepack took it: MLAS's indirect symmetric conv.
  bool activations_signed = false;   // X is int8 as ORT holds it (else uint8).
  bool weights_signed = false;       // W is int8 (a float W ORT quantizes itself counts as int8).
};

// The kernel of QLinearConv `node` on `isa`; nullopt when X or W is not
// fully known or the node is malformed.
std::optional<QLinearConvKernel> QLinearConvKernelOf(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite,
                                                     const IrNode& node, const TensorLookup& tensor_of);

// What QLinearConv's PrePack takes from the session's allocator (the CPU
// arena with ORT's default options) for a constant W: the packed filter it
// keeps for the session, either from the arena's regions (Alloc) or
// reserved beside them (Reserve: a plain allocation of its own, as
// IAllocator::MakeUniquePtr(alloc, bytes, true) takes it), and a buffer it
// reserves after it and gives back before returning (0: none).
struct QLinearConvPack {
  int64_t kept_bytes = 0;       // The packed or reordered filter.
  bool kept_reserved = false;   // Reserved beside the arena's regions, not from them.
  int64_t transient_bytes = 0;  // One group's reordered filter while packing (reserved).
};
QLinearConvPack QLinearConvPackOf(CpuIsa isa, const QLinearConvKernel& kernel);

// MlasGemmPackBSize (qgemm.cpp) of an 8-bit B of N columns and K rows, as
// the MatMulInteger family packs it (matmul_integer_base.h PrePack: QGemm,
// QLinearMatMul, MatMulInteger, DynamicQuantizeMatMul, MatMulIntegerToFloat):
// N padded to 16, K to the dispatch's PackedK, an int32 sum per column, the
// whole rounded to 64 bytes.
int64_t QuantizedGemmPackBytes(CpuIsa isa, int64_t n, int64_t k, bool weights_signed);

// The scratch ORT's kernel of a quantized node (as the QDQ passes of
// passes/qdq_fusion.cc leave it, or as the model has it: ConvInteger)
// allocates for one run, block by block in the kernel's order (empty: none);
// nullopt when `node` is no quantized kernel this file knows (the float
// kernels' rules then apply).
std::optional<std::vector<int64_t>> QuantizedKernelScratch(CpuIsa isa, const IrGraph& graph,
                                                           const GraphRewrite& rewrite, const IrNode& node,
                                                           const TensorLookup& tensor_of);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_WORKSPACES_H_
