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

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"

namespace footprint {

// Runs the whole pipeline on a loaded model (which it copies: shape inference
// writes into it). Errors are InvalidArgument with a one-line message naming
// the node and op, or OutOfRange for sizes that overflow 64 bits.
absl::StatusOr<Analysis> AnalyzeModel(const LoadedModel& loaded, const AnalyzeOptions& options);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_ANALYZE_MODEL_H_
