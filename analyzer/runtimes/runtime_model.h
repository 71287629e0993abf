// What one runtime does to a graph's memory (--runtime NAME[:OPTION,...]),
// as ../shared/spec/memory-model.md ("Constant folding and runtime profiles")
// defines a runtime profile: the rewrites that change which tensors exist,
// which kernels write over their input, the kernels' workspaces, the
// runtime's own buffer planner and what it holds besides its tensors.
//
// Usage (the memory analysis does this once per model):
//   absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel("onnxruntime-cpu");  // registry.h
//   FusionSummary fusions = (*runtime)->RewriteGraph(ir_version, opset, shape_of, graph);
//   ... schedule, sizes ...
//   PlannerPeak held = (*runtime)->TensorPeak(graph, order, values, fusions.writes_over, step_extra_of);
//
// Why an interface: each runtime's rules live in a folder of their own
// (onnxruntime/), so a second runtime is a sibling folder, not more branches
// in the analysis. The analysis calls these hooks at fixed points of its
// pipeline and knows nothing of any runtime's rules.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_RUNTIME_MODEL_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_RUNTIME_MODEL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// What the rewrites did to one graph.
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
  // Why the runtime refuses the model ("" when it runs it): a node whose op
  // it has no kernel for at its element type (ORT 1.30's CPU provider and
  // bfloat16). The analysis then stops with this message.
  std::string refused;
};

// What the layout rules read of a value: its element type and dims.
struct ValueShape {
  int32_t data_type = 0;                     // TensorProto.DataType (0: unknown).
  std::vector<std::optional<int64_t>> dims;  // nullopt: that dim is not known.
};
// A value's shape by name (nullopt: rank unknown); weights are read from the
// model directly. May be empty: then no rule that needs a shape applies.
using ShapeLookup = std::function<std::optional<ValueShape>(const std::string& name)>;

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
  // (IrValue::planner_shape); "" when not fully known or rank 0.
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

  // The weights (indexed like graph.values; empty: none) the runtime does
  // not treat as constant, so that constant folding does not evaluate what
  // reads them (called before folding).
  virtual std::vector<bool> NonConstantWeights(int64_t /*ir_version*/, const IrGraph& /*graph*/) const { return {}; }

  // Whether the runtime's constant folding also evaluates the nodes of
  // If/Loop/Scan bodies whose inputs are all constant, an enclosing graph's
  // constant weights included (the bodies are otherwise planned as written).
  virtual bool FoldsBodyConstants() const { return false; }

  // Rewrites `graph` in place as the runtime does before it plans memory
  // (fusions, layouts), in its own pass order. Graph outputs never go.
  // `opset` is the model's default-domain opset (0: none imported), which
  // decides the ONNX function bodies a runtime may inline.
  virtual FusionSummary RewriteGraph(int64_t ir_version, int64_t opset, const ShapeLookup& shape_of,
                                     IrGraph& graph) const = 0;

  // Whether the runtime's kernel of the elementwise op `node` writes its
  // output over a dying input (the in-place mode applies only then).
  virtual bool RunsInPlace(const onnx::NodeProto& node) const = 0;

  // The scratch bytes the kernel of `node` allocates for one run (0 when
  // none or when a shape it needs is unknown).
  virtual int64_t KernelWorkspaceBytes(const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                                       const TensorLookup& tensor_of) const = 0;

  // The peak of the runtime's own tensor buffers over `order`, as its
  // planner allocates them, and where it is. `writes_over` (indexed like
  // graph.values, may be empty) is FusionSummary::writes_over;
  // `step_extra_of` (indexed like graph.nodes) is held at each node's step.
  virtual PlannerPeak TensorPeak(const IrGraph& graph, const std::vector<NodeId>& order,
                                 const std::vector<RuntimeValue>& values, const std::vector<ValueId>& writes_over,
                                 const std::vector<int64_t>& step_extra_of) const = 0;

  // What the runtime holds after creating its session and after its first
  // run (HeldFigures), over `order` with the values and per-step scratch of
  // TensorPeak.
  virtual HeldFigures HeldBytes(const IrGraph& graph, const FusionSummary& fusions, const ShapeLookup& shape_of,
                                const std::vector<NodeId>& order, const std::vector<RuntimeValue>& values,
                                const std::vector<int64_t>& step_extra_of) const = 0;

  // What the runtime's run holds for its tensors besides their buffers
  // (per-tensor objects) at its worst step, over `order` with the arguments
  // of TensorPeak: the peak of both together less TensorPeak's bytes.
  virtual int64_t FrameBytes(const IrGraph& /*graph*/, const std::vector<NodeId>& /*order*/,
                             const std::vector<RuntimeValue>& /*values*/, const std::vector<ValueId>& /*writes_over*/,
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
