// Runtime profiles (--runtime NAME): what one runtime does to the graph
// before it plans memory, as ../shared/spec/memory-model.md ("Constant
// folding and runtime profiles") defines them: the fusions that change which
// tensors exist (a graph rewrite before the schedule), and the kernels'
// workspaces (scratch live at their node's step only). Each rule of
// runtime_profile.cc cites the runtime's source or a measurement of
// bench/ground_truth/.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_RUNTIME_PROFILE_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_RUNTIME_PROFILE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"

namespace footprint {

// The names --runtime takes, in the order --help lists them.
std::vector<std::string> KnownRuntimes();

// True when `name` is one of KnownRuntimes().
bool IsKnownRuntime(const std::string& name);

// What the fusions did to one graph.
struct FusionSummary {
  int64_t fused_nodes = 0;                 // Nodes merged into the node before them.
  int64_t layout_nodes = 0;                // Nodes run in the runtime's blocked layout (ORT's NCHWc).
  int64_t reorder_nodes = 0;               // Layout conversions the runtime adds (ReorderInput/Output).
  std::vector<std::string> fused_tensors;  // Tensors that no longer exist (ValueOrigin::kFusedAway).
  // Indexed like IrGraph::values (empty when nothing fused): the input whose
  // bytes a fused node's output is written over (Conv + Add: the residual),
  // or -1. The in-place mode applies it when that input dies there.
  std::vector<ValueId> writes_over;
  // Indexed like IrGraph::values: an initializer the caller may override
  // (also listed as a graph input, IR version >= 4). ORT does not treat it as
  // constant (core/graph/graph.cc, CanOverrideInitializer), so no rule that
  // needs a constant weight applies to it.
  std::vector<bool> overridable;
};

// What the layout rules read of a value: its element type and dims.
struct ValueShape {
  int32_t data_type = 0;                     // TensorProto.DataType (0: unknown).
  std::vector<std::optional<int64_t>> dims;  // nullopt: that dim is not known.
};
// A value's shape by name (nullopt: rank unknown); weights are read from the
// model directly. May be empty: then no rule that needs a shape applies.
using ShapeLookup = std::function<std::optional<ValueShape>(const std::string& name)>;

// Applies the graph rewrites of `runtime` to `graph` in place, in the
// runtime's order. For onnxruntime-cpu:
//  - levels 1-2: the first node of each fused chain (Conv + BatchNormalization
//    + activation, MatMul + Add) takes over the chain's inputs and final
//    outputs, the others leave graph.nodes, and the tensors between them
//    become kFusedAway;
//  - level 3, NCHWc (core/optimizer/nchwc_transformer.cc): eligible Convs,
//    pools and the ops around them run on tensors in the blocked layout,
//    which get new values (channels padded to the block) sized after the
//    value they stand for; ReorderInput/ReorderOutput nodes copy between
//    layouts where a consumer needs the other one; the NCHW value a blocked
//    one replaces entirely becomes kFusedAway;
//  - level 3, Conv + Add (+ activation) for the Convs NCHWc left
//    (core/optimizer/conv_add_act_fusion.cc): the sum is written over the
//    residual (writes_over).
// Graph outputs are never fused away.
FusionSummary ApplyRuntimeFusions(const std::string& runtime, int64_t ir_version, const ShapeLookup& shape_of,
                                  IrGraph& graph);

// A value's shape and type when every dim is known (what the workspace
// rules read).
struct KnownTensor {
  std::vector<int64_t> dims;  // Every dim known.
  std::string dtype;          // "float32", ... (shapes.h DataTypeName).
};
using TensorLookup = std::function<std::optional<KnownTensor>(ValueId)>;

// Whether `runtime`'s kernel of the elementwise op `node` writes its output
// over a dying input (the in-place mode applies only then under --runtime).
bool RuntimeRunsInPlace(const std::string& runtime, const onnx::NodeProto& node);

// What the profile's rules share (runtime_profile.cc, nchwc_layout.cc):
// a weight ORT treats as constant (see FusionSummary::overridable);
bool IsConstantWeight(const IrGraph& graph, const FusionSummary& summary, ValueId id);
// a value's element type and dims: a weight's from the model, others' from
// `shape_of` (nullopt: unknown);
std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id);
// the attribute `name` of `node`, or nullptr.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);

// The scratch bytes the kernel of `node` allocates for one run under
// `runtime` (0 when none or when a shape it needs is unknown).
int64_t KernelWorkspaceBytes(const std::string& runtime, const IrGraph& graph, const FusionSummary& fusions,
                             const IrNode& node, const TensorLookup& tensor_of);

// The bytes `runtime` holds during one run besides the graph's tensors (0
// for an unknown name), given the peak bytes of its tensor buffers
// (runtime_buffers.h), the aligned bytes of the graph's inputs and of its
// outputs, and how many inputs and outputs the caller binds: the predicted
// peak working memory is tensor_bytes + this
// (MemoryFigures::runtime_overhead_bytes).
int64_t RuntimeOverheadBytes(const std::string& runtime, int64_t tensor_bytes, int64_t input_bytes,
                             int64_t output_bytes, int64_t bindings);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_RUNTIME_PROFILE_H_
