#include "analyzer/memory/tier_options.h"

#include <utility>

#include "analyzer/memory/graph_stages.h"
#include "devices/device_catalog.h"

namespace footprint {

absl::StatusOr<Analysis> ReplanTiers(const Analysis& given, const devices::DeviceProfile& profile,
                                     absl::Duration time_limit) {
  if (absl::Status status = devices::CheckDeviceProfile(profile); !status.ok()) return status;
  Analysis analysis = given;
  AnalyzeOptions options = given.options;
  options.device_profile = profile;
  options.planner_time_limit = time_limit;
  analysis.tiers.clear();
  for (TensorRecord& tensor : analysis.tensors) {
    tensor.tier.clear();
    tensor.tier_offset.reset();
  }
  if (absl::Status status = PlanOnDeviceTiers(options, analysis); !status.ok()) return status;
  return analysis;
}

}  // namespace footprint
