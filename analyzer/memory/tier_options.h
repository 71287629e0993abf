// The same analysis on other tier layouts of its device: `fit`'s "tiers"
// options (weights in a read-only tier, another order of the RAM tiers).
//
// Usage:
//   absl::StatusOr<Analysis> xip = ReplanTiers(given, profile_with_weights_in_flash, absl::ZeroDuration());
//
// Only the tiers are planned again (tiers.cc, as AnalyzeModel plans them):
// the schedule, sharing and single-arena figures stay those of `given`.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_TIER_OPTIONS_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_TIER_OPTIONS_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "analyzer/memory/analysis_result.h"
#include "devices/device_profile.pb.h"

namespace footprint {

// `given` with its tiers, tensor placements and verdict planned on
// `profile`, each tier's planner given `time_limit` beyond its heuristics.
absl::StatusOr<Analysis> ReplanTiers(const Analysis& given, const devices::DeviceProfile& profile,
                                     absl::Duration time_limit);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_TIER_OPTIONS_H_
