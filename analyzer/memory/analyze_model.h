// The analysis: from a loaded model to every figure of the memory model.
//
// Usage:
//   absl::StatusOr<LoadedModel> loaded = LoadModel("model.onnx");
//   absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, {.dims = {{"batch", 1}}});
//   // analysis->memory.arena_bytes, analysis->tensors[i].offset, ...
//
// The steps are kept apart, as XLA keeps its heap simulation apart from its
// packing: graph view (graph_ir.h) -> shapes (shapes.h) -> schedule
// (schedule.h, or scheduler/ when optimized) -> live intervals (liveness.h)
// -> sharing (modes.h) -> offsets (planner/) -> check (planner/validator.h
// and ValidateSharedBytes). Every figure means exactly what
// docs/figures.md says.
//
// The result types are in analysis_result.h, apart from this function, so that the
// reports read them without seeing the loader.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_MODEL_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"

namespace footprint {

// Runs the whole pipeline on a loaded model (which it copies: shape inference
// writes into it). Errors are InvalidArgument with a one-line message naming
// the node and op (a binding the model contradicts among them), or
// OutOfRange for sizes that overflow 64 bits.
absl::StatusOr<Analysis> AnalyzeModel(const LoadedModel& loaded, const AnalyzeOptions& options);

// Whether an AnalyzeModel error is a binding the model contradicts (a
// --dim that FPN adds cannot take): `fit`'s searches step over such values.
bool IsContradictingBinding(const absl::Status& status);
// For such an error, where the dim `dim` alone decides the clashing dims:
// the nearest value of it below the bound one at which they agree.
std::optional<int64_t> AgreeingValueBelow(const absl::Status& status, const std::string& dim);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_MODEL_H_
