// The per-node facts every scheduling algorithm here works from, computed
// once from a DataflowGraph (internal to the scheduler).
//
// Why: with E the set of nodes already run, the live bytes just before the
// next step depend on E alone (a value is live when its producer ran, or it is
// a graph input, and it is a graph output or some reader has not run yet).
// Running node n at that step costs live(E) + run_bytes[n] (+ first_step_bytes
// when E is empty), and afterwards live(E + n) = live(E) + kept_bytes[n] -
// the inputs n was the last reader of. This is what makes a dynamic program
// over executed sets exact (SERENITY, MLSys 2020).
//
// Why flat lists: the optimizer builds one model per segment, hundreds of
// them for a long model; one allocation per kind of list instead of one per
// node keeps that cheap.
#ifndef ONNX_FOOTPRINT_SCHEDULER_STEP_MODEL_H_
#define ONNX_FOOTPRINT_SCHEDULER_STEP_MODEL_H_

#include <cstdint>
#include <vector>

#include "scheduler/dataflow_graph.h"
#include "scheduler/flat_graph.h"

namespace footprint::scheduler {

struct StepModel {
  int num_nodes = 0;       // Nodes of the graph.
  FlatLists predecessors;  // Distinct producers of each node's inputs, increasing.
  FlatLists successors;    // Distinct readers of each node's outputs, increasing.
  FlatLists inputs;        // Distinct values each node reads, bytes > 0 only, increasing.
  std::vector<int64_t> run_bytes;    // Its outputs plus extra_bytes: added at its own step.
  std::vector<int64_t> kept_bytes;   // Its outputs that outlive its step (read later, or graph outputs).
  std::vector<int64_t> local_bytes;  // Its inputs + run_bytes: no schedule runs it with less live.
  std::vector<int64_t> value_bytes;          // Per value.
  std::vector<bool> value_is_graph_output;   // Per value.
  FlatLists readers;                         // Distinct readers of each value, increasing.
  int64_t initial_live = 0;      // Graph inputs that are read or are graph outputs: live from step 0.
  int64_t first_step_bytes = 0;  // Graph inputs nobody reads: live at step 0 only.
  // Floating groups (segments.h): some best schedule runs each right before
  // the first reader of its root, so searches need not try other places.
  std::vector<int> floating_root;  // Per node: its group's root, or -1.
  FlatLists floating_members;      // Per root: its group in run order, root last.
};

// `graph` must be valid and acyclic.
StepModel BuildStepModel(const FlatGraph& graph);
StepModel BuildStepModel(const DataflowGraph& graph);

// Builds models one after another in the same memory: the optimizer builds
// one per segment, hundreds of them for a long model.
class StepModelBuilder {
 public:
  // BuildStepModel(graph), valid until the next call.
  const StepModel& Build(const FlatGraph& graph);
  StepModel& model() { return model_; }

 private:
  StepModel model_;
  std::vector<int> reads_;    // Per value.
  std::vector<int> scratch_;  // One node's inputs or producers, sorted.
  std::vector<int> order_;    // The stable topological order.
};

// SchedulePeak(graph, order) for the graph the model was built from, worked
// out from the model alone by running the steps. `order` must be a
// topological order. O(nodes + reads). `scratch` is working memory that
// callers may keep from call to call.
int64_t ModelPeak(const StepModel& model, const std::vector<int>& order);
int64_t ModelPeak(const StepModel& model, const std::vector<int>& order, std::vector<int>& scratch);

// LiveBytesPerStep(graph, order) the same way.
std::vector<int64_t> ModelLiveBytesPerStep(const StepModel& model, const std::vector<int>& order);

// Bytes `node` frees when it runs after the nodes with done[n] set: its inputs
// (not graph outputs) whose other readers have all run.
int64_t FreedBytes(const StepModel& model, int node, const std::vector<bool>& done);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_STEP_MODEL_H_
