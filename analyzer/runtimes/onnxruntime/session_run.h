// What one run of ONNX Runtime's session holds besides the buffers its
// planner gives the graph's tensors (runtime_buffers.h): which kernels write
// their output over a dying input, and the run's own overhead (the caller's
// bindings, the copies of the outputs). Measured with bench/ground_truth/.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_RUN_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_RUN_H_

#include <cstdint>

#include "onnx/onnx_pb.h"

namespace footprint::ort {

// Whether ORT's kernel of the elementwise op `node` writes its output over a
// dying input.
bool RunsInPlace(const onnx::NodeProto& node);

// The bytes ORT holds during one run besides the graph's tensors, given the
// peak bytes of its tensor buffers (runtime_buffers.h), what its run frame
// holds for them besides at the worst step (FrameObjectsBytes), the aligned
// bytes of the graph's inputs and of its outputs, and how many inputs and
// outputs the caller binds: the predicted peak working memory is
// tensor_bytes + this (MemoryFigures::runtime_overhead_bytes).
int64_t RunOverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                         int64_t bindings);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_SESSION_RUN_H_
