// What the analysis of one model is asked for: the user's bindings, the
// modes beyond the baseline, the device and the runtime (--runtime). The
// results it gives are in analysis_result.h, which keeps a copy of these.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_OPTIONS_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "analyzer/shapes/shapes.h"
#include "devices/device_profile.pb.h"

namespace footprint {

// The device the arena is planned for, as the reports name it.
struct DeviceSpec {
  std::string name = "generic-cpu";  // Profile name shown in reports.
  int64_t alignment_bytes = 64;      // Every arena offset and size is a multiple of this.
};

struct AnalyzeOptions {
  DimBindings dims;                                   // --dim NAME=VALUE.
  std::map<std::string, std::vector<int64_t>> input_shapes;  // --input-shape INPUT=1x3x224x224.
  std::optional<int64_t> dim_default;                 // --dim-default N: every input dim still unbound.
  std::map<std::string, std::vector<int64_t>> tensor_shapes;  // --tensor-shape NAME=DIMS: data-dependent values.
  std::map<std::string, std::string> input_values;    // --input-value NAME=V: a small input's values, as typed.
  bool onnx_inference_only = false;                   // Skip our shape engine (coverage benchmark).
  DeviceSpec device;                                  // Used when no profile is given.
  std::optional<devices::DeviceProfile> device_profile;  // When set: its name and alignment, and
                                                         // the tiers and capacity verdict.
  absl::Duration planner_time_limit = absl::Milliseconds(300);  // Budget beyond the heuristics.
  bool onnx_shape_inference = true;                   // Run ONNX's own inference (in a child process).
  // The modes beyond the baseline (modes.h), for the main graph. The struct
  // defaults to the spec's baseline; the CLI turns all three on unless
  // --baseline. If/Loop/Scan bodies always run on the baseline (given order,
  // no sharing): their workspace is then one figure in every mode, and the
  // baseline lower bound reported next to the modes' stays exact. (Only a
  // runtime whose folding recurses into bodies folds them too:
  // RuntimeModel::FoldsBodyConstants.)
  bool optimize_schedule = false;  // Run scheduler::OptimizeSchedule instead of the given order.
  absl::Duration schedule_time_limit = absl::Milliseconds(300);  // Its budget beyond the greedy passes.
  bool alias = false;              // View ops share their dying input's bytes.
  bool inplace = false;            // Elementwise ops write over a dying input (if the device allows).
  bool fold_constants = false;     // Nodes of weights only are evaluated at load (folding.h); main graph only (but above).
  bool accumulate = false;         // A Conv adds its Add's residual as it writes (accumulate.h); main graph only.
  bool qdq = false;                // DequantizeLinear -> op -> QuantizeLinear is the quantized op (qdq.h); main graph only.
  std::string runtime;             // --runtime NAME[:OPTIONS] (analyzer/runtimes/registry.h); "" for none.
  // Unbound dims whose formulas have too many cases: plan the model at sample
  // bindings too (Analysis::samples). Off where only the figures are read (a sweep's points).
  bool sample_unbound_dims = true;
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_OPTIONS_H_
