// One run of ORT's session as the onnxruntime-cpu profile models it
// (session_run.h); the paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/session_run.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/onnx_domain.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// Measured (bench/ground_truth, a 1 MiB tensor through each op between a Neg
// and a ReduceSum): ORT 1.30 reuses the input's buffer for the activations
// of core/providers/cpu/activation/activations.cc, registered with
// MayInplace(0, 0), and for Dropout (removed at level 1: an alias); not for
// the math ops of core/providers/cpu/math/element_wise_ops.cc (Abs, Neg,
// Sqrt, Exp, Log, Floor, Erf, Sin, ..., and Add, Sub, Mul, Div, Pow, Max,
// Min, Sum, Mean even with a same-shape input), nor for PRelu or
// BatchNormalization (core/providers/cpu/nn/batch_norm.cc).
bool RunsInPlace(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node)) return false;
  static const auto* const kInPlace = new absl::flat_hash_set<std::string>{
      "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "Softplus", "Softsign",
      "ThresholdedRelu", "Clip", "Dropout"};
  return kInPlace->contains(node.op_type());
}

// Measured, not derived from ORT's source (bench/ground_truth/README.md,
// "Per-run overhead"; printed by bench/ground_truth/fit_constants.py from
// constants_probes.results.jsonl, which ctest onnxruntime_constants holds
// these to). Two figures, as the run peak shows two shapes:
//  - at the run's end, with the inputs (the caller's) and outputs live, the
//    outputs are copied out of ORT's buffers (by the binding: onnxruntime-node,
//    as Python's, returns its own arrays) next to some fixed allocations and
//    some per input and output bound: the peak is inputs + outputs +
//    max(12,864 B + 448 B per binding, outputs + 4.5 KiB). One-float probes
//    with 2 to 6 bindings peak 12,832 + 424 per binding above their tensors
//    (a Theil-Sen line; the 278 swept models whose peak the fixed part
//    decides gave 12,712 + 424), rounded up to 64; Relu, AveragePool,
//    MaxPool and InstanceNormalization with outputs of 30-390 KB peak
//    4.7-8.8 KB above inputs + 2 x outputs (the least, rounded down to 512);
//  - while kernels run: 1-D im2col Convs (64 KiB workspace) peak only
//    2,136-2,256 bytes above their tensors and workspace, so the fixed part
//    is not live then. 2 KiB, below that minimum, and the run frame's
//    objects for the tensors at the worst step (frame_bytes:
//    runtime_buffers.h, FrameObjectsBytes).
constexpr int64_t kOnnxRuntimeCpuRunEndBytes = 12864;
constexpr int64_t kOnnxRuntimeCpuRunEndBytesPerBinding = 448;
constexpr int64_t kOnnxRuntimeCpuOutputCopySlackBytes = 4608;
constexpr int64_t kOnnxRuntimeCpuDuringKernelsBytes = 2048;

int64_t RunOverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                         int64_t bindings) {
  const int64_t fixed = kOnnxRuntimeCpuRunEndBytes + kOnnxRuntimeCpuRunEndBytesPerBinding * bindings;
  const int64_t run_end =
      input_bytes + output_bytes + std::max(fixed, output_bytes + kOnnxRuntimeCpuOutputCopySlackBytes);
  // While kernels run, the frame's objects for the tensors come on top
  // (runtime_buffers.h, FrameObjectsBytes); the frame is gone by the run's end.
  return std::max(kOnnxRuntimeCpuDuringKernelsBytes + frame_bytes, run_end - tensor_bytes);
}

}  // namespace footprint::ort
