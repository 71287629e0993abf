// The figures as a function of one dim: planned at each value the user
// asks for (--sweep NAME=1,2,4,8), and the largest value that still fits a
// capacity.
//
// Why plan each value instead of evaluating a formula: the planned arena
// has no closed form in the dims (the planner's choices change with the
// sizes); the lower bound and naive figures do (see SymbolicMemory), and the
// sweep prints the planned figures beside them.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_SWEEP_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_SWEEP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"

namespace footprint {

// The figures planned at one value (the same type the analysis reports).
using SweepPoint = SweepFigures::Point;

struct SweepRequest {
  std::string dim;              // A dim_param of a graph input.
  std::vector<int64_t> values;  // In the order given.
};

// "batch=1,2,4,8" -> {batch, {1, 2, 4, 8}}.
std::optional<SweepRequest> ParseSweep(const std::string& text);

// Analyzes the model once per value, with `options` plus dims[dim] = value.
absl::StatusOr<std::vector<SweepPoint>> Sweep(const LoadedModel& model, const AnalyzeOptions& options,
                                              const SweepRequest& request);

// The largest value v in [low, high] with peak_at(v) <= capacity, assuming
// peak_at does not decrease as v grows (memory grows with batch, sequence,
// image size). Doubling from `low`, then bisection: O(log(high)) calls.
// nullopt when even `low` does not fit. Errors of peak_at pass through.
absl::StatusOr<std::optional<int64_t>> LargestFittingValue(
    const std::function<absl::StatusOr<int64_t>(int64_t)>& peak_at, int64_t capacity, int64_t low, int64_t high);

// The same, for one dim of a model: the largest value whose planned peak fits.
absl::StatusOr<std::optional<int64_t>> LargestFittingDim(const LoadedModel& model, const AnalyzeOptions& options,
                                                         const std::string& dim, int64_t capacity_bytes,
                                                         int64_t max_value = int64_t{1} << 20);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_SWEEP_H_
