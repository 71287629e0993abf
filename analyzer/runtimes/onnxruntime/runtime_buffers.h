// What the runtime's own allocation planner holds during one run
// (--runtime NAME): the live bytes of its tensor buffers at its worst step.
//
// Why a second figure next to the arena: the arena is our plan, the least
// memory the graph needs on this schedule. A runtime with its own planner
// needs what that planner decides, and ONNX Runtime's decides worse on some
// graphs: light_densenet121 holds 11.0 MB in ORT where its tensors never
// need more than 9.0 MB at once. A gate for that runtime must use its figure
// (peak_bytes does under --runtime); the arena stays what an emitted plan uses.
//
// The onnxruntime-cpu rules follow core/framework/allocation_planner.cc
// (ComputeSingleStreamReusePlan, FindReusableInput, FindReusableTensor), as
// ORT runs with its CPU arena and memory pattern off (bench/ground_truth/):
// - each node, in the schedule's order, gets a buffer for each output:
//   - a graph output: its own, held to the end of the run;
//   - the output of a view kernel (Reshape, Flatten, Squeeze, Unsqueeze,
//     Identity: Alias(0, 0)): its data input's buffer, whatever reads that
//     input later, a graph input too;
//   - the output of a kernel that may write over an input (MayInplace: the
//     activations of RuntimeRunsInPlace, a float32 Softmax or LogSoftmax,
//     a fused Conv + Add over its residual): that input's buffer, when this is its buffer's last use and
//     the two have the same element type and dims;
//   - else the most recently freed buffer whose first tensor had the same
//     element size and dims (SameSize: an int32 tensor takes a freed
//     float32 buffer; never for strings, a scalar or a shape not fully known,
//     nor for a value ORT's shape inference leaves without one: the tensors
//     of an inlined GroupNormalization body, HeldValue::planner_shape);
//   - else a new buffer;
// - a buffer is freed after the last use of every value it held; graph
//   inputs and weights never are;
// - one malloc per buffer, so the live bytes at a step are the sum of the
//   buffers allocated and not yet freed, plus the step's workspaces: no
//   fragmentation.
// The figure this gives is never below the schedule's lower bound less what
// views and writes over inputs save: a buffer kept for a later tensor of its
// shape stays allocated between its two tensors, which is what ORT pays.
// What it does not model: shapes ORT leaves symbolic where --dim-default binds
// them (ORT compares dim names, we compare values), and the memory pattern
// and arena of ORT's default session options.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_BUFFERS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_BUFFERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// One buffer of the replay: the value that first owned it, its bytes, the
// step that allocates it and the step of its last use (steps - 1 for what is
// held to the run's end).
struct BufferSpan {
  ValueId owner = -1;
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
};

// Every buffer of ORT's planner over `order`, in allocation order (the
// graph inputs first): what the arena sees with ORT's default options
// (arena_run.h). `rewrite` as for TensorPeak.
std::vector<BufferSpan> BufferSpans(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                                    const std::vector<RuntimeValue>& values);

// The peak live bytes of ORT's tensor buffers over `order`, and the values
// owning the buffers live at its worst step (the first, on a tie), largest
// first: where ORT's planner peaks. `rewrite` is what the target's passes
// made of the graph (writes_over, the values held channels-last or to the
// end); `step_extra_of` (indexed like graph.nodes) is held at each node's
// step.
PlannerPeak TensorPeak(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                       const std::vector<RuntimeValue>& values, const std::vector<int64_t>& step_extra_of);

// What ORT's run frame holds besides the buffers at the run's worst step:
// the peak of the buffers and each node output's OrtValue objects (a Tensor
// object and a control block, 208 bytes) together, less TensorPeak's bytes. An
// OrtValue goes with its buffer when it owns it; one written into another's
// buffer (a view, in place, a freed buffer taken again) stays in the frame
// to the run's end: the plan frees a buffer through its owner
// (allocation_planner.cc, GenerateDeallocationPlan). Measured: heap traces of
// the fp16 tiny Llama (51 Tensor objects live at its peak at past 256, 62 at
// past 1), chains of 4 to 128 Exps (169-232 bytes more a node).
int64_t FrameObjectsBytes(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                          const std::vector<RuntimeValue>& values, const std::vector<int64_t>& step_extra_of);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_RUNTIME_BUFFERS_H_
