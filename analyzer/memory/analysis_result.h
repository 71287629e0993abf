// What the analysis of one model gives: every figure of the memory model, per
// tensor, per weight, per tier and per mode, and the options that produced
// them (analyze_options.h). analyze_model.h runs it; the reports (report/)
// read it.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYSIS_RESULT_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYSIS_RESULT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/memory/analyze_options.h"
#include "analyzer/shapes/shapes.h"

namespace footprint {

enum class TensorRole {
  kGraphInput,         // A graph input that is not an initializer.
  kActivation,         // A node output that is not a graph output.
  kGraphOutput,        // A node output (or input) the graph returns.
  kSubgraphWorkspace,  // The peak of an If/Loop/Scan body, held at its node's step.
  kKernelWorkspace,    // A kernel's scratch under the --runtime profile, held at its node's step.
};
const char* TensorRoleName(TensorRole role);

// One arena tensor (or an unsized value that would be one).
struct TensorRecord {
  std::string name;                          // ONNX value name.
  TensorRole role = TensorRole::kActivation;  // Why it is in the arena.
  std::string dtype;                         // "float32", ...
  std::optional<std::vector<Dim>> shape;     // nullopt: rank unknown.
  std::optional<int64_t> bytes;              // Exact byte size; nullopt when unsized.
  int64_t aligned_bytes = 0;                 // bytes rounded up to the alignment (0 when unsized).
  int64_t first_step = 0;                    // Live interval [first_step, last_step], closed.
  int64_t last_step = 0;
  std::optional<int64_t> offset;             // Arena offset; nullopt when unsized.
  std::string producer;                      // The node that writes it ("" for graph inputs).
  std::string unsized_reason;                // Why bytes is unknown.
  std::string bytes_expr;                    // Unsized only: the byte size as a formula in unbound dims.
  std::string tier;                          // The device memory tier holding it ("" when unsized).
  std::optional<int64_t> tier_offset;        // Its offset within that tier's arena.
  std::string shares_with;                   // The tensor whose bytes it occupies (alias or in-place); "" if its own.
  int64_t shares_with_index = -1;            // That tensor's index in the same tensor list; -1 if its own.
  std::string sharing;                       // "alias" or "inplace" when shares_with is set, else "".
  std::string bound;                         // "max_over_branches": an undecided If's output, the larger branch's size;
                                             // "slice_extent": a Slice in an undecided branch, at its input's extent.
};

// One memory tier of the device, as planned.
struct TierSummary {
  std::string name;                         // The profile's memory name.
  std::optional<int64_t> capacity_bytes;    // nullopt: the profile does not say.
  std::optional<int64_t> arena_limit_bytes;  // Largest activation arena allowed here, when known.
  int64_t alignment_bytes = 0;              // Alignment used in this tier.
  int64_t arena_bytes = 0;                  // Activations planned here.
  int64_t weights_bytes = 0;                // Weights placed here.
  int64_t tensors = 0;                      // Arena tensors planned here.
  bool holds_weights = false;               // From the profile.
  bool holds_activations = false;           // From the profile.
  bool proven_optimal = false;              // This tier's arena is the least possible for its tensors.
};

// One weight: an initializer or a Constant's value.
struct WeightRecord {
  std::string name;                       // Initializer or Constant output name.
  std::string dtype;                      // "float32", ...
  std::vector<Dim> shape;                 // Its dims.
  std::optional<int64_t> bytes;           // nullopt for strings.
  bool from_constant_node = false;        // A Constant node's value rather than an initializer.
  bool folded = false;                    // Computed at load by constant folding (folding.h).
  std::string graph;                      // "" for the main graph, else the body holding it.
};

struct MemoryFigures {
  int64_t weights_bytes = 0;        // Sum of the sizes of initializers and Constant values (resident).
  int64_t folded_weights_bytes = 0;  // Sum of the sizes of values folded at load (resident, never in the arena).
  int64_t arena_bytes = 0;          // Planned arena: max over tensors of offset + aligned size.
  int64_t workspace_bytes = 0;      // Sum of the kernel workspaces of --runtime (planned in the arena).
  int64_t lower_bound_bytes = 0;    // Max over steps of live aligned bytes.
  int64_t naive_bytes = 0;          // Sum of aligned sizes: one buffer each.
  int64_t reuse_savings_bytes = 0;  // naive_bytes - arena_bytes.
  // --runtime: the live bytes of the runtime's own tensor buffers at its
  // worst step, as its planner allocates them (runtime_buffers.h); 0 without.
  int64_t runtime_tensor_bytes = 0;
  // --runtime: the values whose buffers make runtime_tensor_bytes, largest
  // first, named as in the runtime's rewritten graph (a layout copy is named
  // after its value: "conv_3.nchwc"); empty without.
  std::vector<std::string> runtime_peak_values;
  int64_t runtime_overhead_bytes = 0;  // --runtime: what the runtime holds during a run besides tensors.
  int64_t runtime_reserved_bytes = 0;  // --runtime: held after a first run with the runtime's defaults (ORT: arena on).
  int64_t runtime_weights_bytes = 0;   // --runtime: held after creating the session (weights after load).
  std::string runtime_peak_follows;    // --runtime: the configuration peak_bytes follows; "" without.
  bool runtime_peak_reserved = false;  // --runtime: the run's part of peak_bytes is runtime_reserved_bytes.
  // --runtime: the heap's high-water while the runtime creates its session
  // (reads the file, folds, fuses, converts and packs weights), above the
  // heap before it; 0 when the runtime's load is not modelled.
  int64_t runtime_load_peak_bytes = 0;
  std::string runtime_load_peak_step;     // --runtime: the step of creation where it peaks ("NCHWc filters").
  int64_t runtime_mapped_weights_bytes = 0;  // --runtime: weights mapped from external data files, not heap.
  // --runtime: the first run's high-water with the weights after load (what
  // peak_bytes is when the run sets it); 0 without --runtime.
  int64_t runtime_run_peak_bytes = 0;
  int64_t runtime_input_bytes = 0;  // --runtime: the caller's inputs, part of the first run's high-water.
  // --runtime: which phase sets peak_bytes: "session creation" (the load
  // peak) or "first run" (weights after load + the run); "" without.
  std::string runtime_peak_phase;
  // weights_bytes + folded_weights_bytes + arena_bytes; under --runtime, what
  // that runtime's process holds at its highest point: the larger of
  // runtime_load_peak_bytes and the first run's (runtime_weights_bytes, plus
  // runtime_reserved_bytes when the peak follows the runtime's defaults,
  // else runtime_tensor_bytes + runtime_overhead_bytes).
  int64_t peak_bytes = 0;
  int64_t unsized_tensors = 0;      // Arena tensors and weights with no known size.
  bool complete = true;             // False when any tensor is unsized: the figures are lower bounds.
};

// The peak of the run alone: under --runtime, weights after load and the
// first run (creation's peak aside), else peak_bytes. What a rewrite of the
// model's activations (patching) can lower.
inline int64_t RunPeakBytes(const MemoryFigures& memory) {
  return memory.runtime_run_peak_bytes > 0 ? memory.runtime_run_peak_bytes : memory.peak_bytes;
}

// What --runtime's run holds: the runtime's tensor buffers at its worst step
// and what it holds besides them (0 without --runtime).
inline int64_t RuntimeRunBytes(const MemoryFigures& memory) {
  return memory.runtime_tensor_bytes + memory.runtime_overhead_bytes;
}

// The figures as formulas in the dims left unbound (shapes/expr.h syntax),
// set when some arena tensor's size is a formula. Exact: weights, naive and
// the lower bound (a max over steps of sums of aligned sizes, pruned of
// dominated steps; "" when too many remain). The planned arena has no
// closed form: peak lies between peak_lower_bound_expr (weights + lower
// bound) and peak_upper_bound_expr (weights + naive); --sweep plans it at
// given values. Subgraph workspaces count with their sized part only.
struct SymbolicMemory {
  std::vector<std::string> symbols;    // The unbound dims the formulas use.
  std::string naive_expr;              // Sum of aligned sizes ("" when some tensor has no formula).
  std::string lower_bound_expr;        // Max over steps of live aligned bytes ("" when too large).
  std::string peak_lower_bound_expr;   // weights + lower bound ("" when too large).
  std::string peak_upper_bound_expr;   // weights + naive ("" when some tensor has no formula).
  int64_t tensors_without_formula = 0;  // Neither a size nor a formula: naive and the upper bound are unknown.
};

// The planned figures at each value of one dim (--sweep).
struct SweepFigures {
  struct Point {
    int64_t value = 0;     // The dim's value.
    MemoryFigures memory;  // The figures planned at that value.
  };
  std::string dim;            // The swept dim.
  std::vector<Point> points;  // In the order asked.
};

struct ModelSummary {
  std::string path;                      // As given.
  int64_t ir_version = 0;                // ModelProto.ir_version.
  std::map<std::string, int64_t> opsets;  // Domain ("" = ai.onnx) -> version.
  int64_t nodes = 0;                     // Nodes of the main graph, Constants included.
  std::string producer;                  // "pytorch 2.1", ...
};

struct PlanSummary {
  std::string algorithm;        // Which planner algorithm won.
  bool proven_optimal = false;  // The arena is the least possible for this schedule.
  double seconds = 0;           // Time spent planning.
};

// The schedule mode: which order ran and what it did to the lower bound.
struct ScheduleMode {
  std::string name = "given";    // "given" (the baseline order) or "optimized".
  std::string algorithm = "given";  // What produced the order (scheduler/optimizer.h); "given" when unchanged.
  bool proven_optimal = false;   // No order of the graph has a lower lower_bound_bytes (optimized only).
  int64_t lower_bound_bytes = 0;  // Lower bound of this order, before sharing.
  int64_t saved_bytes = 0;       // Baseline lower bound - lower_bound_bytes.
  double seconds = 0;            // Time spent scheduling.
};

// A sharing mode (alias or in-place), applied after the schedule and, for
// in-place, after aliasing.
struct SharingMode {
  bool enabled = false;           // Applied (in-place: requested and allowed by the device).
  int64_t tensors = 0;            // Tensors that took over another's bytes through this mode.
  int64_t lower_bound_bytes = 0;  // Lower bound with this mode and those before it.
  int64_t saved_bytes = 0;        // The previous mode's lower bound - lower_bound_bytes.
};

// What each mode beyond the baseline did, in the order they apply. The
// figures of MemoryFigures are those of all the enabled modes together.
// Constant folding (folding.h), applied before the schedule.
struct FoldMode {
  bool enabled = false;           // Requested (AnalyzeOptions::fold_constants).
  int64_t nodes = 0;              // Nodes evaluated at load.
  int64_t weights_bytes = 0;      // The bytes of their outputs, now weights.
};

// The accumulate mode (accumulate.h), applied after folding.
struct AccumulateMode {
  bool enabled = false;  // Requested and applicable (AnalyzeOptions::accumulate, no --runtime).
  int64_t nodes = 0;     // Adds a Conv took over: as many Conv outputs no longer exist.
};

// The qdq mode (qdq.h), applied before folding.
struct QdqMode {
  bool enabled = false;  // Requested and applicable (AnalyzeOptions::qdq, no --runtime).
  int64_t groups = 0;    // DequantizeLinear -> op -> QuantizeLinear groups run as the quantized op.
};

struct ModesSummary {
  int64_t baseline_lower_bound_bytes = 0;  // Given order, no sharing (of the folded, accumulated graph).
  FoldMode fold;
  AccumulateMode accumulate;
  QdqMode qdq;
  int64_t fused_nodes = 0;                 // Nodes merged by the --runtime profile's fusions.
  int64_t layout_nodes = 0;                // Nodes the --runtime profile runs in its blocked layout (NCHWc).
  int64_t reorder_nodes = 0;               // Layout copies the --runtime profile adds (ReorderInput/Output).
  std::string runtime_isa;                 // The ISA whose --runtime rules applied ("avx512"); "" when none.
  ScheduleMode schedule;
  SharingMode alias;
  SharingMode inplace;
};

// A --max-peak/--max-arena/--max-weights limit checked against this analysis.
struct BudgetCheck {
  std::string figure;        // "peak", "arena" or "weights".
  int64_t limit_bytes = 0;   // The user's limit.
  int64_t actual_bytes = 0;  // The figure it limits.
  bool ok = true;            // actual_bytes <= limit_bytes.
};

// True when every check passed (also when there are none).
inline bool AllWithinBudget(const std::vector<BudgetCheck>& checks) {
  for (const BudgetCheck& check : checks) {
    if (!check.ok) return false;
  }
  return true;
}

// Which branch of an If runs, as far as the values known before running say.
struct IfBranch {
  std::string node;        // The If node's name.
  std::string branch;      // "then", "else", or "undecided" (both analyzed; differing outputs bound by the larger).
  std::string decided_by;  // Undecided: the bindings that would decide it ("--input-value sr=..."), or "".
  std::string bound_branch;  // Undecided with outputs that differ: the branch their equal-size ties take, or "".
  std::string ruled_out;     // Taken because the other branch cannot run with these shapes: "else: <node>: why", or "".
};

// A dim of a graph input that no binding gives a value: the reports name it
// first, with the flags that bind it.
struct UnboundDim {
  struct Use {
    std::string input;  // The graph input.
    int64_t axis = 0;   // Its dim.
  };
  std::string name;       // The dim_param, or "<input>_dim<k>" for an unnamed dim (the formulas' symbol).
  std::vector<Use> uses;  // Every input dim it names, in input order.
  int64_t example = 1;    // The value the binding example uses: the model's own size where it states one, else 1.
  bool stated = false;    // `example` is a size the model states (a declared output or value dim).
};

// The figures at one binding of the unbound dims, computed when their
// formulas have too many cases to print: samples, not the model's range.
struct SampleFigures {
  std::map<std::string, int64_t> dims;  // The sample binding of every unbound dim.
  std::string label;                    // Where the values come from ("1 each", "the sizes the model states").
  MemoryFigures memory;                 // The figures planned at that binding.
};

struct Analysis {
  ModelSummary model;
  DeviceSpec device;
  AnalyzeOptions options;
  MemoryFigures memory;
  PlanSummary plan;
  ModesSummary modes;                   // Baseline lower bound and each mode's own.
  std::vector<TensorRecord> tensors;    // Arena tensors, then unsized ones, in schedule order.
  std::vector<WeightRecord> weights;    // Every weight of the model, bodies included.
  std::vector<std::string> schedule;    // Node names in the order they run.
  bool file_order_was_valid = true;     // False: the nodes were sorted topologically.
  std::vector<int64_t> live_bytes_per_step;  // Live aligned arena bytes at each step.
  std::vector<TierSummary> tiers;       // The device's memories, in profile order.
  std::optional<bool> fits;             // nullopt: a tier in use has no known capacity.
  std::string fits_reason;              // Why it does not fit (or why unknown); "" when it fits.
  std::string spill_policy;             // How tensors leave a full tier.
  int64_t spilled_tensors = 0;          // Tensors planned outside the first activation tier.
  std::vector<std::string> warnings;    // Things the user should know (incomplete shapes, ...).
  std::map<std::string, double> phase_seconds;  // Wall time of each phase of the analysis ("total" too).
  std::vector<BudgetCheck> budgets;     // The user's budgets, in the order peak, arena, weights (budgets.h).
  std::optional<SymbolicMemory> symbolic_memory;  // Set when sizes are formulas in unbound dims.
  std::optional<SweepFigures> sweep;               // --sweep NAME=V1,V2,...: the figures planned per value.
  std::vector<IfBranch> if_branches;               // Which branch each If takes (bodies' Ifs too), as first met.
  std::vector<UnboundDim> unbound_dims;            // Graph input dims no binding gives, in input order.
  std::vector<SampleFigures> samples;              // Unbound dims whose formulas have too many cases: figures at samples.
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYSIS_RESULT_H_
