// What one runtime does to a graph's memory (--runtime NAME[:OPTION,...]),
// as the memory model (docs/figures.md, "Figures under --runtime")
// defines a runtime profile: the rewrites that change which tensors exist,
// which kernels write over their input, the kernels' workspaces, the
// runtime's own buffer planner and what it holds besides its tensors.
//
// Usage (the memory analysis does this once per model):
//   absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel("onnxruntime-cpu");  // registry.h
//   GraphRewrite rewrite = (*runtime)->RewriteGraph({.ir_version = 8, .opset = 17, .shape_of = shape_of}, graph);
//   ... schedule, sizes (HeldAs(rewrite, value) for the values it added) ...
//   PlannerPeak held = (*runtime)->TensorPeak(graph, rewrite, order, values, step_extra_of);
//
// Why an interface: each runtime's rules live in a folder of their own
// (onnxruntime/), so a second runtime is a sibling folder, not more branches
// in the analysis. The analysis calls these hooks at fixed points of its
// pipeline and knows nothing of any runtime's rules.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_RUNTIME_MODEL_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_RUNTIME_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// How a runtime's planner sees the dims of a value its rewrites added,
// where they are not the dims it is sized by (HeldValue::planner_shape).
// ORT's planner gives a freed buffer only to a value whose static shape (from
// its shape inference) equals the buffer's first value's, every dim known.
enum class PlannerShape {
  kAsSized,           // The dims it is sized by.
  kUnknown,           // None: it never takes a freed buffer, and its buffer is never taken.
  kFlattenedSpatial,  // (N, C, the product of the rest): a [N, C, H*W] view's own copy.
};

// How a runtime holds one value of its rewritten graph where the model's own
// element type and dims do not say (a side table of GraphRewrite, indexed
// like IrGraph::values). The loader's IrValue knows nothing of any runtime:
// what a runtime adds or changes about a value lives here.
struct HeldValue {
  // For a value the rewrites add (a tensor in a blocked layout, such as
  // ORT's NCHWc, or a Cast's float32 copy): it has no shape of its own in the
  // model and is sized as value `sized_as`, its dim 1 (channels) rounded up
  // to a multiple of `channel_block` when that is > 1. -1: sized by its own
  // name.
  ValueId sized_as = -1;
  int64_t channel_block = 0;
  // Held channels-last (ORT's NHWC kernels): its own bytes or those of
  // `sized_as`, its dims as (N, spatial..., C).
  bool channels_last = false;
  // The element type (TensorProto.DataType) the runtime holds it in when it
  // differs from the model's (ORT runs float16 ops that have no float16
  // kernel in float32); 0: the model's. Sizes scale by the element widths;
  // with `sized_as` the value it stands for gives the dims.
  int32_t data_type = 0;
  // How the runtime's planner sees its dims (an inlined function body's
  // reshapes to computed shapes); a value sized as this one (`sized_as`)
  // sees the same unless it has its own.
  PlannerShape planner_shape = PlannerShape::kAsSized;
  // Held until the run ends, as a graph output is (ORT never frees or
  // reuses the caller's input buffers during a run).
  bool live_to_end = false;
};

// What a runtime's rewrites made of one graph (RuntimeModel::RewriteGraph):
// what they took out and added, and what they know of the values. The
// accumulate mode (memory/accumulate.h) fills writes_over the same way.
struct GraphRewrite {
  int64_t fused_nodes = 0;                 // Nodes that left the graph: fused into another, merged, cancelled.
  int64_t layout_nodes = 0;                // Nodes run in the runtime's blocked layout (ORT's NCHWc).
  int64_t reorder_nodes = 0;               // Layout conversions it adds (ReorderInput/Output, NHWC Transposes).
  std::vector<std::string> fused_tensors;  // Tensors that no longer exist (ValueOrigin::kFusedAway).
  // Nodes the runtime adds and a later pass of its own takes out again
  // (ORT's float16 Casts that meet their Cast back): in no graph, but part
  // of each stays held (loaded_weights.h, the session's structures).
  int64_t cancelled_casts = 0;
  // Constants of the float16 function bodies the runtime inlines, each an
  // initializer ORT converts to float32 at load (the bodies' own nodes leave
  // them out: a few bytes of data, but the session's structures of each).
  int64_t float16_body_constants = 0;
  // Indexed like IrGraph::values (empty when nothing fused): the input whose
  // bytes a fused node's output is written over (Conv + Add: the residual),
  // or -1. The in-place mode applies it when that input dies there.
  std::vector<ValueId> writes_over;
  // Indexed like IrGraph::values: an initializer the caller may override
  // (also listed as a graph input, IR version >= 4). ORT does not treat it as
  // constant (core/graph/graph.cc, CanOverrideInitializer), so no rule that
  // needs a constant weight applies to it.
  std::vector<bool> overridable;
  // Indexed like IrGraph::values (empty: every value as the model has it):
  // how the runtime holds each value (HeldAs reads it).
  std::vector<HeldValue> held;
  // The nodes the rewrites made or rewrote, in the order made: IrNode::proto
  // of those points here, so this outlives the graph's use.
  std::vector<std::shared_ptr<const onnx::NodeProto>> made_nodes;
  // Why the runtime refuses the model ("" when it runs it): a node whose op
  // it has no kernel for at its element type (ORT 1.30's CPU provider and
  // bfloat16). The analysis then stops with this message.
  std::string refused;
};

// How the runtime holds value `id` (the model's own type and dims when the
// rewrite says nothing of it).
inline const HeldValue& HeldAs(const GraphRewrite& rewrite, ValueId id) {
  static const HeldValue kAsInModel;
  return id >= 0 && static_cast<size_t>(id) < rewrite.held.size() ? rewrite.held[id] : kAsInModel;
}

// What the layout rules read of a value: its element type and dims.
struct ValueShape {
  int32_t data_type = 0;                     // TensorProto.DataType (0: unknown).
  std::vector<std::optional<int64_t>> dims;  // nullopt: that dim is not known.
};
// A value's shape by name (nullopt: rank unknown); weights are read from the
// model directly. May be empty: then no rule that needs a shape applies.
using ShapeLookup = std::function<std::optional<ValueShape>(const std::string& name)>;

// What a runtime's rewrites read besides the graph itself.
struct RewriteInputs {
  int64_t ir_version = 0;  // ModelProto.ir_version (which initializers a caller may override).
  int64_t opset = 0;       // The default domain's opset (0: none imported): the function bodies a runtime inlines.
  ShapeLookup shape_of;    // The values' shapes by name (may be empty: no rule that needs one applies).
  // The main graph as the file has it, before the analysis's shape passes
  // wrote their value_info into the copy the graph view points to: the dims
  // a runtime reads from the file itself (ORT keeps them where its own
  // inference has none). Null for a body.
  const onnx::GraphProto* file_graph = nullptr;
};

// A value's shape and type when every dim is known (what the workspace
// rules read).
struct KnownTensor {
  std::vector<int64_t> dims;  // Every dim known.
  std::string dtype;          // "float32", ... (shapes.h DataTypeName).
};
using TensorLookup = std::function<std::optional<KnownTensor>(ValueId)>;

// One value as a runtime's buffer planner sees it (indexed like IrGraph::values).
struct RuntimeValue {
  int64_t bytes = -1;     // Aligned byte size; -1 when unsized or not an arena tensor (a weight).
  // Element type and every dim ("float32[1,64,56,56]") as the runtime's planner sees them
  // (HeldValue::planner_shape); "" when not fully known or rank 0.
  std::string shape_key;
};

// Where a runtime's own planner peaks over a schedule.
struct PlannerPeak {
  int64_t bytes = 0;            // The live bytes of its tensor buffers (and the step's scratch) at its worst step.
  std::vector<ValueId> values;  // The values owning the buffers live then (the first such step), largest first;
                                // a layout copy is named after its value. Empty when the runtime does not say.
};

// What a runtime holds of the heap once its session is created and has run
// once, in the configuration its options name.
struct HeldFigures {
  int64_t weights_bytes = 0;   // Held after creating the session: weights after load (0: not modelled).
  int64_t reserved_bytes = 0;  // Held after the first run with the runtime's default settings, above before it.
  // Whether peak_bytes follows the runtime's default settings (weights_bytes
  // + reserved_bytes) rather than the run's working memory (weights_bytes +
  // its tensors + its overhead, the configuration runtime_tensor_bytes models).
  bool peak_follows_defaults = false;
  std::string peak_configuration;  // That configuration, as reports name it.
  // The heap's high-water while the session is created, above the heap
  // before it (0: not modelled), and the step of creation that sets it.
  int64_t load_peak_bytes = 0;
  std::string load_peak_step;
  int64_t mapped_weights_bytes = 0;  // Weights the runtime maps from an external data file (not heap).
};

// The hooks of one runtime, called by the memory analysis on the main graph
// (bodies are planned runtime-independently, but for FoldsBodyConstants). Every rule behind them cites
// the runtime's source or a measurement.
class RuntimeModel {
 public:
  virtual ~RuntimeModel() = default;

  // The runtime's name as --runtime takes it ("onnxruntime-cpu").
  virtual std::string name() const = 0;

  // The CPU instruction set whose rules apply ("avx2", "avx512", "arm64"),
  // named or the host's; "" when the runtime's rules do not depend on one.
  virtual std::string isa() const { return ""; }

  // The channels of one block of the runtime's blocked tensor layout (ORT's
  // NCHWc: MLAS's block, 8 or 16 by ISA); 0 when its kernels have none. What
  // patching asks before it writes a model for this runtime.
  virtual int64_t LayoutChannelBlock() const { return 0; }

  // The weights (indexed like graph.values; empty: none) the runtime does
  // not treat as constant, so that constant folding does not evaluate what
  // reads them (called before folding).
  virtual std::vector<bool> NonConstantWeights(int64_t /*ir_version*/, const IrGraph& /*graph*/) const { return {}; }

  // Whether the runtime's constant folding also evaluates the nodes of
  // If/Loop/Scan bodies whose inputs are all constant, an enclosing graph's
  // constant weights included (the bodies are otherwise planned as written).
  virtual bool FoldsBodyConstants() const { return false; }

  // Rewrites `graph` in place as the runtime does before it plans memory
  // (fusions, layouts), in its own pass order. Graph outputs never go. The
  // result owns the nodes it made (GraphRewrite::made_nodes): keep it as
  // long as the graph.
  virtual GraphRewrite RewriteGraph(const RewriteInputs& inputs, IrGraph& graph) const = 0;

  // Whether the runtime's kernel of the elementwise op `node` writes its
  // output over a dying input (the in-place mode applies only then).
  virtual bool RunsInPlace(const onnx::NodeProto& node) const = 0;

  // The scratch the kernel of `node` allocates for one run: its blocks in
  // the order the kernel takes them, all given back when it returns (empty
  // when none or when a shape it needs is unknown). Their sum is the
  // kernel's workspace; the order matters to an allocator that grows in
  // regions (two blocks need not fit where their sum would).
  virtual std::vector<int64_t> KernelScratch(const IrGraph& graph, const GraphRewrite& rewrite, const IrNode& node,
                                             const TensorLookup& tensor_of) const = 0;

  // The peak of the runtime's own tensor buffers over `order`, as its
  // planner allocates them, and where it is. `rewrite` is what RewriteGraph
  // gave; `step_extra_of` (indexed like graph.nodes) is held at each node's
  // step.
  virtual PlannerPeak TensorPeak(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                                 const std::vector<RuntimeValue>& values,
                                 const std::vector<int64_t>& step_extra_of) const = 0;

  // What the runtime holds after creating its session and after its first
  // run (HeldFigures), over `order` with the values of TensorPeak;
  // `step_blocks_of` (indexed like graph.nodes) is what each node's step
  // allocates besides its outputs, block by block in order (a body's
  // workspace, then the kernel's scratch): what TensorPeak's step_extra_of
  // sums.
  virtual HeldFigures HeldBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                const std::vector<NodeId>& order, const std::vector<RuntimeValue>& values,
                                const std::vector<std::vector<int64_t>>& step_blocks_of) const = 0;

  // What the runtime's run holds for its tensors besides their buffers
  // (per-tensor objects) at its worst step, over `order` with the arguments
  // of TensorPeak: the peak of both together less TensorPeak's bytes.
  virtual int64_t FrameBytes(const IrGraph& /*graph*/, const GraphRewrite& /*rewrite*/,
                             const std::vector<NodeId>& /*order*/, const std::vector<RuntimeValue>& /*values*/,
                             const std::vector<int64_t>& /*step_extra_of*/) const {
    return 0;
  }

  // The bytes the runtime holds during one run besides the graph's tensors,
  // given the peak of its tensor buffers, FrameBytes, the aligned bytes of
  // the graph's inputs and outputs, and how many inputs and outputs the
  // caller binds.
  virtual int64_t OverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                                int64_t bindings) const = 0;
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_RUNTIME_MODEL_H_
