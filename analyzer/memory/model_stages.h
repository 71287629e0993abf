// The stages of AnalyzeModel (analyze_model.h), in the order it calls them:
//   ResolveDevice      the device profile's name and alignment into the options;
//   DescribeModel      the model's header (path, IR version, producer, opsets);
//   MakeRuntime        --runtime's model (analyzer/runtimes/), or none;
//   BindInputs         --dim, --input-shape, --dim-default, --input-value into a copy of the model;
//   ShapeStage         ONNX's pass and our shape engine, beside the main graph's analysis;
//   AnalyzeGraph       the main graph: fold, the runtime's rewrites, schedule, modes, plan (graph_stages.h);
//   BindingContradiction  a binding the model contradicts: bad input;
//   RecordSchedule     the order and the modes into the Analysis;
//   SumFigures         weights, naive, arena, lower bound and what is unsized;
//   RecordModes        what each mode did;
//   RuntimePeak        the peak: the arena's, or the runtime's buffers and overhead;
//   UnsizedWarning     the dims to bind when sizes are missing;
//   RecordProfile      the plan's summary, the live bytes per step, the formulas;
//   ListUnboundDims    the input dims no binding gives, for the reports' first lines;
//   AddSampleFigures   the figures at sample bindings when the formulas have too many cases;
//   PlanOnDeviceTiers  the device's tiers (graph_stages.h).
// Each takes what it reads and returns or fills what it gives; none keeps
// state but ShapeStage, which owns the engine's thread.
// Internal to footprint_memory: the reports read analysis_result.h only.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_MODEL_STAGES_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_MODEL_STAGES_H_

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/memory/graph_stages.h"
#include "analyzer/runtimes/runtime_model.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// `requested` with the device profile's name and alignment, checked.
absl::StatusOr<AnalyzeOptions> ResolveDevice(const AnalyzeOptions& requested);

// What the report says of the model itself.
ModelSummary DescribeModel(const LoadedModel& loaded);

// The model of options.runtime (nullptr for none; registry.h).
absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeRuntime(const AnalyzeOptions& options);

// The model with the user's bindings applied, and what the shape stage
// needs to know of them.
struct BoundInputs {
  const onnx::ModelProto* source = nullptr;   // The loaded model, as read.
  std::optional<onnx::ModelProto> bound;      // A copy, only when something is written into it.
  DimBindings input_dims;                     // --dim of graph inputs' dim_params (bound into the copy).
  symbolic::SymbolValues engine_dims;         // --dim of symbols our engine makes up (a Loop's trip count).
  symbolic::InputValues input_values;         // --input-value, parsed.
  bool needs_onnx_fallback = false;           // Our engine lacks a shape function for some op.
  bool run_onnx_pass = false;                 // ONNX's whole-model pass runs (into `bound`).
  // The model every later stage reads: the bound copy, else the source.
  const onnx::ModelProto& model() const { return bound.has_value() ? *bound : *source; }
};

// --dim names a graph input's dim_param, or a symbol our engine makes up:
// the former are bound into a copy of the model, the latter go to the
// engine. The copy is made only when needed (a copy of an 18,000-node graph
// costs as much as its shape inference).
absl::StatusOr<BoundInputs> BindInputs(const onnx::ModelProto& source, const AnalyzeOptions& options);

// Every value's shape: ONNX's whole-model pass where our engine needs it
// (in a child process: it can crash), then our engine, on a thread of its
// own when ONNX's per-node functions are not in play, so that the main
// graph's view, schedule and weights are built meanwhile.
class ShapeStage {
 public:
  // Starts the stage; warnings and phase timings go into `analysis`, which
  // must outlive this object.
  ShapeStage(BoundInputs& inputs, const AnalyzeOptions& options, Analysis& analysis);
  ~ShapeStage();  // Joins the engine's thread.
  ShapeStage(const ShapeStage&) = delete;
  ShapeStage& operator=(const ShapeStage&) = delete;

  // Waits for the engine, once: its error, or OK with shapes() set (unset
  // when only ONNX's types are used), its warnings and If decisions recorded.
  absl::Status Await();
  const std::optional<symbolic::ShapeTables>& shapes() const { return shapes_; }
  bool onnx_fallback() const { return onnx_fallback_; }  // ONNX's per-node functions may be called.

 private:
  const BoundInputs& inputs_;
  Analysis& analysis_;
  std::optional<absl::StatusOr<symbolic::ShapeTables>> tables_;  // Unset: not run (ONNX's types only).
  std::optional<symbolic::ShapeTables> shapes_;
  std::optional<absl::Status> status_;  // Set by the first Await.
  std::thread engine_;
  bool onnx_fallback_ = true;
};

// A binding (--dim, --input-shape, --input-value, --dim-default) that makes
// a node of the main graph (or of a branch it takes) unable to run, where
// the model without bindings can: an InvalidArgument error
// (IsContradictingBinding) naming the bindings at fault, the node and the
// dims, and where one dim decides them, the values that agree.
absl::Status BindingContradiction(const BoundInputs& inputs, const symbolic::ShapeTables& shapes,
                                  const AnalyzeOptions& options, bool onnx_fallback);

// The schedule, the modes' lower bounds and the main graph's warnings into
// `analysis` (the warnings move out of `main`).
void RecordSchedule(const AnalyzeOptions& options, GraphResult& main, Analysis& analysis);

// Weights, folded weights, naive, arena, lower bound, workspaces, unsized
// count and reuse savings. Errors: a total that overflows 64 bits.
absl::Status SumFigures(const GraphResult& main, MemoryFigures& memory);

// What each mode did (folding, accumulate, the runtime's rewrites), once
// analysis.memory has the folded weights.
void RecordModes(const AnalyzeOptions& options, const GraphResult& main, Analysis& analysis);

// The peak: weights + the arena, or under --runtime the runtime's buffers
// and what it holds besides them (runtime_tensor_bytes, runtime_overhead_bytes).
absl::Status RuntimePeak(const GraphResult& main, const onnx::GraphProto& graph, const RuntimeModel* runtime,
                         MemoryFigures& memory);

// When some tensor is unsized: the warning naming the dims to bind.
std::optional<std::string> UnsizedWarning(const GraphResult& main, const MemoryFigures& memory);

// The plan's summary, the live bytes at each step and, when sizes are
// formulas, the figures as formulas.
void RecordProfile(const GraphResult& main, const AnalyzeOptions& options, Analysis& analysis);

// The graph inputs' dims no binding gives (unbound_dims.h), with the sizes
// the model states for them where the engine's formulas let them be solved.
std::vector<UnboundDim> ListUnboundDims(const BoundInputs& inputs, const std::optional<symbolic::ShapeTables>& shapes);

// Unbound dims whose formulas have too many cases to print (or none): the
// figures planned at sample bindings into analysis.samples (each dim 1, and
// the sizes the model states when it states some). An analysis that fails
// at a sample is a warning, not an error.
void AddSampleFigures(const LoadedModel& loaded, const AnalyzeOptions& options, Analysis& analysis);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_MODEL_STAGES_H_
