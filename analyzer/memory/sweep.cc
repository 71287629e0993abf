#include "analyzer/memory/sweep.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "analyzer/memory/analyze_model.h"

namespace footprint {

std::optional<SweepRequest> ParseSweep(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 >= text.size()) return std::nullopt;
  SweepRequest request{.dim = text.substr(0, equals)};
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text.substr(equals + 1), ','))) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 0) return std::nullopt;
    request.values.push_back(value);
  }
  return request;
}

absl::StatusOr<std::vector<SweepPoint>> Sweep(const LoadedModel& model, const AnalyzeOptions& options,
                                              const SweepRequest& request) {
  std::vector<SweepPoint> points;
  for (int64_t value : request.values) {
    AnalyzeOptions at = options;
    at.dims[request.dim] = value;
    at.sample_unbound_dims = false;
    absl::StatusOr<Analysis> analysis = AnalyzeModel(model, at);
    if (!analysis.ok()) return analysis.status();
    points.push_back(SweepPoint{.value = value, .memory = analysis->memory});
  }
  return points;
}

absl::StatusOr<std::optional<int64_t>> LargestFittingValue(
    const std::function<absl::StatusOr<int64_t>(int64_t)>& peak_at, int64_t capacity, int64_t low, int64_t high) {
  if (low > high) return std::optional<int64_t>();
  absl::StatusOr<int64_t> first = peak_at(low);
  if (!first.ok()) return first.status();
  if (*first > capacity) return std::optional<int64_t>();
  // Invariant: `fits` fits; `fails` (when set) does not.
  int64_t fits = low;
  std::optional<int64_t> fails;
  int64_t step = 1;
  while (!fails.has_value() && fits < high) {
    const int64_t probe = high - fits <= step ? high : fits + step;
    absl::StatusOr<int64_t> peak = peak_at(probe);
    if (!peak.ok()) return peak.status();
    if (*peak <= capacity) {
      fits = probe;
      step = step > high / 2 ? high : step * 2;
    } else {
      fails = probe;
    }
  }
  while (fails.has_value() && *fails - fits > 1) {
    const int64_t middle = fits + (*fails - fits) / 2;
    absl::StatusOr<int64_t> peak = peak_at(middle);
    if (!peak.ok()) return peak.status();
    if (*peak <= capacity) {
      fits = middle;
    } else {
      fails = middle;
    }
  }
  return std::optional<int64_t>(fits);
}

absl::StatusOr<std::optional<int64_t>> LargestFittingDim(const LoadedModel& model, const AnalyzeOptions& options,
                                                         const std::string& dim, int64_t capacity_bytes,
                                                         int64_t max_value) {
  return LargestFittingValue(
      [&](int64_t value) -> absl::StatusOr<int64_t> {
        AnalyzeOptions at = options;
        at.dims[dim] = value;
        at.sample_unbound_dims = false;
        absl::StatusOr<Analysis> analysis = AnalyzeModel(model, at);
        if (!analysis.ok()) return analysis.status();
        return analysis->memory.peak_bytes;
      },
      capacity_bytes, 1, max_value);
}

}  // namespace footprint
