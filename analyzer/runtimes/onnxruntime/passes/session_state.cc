// What ORT's session state sees of the rewritten graph, beyond its
// transformers: the caller's input buffers, and the order its sequential
// executor runs the nodes in.
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"

namespace footprint::ort {
namespace {

// The graph's inputs are the caller's buffers: ORT never frees or reuses
// them during a run (core/framework/allocation_planner.cc plans them as
// pre-existing values). Measured: pytorch-operator test_operator_conv's run
// peak, 7,457,128 bytes, is its input, the input's NCHWc copy and the
// blocked output together (7,454,720), the input alive after its reorder.
PassChange HoldCallerInputs(IrGraph& graph, PassContext& context) {
  for (size_t id = 0; id < graph.values.size(); ++id) {
    if (graph.values[id].origin == ValueOrigin::kGraphInput) {
      MutableHeld(graph, context.rewrite, static_cast<ValueId>(id)).live_to_end = true;
    }
  }
  return {};
}

// Every graph runs in ORT's order (execution_order.h): a float16 graph's
// Casts, an inlined body's nodes (in the body's own order, which ORT's
// indices follow), the nodes computing weights from overridable initializers
// (just before their readers, where the file often lists them first), and
// where two branches meet, the one from the later node first. Measured: the
// U2Net-like segmenter of vision_models.py (0.809 in the file's order, 0.999
// in ORT's), the uint8 QDQ U-Net (0.927 -> 1.000) and U2Net (0.865 ->
// 0.974), the dynamic YOLOv5-like detector (0.918 -> 0.998), the probes
// transformer_float32_order and order_fused_branch_first; with each further
// reader's copy of a DequantizeLinear (unique_dequantizers.cc) run where its
// new index puts it, the QDQ copies of light_resnet50 1.063 -> 0.999 and the
// probe qdq_shared_dequantize_copy_first 0.697 -> 1.000.
PassChange RunInOrtOrder(IrGraph& graph, PassContext& context) {
  ApplyOrtExecutionOrder(graph, context.rewrite);
  return {};
}

}  // namespace

const Pass kCallerOwnedInputs = {.name = "the caller's inputs (held to the run's end)",
                                 .stage = OrtStage::kSessionState,
                                 .source = "core/framework/allocation_planner.cc",
                                 .apply = &HoldCallerInputs};

const Pass kExecutionOrder = {.name = "GraphViewer's order (ExecutionOrder::DEFAULT)",
                              .stage = OrtStage::kSessionState,
                              .source = "core/graph/graph_viewer.cc, core/graph/graph.cc (ReverseDFSFrom)",
                              .apply = &RunInOrtOrder};

}  // namespace footprint::ort
