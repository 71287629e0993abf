// onnxruntime-cpu: ONNX Runtime's CPU execution provider as people run it
// (graph optimization level "all", sequential execution), as a RuntimeModel
// (../runtime_model.h). The rules are in this folder: the graph rewrites as
// one table of passes per target (targets.h: cpu:avx2, cpu:avx512,
// cpu:arm64), the kernels' workspaces (kernel_workspaces.h), in-place kernels
// and the run's overhead (session_run.h), ORT's allocation planner replayed
// (runtime_buffers.h), its arena (arena_run.h) and the weights it holds after
// load (loaded_weights.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ONNXRUNTIME_CPU_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ONNXRUNTIME_CPU_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint {

inline constexpr absl::string_view kOnnxRuntimeCpuName = "onnxruntime-cpu";
// `onnxruntime-cpu:noarena`: peak_bytes follows ORT with its CPU arena and
// memory pattern off (each tensor a malloc of its own) rather than its
// default options.
inline constexpr absl::string_view kNoArenaOption = "noarena";

// The model for `--runtime onnxruntime-cpu[:OPTION,...]`: an ISA (avx2,
// avx512 or arm64, cpu_isa.h; without one, the host's) and noarena (the
// peak follows ORT with its CPU arena and memory pattern off). Errors
// (InvalidArgument, reading after "--runtime "): another option, two ISAs,
// or no ISA on a host of another architecture.
absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeOnnxRuntimeCpu(const std::vector<std::string>& options);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ONNXRUNTIME_CPU_H_
