// AnalyzeModel (analyze_model.h): the pipeline of one model as a sequence of
// stages (model_stages.h), each with its inputs and outputs in sight.
#include "analyzer/memory/analyze_model.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/memory/model_stages.h"
#include "analyzer/memory/graph_stages.h"
#include "onnx/onnx_pb.h"

namespace footprint {

absl::StatusOr<Analysis> AnalyzeModel(const LoadedModel& loaded, const AnalyzeOptions& requested) {
  const absl::Time analysis_start = absl::Now();
  absl::StatusOr<AnalyzeOptions> resolved = ResolveDevice(requested);
  if (!resolved.ok()) return resolved.status();
  const AnalyzeOptions& options = *resolved;
  Analysis analysis;
  analysis.options = options;
  analysis.device = options.device;
  analysis.warnings = loaded.warnings;
  analysis.model = DescribeModel(loaded);
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntime(options);
  if (!runtime.ok()) return runtime.status();

  absl::StatusOr<BoundInputs> inputs = BindInputs(loaded.model, options);
  if (!inputs.ok()) return inputs.status();
  ShapeStage shapes(*inputs, options, analysis);
  const onnx::ModelProto& model = inputs->model();
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) opset = import.version();
  }
  const Context context{.options = options,
                        .shapes = &shapes.shapes(),
                        .await_shapes = [&shapes] { return shapes.Await(); },
                        .ir_version = model.ir_version(),
                        .opset = opset,
                        .runtime = runtime->get(),
                        .file_graph = &loaded.model->graph()};
  const absl::Time graph_start = absl::Now();
  absl::StatusOr<GraphResult> main = AnalyzeGraph(model.graph(), {}, {}, "", 0, context);
  if (absl::Status engine_status = shapes.Await(); !engine_status.ok()) return engine_status;
  if (!main.ok()) return main.status();
  analysis.phase_seconds["schedule_and_plan"] = absl::ToDoubleSeconds(absl::Now() - graph_start);
  if (shapes.shapes().has_value()) {
    if (absl::Status bad = BindingContradiction(*inputs, *shapes.shapes(), options, shapes.onnx_fallback());
        !bad.ok()) {
      return bad;
    }
  }

  RecordSchedule(options, *main, analysis);
  if (absl::Status status = SumFigures(*main, analysis.memory); !status.ok()) return status;
  RecordModes(options, *main, analysis);
  if (*runtime != nullptr) analysis.modes.runtime_isa = (*runtime)->isa();
  if (absl::Status status = RuntimePeak(*main, model.graph(), runtime->get(), analysis.memory); !status.ok()) {
    return status;
  }
  if (std::optional<std::string> warning = UnsizedWarning(*main, analysis.memory)) {
    analysis.warnings.push_back(*std::move(warning));
  }
  RecordProfile(*main, options, analysis);
  analysis.tensors = std::move(main->tensors);
  analysis.weights = std::move(main->weights);
  analysis.unbound_dims = ListUnboundDims(*inputs, shapes.shapes());
  AddSampleFigures(loaded, options, analysis);

  const absl::Time tiers_start = absl::Now();
  if (absl::Status status = PlanOnDeviceTiers(options, analysis); !status.ok()) return status;
  analysis.phase_seconds["device_tiers"] = absl::ToDoubleSeconds(absl::Now() - tiers_start);
  analysis.phase_seconds["total"] = absl::ToDoubleSeconds(absl::Now() - analysis_start);
  return analysis;
}

}  // namespace footprint
