// `fit`'s option of kind "patch" (analyzer/patching/): the model's first
// high-resolution stage (and a second segment where the peak stays) run
// patch by patch, planned by the full analysis of the rewritten model; and
// --emit-model, which writes that model.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_FIT_PATCH_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_FIT_PATCH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/cli/batch.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/report/fit_report.h"

namespace footprint {

// Adds the patch option to `report`, or a note "patch: <why there is none>",
// and returns the search (its plan for --emit-model). With `stream_input`,
// the option planned with the graph input delivered patch by patch too
// (a figure only: --emit-model writes the model that holds it whole).
absl::StatusOr<patching::PatchSearch> AddPatchOption(const LoadedModel& loaded, const Analysis& given,
                                                     const AnalyzeOptions& options, const Budgets& budgets,
                                                     double max_overhead_percent, bool stream_input,
                                                     FitReport& report);

// --emit-model OUT: the plan's rewrite of `model` read whole (its weights
// included, shared by every patch), checked by onnx's checker, written
// whole or not at all. Errors are one line naming the file.
absl::Status EmitPatchedModel(const ModelPath& model, const patching::PatchPlan& plan, const std::string& out);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_FIT_PATCH_H_
