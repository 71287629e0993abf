// The onnxruntime-cpu profile's graph rules: what ONNX Runtime's CPU
// execution provider at graph optimization level "all" does to the graph
// before it plans memory, as ../shared/spec/memory-model.md ("Constant
// folding and runtime profiles") defines a profile: the fusions that change
// which tensors exist (a graph rewrite before the schedule), which kernels
// run in place, the kernels' workspaces (scratch live at their node's step
// only) and the run's overhead. Each rule of runtime_profile.cc cites ORT's
// source or a measurement of bench/ground_truth/.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_PROFILE_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/runtime_model.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// Applies ORT's graph rewrites to `graph` in place, in ORT's order:
//  - levels 1-2: the first node of each fused chain (Conv + BatchNormalization
//    + activation, MatMul + Add) takes over the chain's inputs and final
//    outputs, the others leave graph.nodes, and the tensors between them
//    become kFusedAway;
//  - partitioning, then the float16 Casts: float16 ops without a float16
//    kernel become their ONNX function body's nodes where ORT inlines it at
//    `opset` (fp16_function_bodies.h), the others run in float32 behind
//    Casts (fp16_casts.h); a bfloat16 op without a bfloat16 kernel sets
//    FusionSummary::refused and nothing else is done;
//  - level 3, NCHWc (core/optimizer/nchwc_transformer.cc, nchwc_layout.h):
//    eligible Convs, pools and the ops around them run on tensors in the
//    blocked layout, which get new values (channels padded to the block)
//    sized after the value they stand for; ReorderInput/ReorderOutput nodes
//    copy between layouts where a consumer needs the other one; the NCHW
//    value a blocked one replaces entirely becomes kFusedAway;
//  - level 3, Conv + Add (+ activation) for the Convs NCHWc left
//    (core/optimizer/conv_add_act_fusion.cc): the sum is written over the
//    residual (writes_over).
// Graph outputs are never fused away.
// `isa` decides the NCHWc block (none on ARM64: cpu_isa.h).
FusionSummary ApplyRewrites(CpuIsa isa, int64_t ir_version, int64_t opset, const ShapeLookup& shape_of,
                            IrGraph& graph);

// Whether ORT's kernel of the elementwise op `node` writes its output over a
// dying input.
bool RunsInPlace(const onnx::NodeProto& node);

// The product of dims[from], dims[from + 1], ...: elements per slice (the
// kernels' workspace rules).
int64_t Product(const std::vector<int64_t>& dims, size_t from);

// What the rules share (runtime_profile.cc, nchwc_layout.cc):
// a weight ORT treats as constant (see FusionSummary::overridable);
bool IsConstantWeight(const IrGraph& graph, const FusionSummary& summary, ValueId id);
// a value's element type and dims: a weight's from the model, others' from
// `shape_of` (nullopt: unknown);
std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id);
// the attribute `name` of `node`, or nullptr.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);

// The scratch bytes ORT's kernel of `node` allocates for one run (0 when
// none or when a shape it needs is unknown); kernel_workspaces.cc.
int64_t KernelWorkspaceBytes(CpuIsa isa, const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                             const TensorLookup& tensor_of);

// The bytes ORT holds during one run besides the graph's tensors, given the
// peak bytes of its tensor buffers (runtime_buffers.h), what its run frame
// holds for them besides at the worst step (FrameObjectsBytes), the aligned bytes of
// the graph's inputs and of its outputs, and how many inputs and outputs the
// caller binds: the predicted peak working memory is tensor_bytes + this
// (MemoryFigures::runtime_overhead_bytes).
int64_t RunOverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                         int64_t bindings);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_PROFILE_H_
