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
