// The scratch ORT's CPU kernels allocate for one run, live at their node's
// step only: float Conv (MLAS's working buffer), ConvTranspose (its column
// buffer), LRN, LSTM (its gates and states, in If/Loop/Scan bodies too), NLL
// loss, Softmax, Where, com.microsoft MultiHeadAttention; the quantized
// kernels' are quantized_workspaces.h's.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_KERNEL_WORKSPACES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_KERNEL_WORKSPACES_H_

#include <cstdint>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// The scratch ORT's kernel of `node` allocates for one run on `isa`, block
// by block in the order the kernel takes them from its temp-space allocator
// (empty when none or when a shape it needs is unknown). `rewrite` is what
// the target's passes made of the graph.
std::vector<int64_t> KernelScratch(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite, const IrNode& node,
                                   const TensorLookup& tensor_of);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_KERNEL_WORKSPACES_H_
