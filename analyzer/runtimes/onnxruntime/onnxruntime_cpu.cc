// onnxruntime-cpu as a RuntimeModel (onnxruntime_cpu.h): each hook is one of
// this folder's rules.
#include "analyzer/runtimes/onnxruntime/onnxruntime_cpu.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/kernel_workspaces.h"
#include "analyzer/runtimes/onnxruntime/load_peak.h"
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"
#include "analyzer/runtimes/onnxruntime/passes/overridable_initializers.h"
#include "analyzer/runtimes/onnxruntime/runtime_buffers.h"
#include "analyzer/runtimes/onnxruntime/session_run.h"
#include "analyzer/runtimes/onnxruntime/targets.h"

namespace footprint {
namespace {

class OnnxRuntimeCpu : public RuntimeModel {
 public:
  OnnxRuntimeCpu(ort::CpuIsa isa, bool arena) : target_(ort::CpuTarget(isa)), arena_(arena) {}

  std::string name() const override { return std::string(kOnnxRuntimeCpuName); }

  std::string isa() const override { return std::string(ort::CpuIsaName(target_.facts.isa)); }

  int64_t LayoutChannelBlock() const override { return target_.facts.nchwc_block; }

  std::vector<bool> NonConstantWeights(int64_t ir_version, const IrGraph& graph) const override {
    return ort::OverridableInitializers(ir_version, graph);
  }

  // ConstantFolding::ApplyImpl (core/optimizer/constant_folding.cc) calls
  // Recurse on every node before it, which applies the pass to the node's
  // subgraphs; there graph_utils::AllNodeInputsAreConstant looks an input up
  // with GetConstantInitializer(check_outer_scope = true), so a body's node
  // reading the main graph's initializers is folded, but not one reading an
  // initializer that is also a graph input (GetConstantInitializer). Measured
  // (ORT 1.30, AVX-512): an If branch computing Neg of a 1 MiB main-graph
  // weight peaks at 594,616 bytes, 1,445,384 when the weight is a graph input
  // too (ours 2.87 -> 1.11 and 1.18); Silero VAD's LSTMCell export, which
  // slices and concatenates the main graph's LSTM weights inside an If
  // branch (silero_vad_half and _16k_op15, batch 16): 5.40 -> 0.91.
  bool FoldsBodyConstants() const override { return true; }

  // The target's table of passes (targets.h), in order.
  GraphRewrite RewriteGraph(const RewriteInputs& inputs, IrGraph& graph) const override {
    return ort::RunPasses(target_, inputs, graph);
  }

  bool RunsInPlace(const onnx::NodeProto& node) const override { return ort::RunsInPlace(node); }

  std::vector<int64_t> KernelScratch(const IrGraph& graph, const GraphRewrite& rewrite, const IrNode& node,
                                     const TensorLookup& tensor_of) const override {
    return ort::KernelScratch(target_.facts.isa, graph, rewrite, node, tensor_of);
  }

  PlannerPeak TensorPeak(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                         const std::vector<RuntimeValue>& values,
                         const std::vector<int64_t>& step_extra_of) const override {
    return ort::TensorPeak(graph, rewrite, order, values, step_extra_of);
  }

  // Weights after load (loaded_weights.h) and the first run on the default
  // arena (arena_run.h): ORT's buffers but the caller's inputs, the
  // kernels' scratch, and the copies of the outputs the caller holds.
  HeldFigures HeldBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                        const std::vector<NodeId>& order, const std::vector<RuntimeValue>& values,
                        const std::vector<std::vector<int64_t>>& step_blocks_of) const override {
    const ort::LoadedWeights weights = ort::WeightsAfterLoad(target_.facts.isa, graph, rewrite, shape_of);
    ort::ArenaRun run;
    run.create_chunks = weights.arena_chunks;
    for (const ort::BufferSpan& span : ort::BufferSpans(graph, rewrite, order, values)) {
      const IrValue& owner = graph.values[span.owner];
      if (owner.origin == ValueOrigin::kGraphInput) continue;
      run.buffers.push_back({.bytes = span.bytes, .first = span.first, .last = span.last,
                             .output = owner.is_graph_output});
      if (owner.is_graph_output) run.output_copy_bytes = ort::AddBytesSaturated(run.output_copy_bytes, span.bytes);
    }
    for (NodeId node : order) run.step_scratch.push_back(step_blocks_of[node]);
    for (size_t id = 0; id < graph.values.size(); ++id) {
      const IrValue& value = graph.values[id];
      if (!value.is_graph_output || value.origin == ValueOrigin::kGraphInput ||
          value.origin == ValueOrigin::kNodeOutput) {
        continue;
      }
      const int64_t bytes = ort::WeightBytes(graph, rewrite, shape_of, static_cast<ValueId>(id));
      if (bytes <= 0) continue;
      run.final_chunks.push_back(bytes);  // A weight output: copied into an arena buffer, then to the caller.
      run.output_copy_bytes = ort::AddBytesSaturated(run.output_copy_bytes, bytes);
    }
    const int64_t weights_bytes = ort::LoadedWeightsBytes(weights, arena_);
    const ort::LoadPeak load = ort::ReplayLoad(weights.load_buffers, arena_, weights.session_bytes);
    // Creation ends holding the weights after load; the replay's peak is
    // never below that.
    const bool load_is_retained = load.bytes < weights_bytes;
    return {.weights_bytes = weights_bytes,
            .reserved_bytes = ort::ReplayFirstRunOnArena(run).reserved_bytes,
            .peak_follows_defaults = arena_,
            .peak_configuration = arena_ ? "ORT's default options (CPU arena and memory pattern on)"
                                         : "noarena (CPU arena and memory pattern off)",
            .load_peak_bytes = load_is_retained ? weights_bytes : load.bytes,
            .load_peak_step = load_is_retained ? "the weights kept" : std::string(ort::LoadStageName(load.stage)),
            .mapped_weights_bytes = weights.mapped_bytes};
  }

  int64_t FrameBytes(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                     const std::vector<RuntimeValue>& values,
                     const std::vector<int64_t>& step_extra_of) const override {
    return ort::FrameObjectsBytes(graph, rewrite, order, values, step_extra_of);
  }

  int64_t OverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                        int64_t bindings) const override {
    return ort::RunOverheadBytes(tensor_bytes, frame_bytes, input_bytes, output_bytes, bindings);
  }

 private:
  const ort::Target& target_;  // Of the ISA named in the option, or the host's: its facts and table of passes.
  const bool arena_;           // ORT's default options; false with the noarena option.
};

}  // namespace

absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeOnnxRuntimeCpu(const std::vector<std::string>& options) {
  std::optional<ort::CpuIsa> isa;
  bool arena = true;
  for (const std::string& option : options) {
    if (option == kNoArenaOption) {
      if (!arena) return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, " takes ", kNoArenaOption, " once"));
      arena = false;
      continue;
    }
    std::optional<ort::CpuIsa> named = ort::ParseCpuIsa(option);
    if (!named.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, " takes an ISA, one of ",
                                                     absl::StrJoin(ort::KnownCpuIsaNames(), ", "), ", and ",
                                                     kNoArenaOption, ", got '", option, "'"));
    }
    if (isa.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, " takes one ISA, got '",
                                                     ort::CpuIsaName(*isa), "' and '", option, "'"));
    }
    isa = named;
  }
  if (!isa.has_value()) {  // Plain onnxruntime-cpu: the machine this runs on, as ORT's MLAS picks.
    absl::StatusOr<ort::CpuIsa> host = ort::HostCpuIsa();
    if (!host.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, ": ", host.status().message()));
    }
    isa = *host;
  }
  return std::unique_ptr<const RuntimeModel>(std::make_unique<OnnxRuntimeCpu>(*isa, arena));
}

}  // namespace footprint
