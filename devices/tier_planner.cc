#include "devices/tier_planner.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/device_catalog.h"
#include "planner/validator.h"

namespace footprint::devices {
namespace {

Bytes RoundUp(Bytes value, Bytes alignment) { return (value + alignment - 1) / alignment * alignment; }

// The buffers of one tier, with their live bytes per step kept up to date as
// buffers leave, so each spill decision costs O(steps + buffers), not a replan.
class TierOccupancy {
 public:
  TierOccupancy(const std::vector<planner::Buffer>& aligned, const std::vector<int>& members)
      : aligned_(aligned), in_tier_(aligned.size(), false) {
    for (int index : members) {
      in_tier_[index] = true;
      first_step_ = std::min(first_step_, aligned[index].lifespan.first);
      last_step_ = std::max(last_step_, aligned[index].lifespan.last);
    }
    if (members.empty()) return;
    // A difference array: O(buffers + steps), whatever the lifespans.
    live_.assign(last_step_ - first_step_ + 2, 0);
    for (int index : members) {
      live_[aligned[index].lifespan.first - first_step_] += aligned[index].size;
      live_[aligned[index].lifespan.last - first_step_ + 1] -= aligned[index].size;
    }
    for (size_t k = 1; k < live_.size(); ++k) live_[k] += live_[k - 1];
    live_.pop_back();
  }

  bool Contains(int index) const { return in_tier_[index]; }

  void Remove(int index) {
    Add(index, -aligned_[index].size);
    in_tier_[index] = false;
  }

  // The busiest step (earliest on ties) and its live bytes: the tier's lower bound.
  std::pair<planner::Step, Bytes> Peak() const {
    planner::Step step = first_step_;
    Bytes peak = 0;
    for (size_t k = 0; k < live_.size(); ++k) {
      if (live_[k] > peak) {
        peak = live_[k];
        step = first_step_ + static_cast<planner::Step>(k);
      }
    }
    return {step, peak};
  }

 private:
  void Add(int index, Bytes delta) {
    const planner::Lifespan& span = aligned_[index].lifespan;
    for (planner::Step s = span.first; s <= span.last; ++s) live_[s - first_step_] += delta;
  }

  const std::vector<planner::Buffer>& aligned_;
  std::vector<bool> in_tier_;
  planner::Step first_step_ = std::numeric_limits<planner::Step>::max();
  planner::Step last_step_ = std::numeric_limits<planner::Step>::min();
  std::vector<Bytes> live_;
};

// The buffer to spill among `members` live at `step`, or -1 if none can move.
int ChooseSpill(const std::vector<planner::Buffer>& aligned, const std::vector<int>& members,
                const TierOccupancy& occupancy, planner::Step step, SpillPolicy policy) {
  int best = -1;
  auto key = [&](int index) {
    const planner::Buffer& buffer = aligned[index];
    const Bytes length = buffer.lifespan.last - buffer.lifespan.first + 1;
    // Compare as (primary, secondary), exactly (size x length can pass 2^63);
    // the lower index wins remaining ties.
    if (policy == SpillPolicy::kPeakLargestFirst) return std::pair<__int128, __int128>(buffer.size, length);
    return std::pair<__int128, __int128>(static_cast<__int128>(buffer.size) * length, buffer.size);
  };
  for (int index : members) {
    const planner::Buffer& buffer = aligned[index];
    if (!occupancy.Contains(index) || buffer.size == 0 || buffer.pinned_offset.has_value()) continue;
    if (buffer.lifespan.first > step || buffer.lifespan.last < step) continue;
    if (best < 0 || key(index) > key(best)) best = index;
  }
  return best;
}

struct TierInput {
  std::vector<int> members;  // Input buffer indices, ascending.
};

absl::StatusOr<planner::PlanResult> SolveAndValidate(const planner::Problem& problem,
                                                     const planner::SolveOptions& options,
                                                     const std::string& tier_name) {
  absl::StatusOr<planner::PlanResult> plan = planner::Solve(problem, options);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat("planning tier `", tier_name, "`: ", plan.status().message()));
  }
  if (absl::Status valid = planner::ValidateSolution(problem, plan->solution); !valid.ok()) {
    return absl::InternalError(absl::StrCat("tier `", tier_name, "`: invalid plan: ", valid.message()));
  }
  return plan;
}

planner::Problem MakeProblem(const std::vector<planner::Buffer>& aligned, const std::vector<int>& members) {
  planner::Problem problem;
  problem.buffers.reserve(members.size());
  for (int index : members) problem.buffers.push_back(aligned[index]);
  return problem;
}

// Why a plan does not fit, or why that is not known.
struct Verdicts {
  std::vector<std::string> failures;  // Each makes fits false.
  std::vector<std::string> unknowns;  // Each makes fits unknown, unless something fails.
};

// The profile's tiers, nothing placed yet.
std::vector<TierPlan> EmptyTiers(const DeviceProfile& profile) {
  std::vector<TierPlan> tiers;
  for (const Memory& memory : profile.memory()) {
    TierPlan tier;
    tier.name = memory.name();
    if (memory.has_capacity_bytes()) tier.capacity_bytes = memory.capacity_bytes();
    tier.alignment_bytes = TierAlignment(profile, memory);
    tier.holds_weights = memory.holds_weights();
    tier.holds_activations = memory.holds_activations();
    tiers.push_back(std::move(tier));
  }
  return tiers;
}

// A tier's view of the buffers it receives (`incoming`): sizes and
// alignments rounded to the tier's; the others stay default.
std::vector<planner::Buffer> AlignedTo(const std::vector<planner::Buffer>& buffers, const std::vector<int>& incoming,
                                       Bytes alignment) {
  std::vector<planner::Buffer> aligned(buffers.size());
  for (int index : incoming) {
    aligned[index] = buffers[index];
    aligned[index].size = RoundUp(buffers[index].size, alignment);
    aligned[index].alignment = std::lcm(buffers[index].alignment, alignment);
  }
  return aligned;
}

// The weights in the tiers that hold them, in profile order, each up to its
// capacity; a tier with no capacity set takes what is left.
void PlaceWeights(Bytes weights_bytes, std::vector<TierPlan>& tiers, Verdicts& verdicts) {
  Bytes remaining = weights_bytes;
  Bytes weight_capacity = 0;
  std::vector<std::string> weight_tiers;
  bool unbounded = false;
  for (TierPlan& tier : tiers) {
    if (!tier.holds_weights) continue;
    weight_tiers.push_back(absl::StrCat("`", tier.name, "`"));
    if (!tier.capacity_bytes.has_value()) {
      unbounded = true;
      tier.weights_bytes += remaining;
      if (remaining > 0) {
        verdicts.unknowns.push_back(absl::StrCat("`", tier.name, "` holds weights but has no capacity set"));
      }
      remaining = 0;
      continue;
    }
    weight_capacity += *tier.capacity_bytes;
    const Bytes placed = std::min(remaining, *tier.capacity_bytes);
    tier.weights_bytes += placed;
    remaining -= placed;
  }
  if (remaining > 0 && !unbounded) {
    verdicts.failures.push_back(
        weight_tiers.empty()
            ? absl::StrCat("weights need ", FormatBytes(weights_bytes), " but no tier of the profile holds weights")
            : absl::StrCat("weights need ", FormatBytes(weights_bytes), " but the tiers holding weights (",
                           absl::StrJoin(weight_tiers, ", "), ") have ", FormatBytes(weight_capacity)));
  }
}

// Moves buffers out of `members` into `spilled` (sorted) until the planned
// arena fits `limit`; the plan of what stays, or none when only pinned
// buffers were left to move (then `members` keeps what did not move).
absl::StatusOr<std::optional<planner::PlanResult>> SpillToLimit(const std::vector<planner::Buffer>& aligned,
                                                                Bytes limit, SpillPolicy policy,
                                                                const planner::SolveOptions& options,
                                                                const std::string& tier_name,
                                                                std::vector<int>& members, std::vector<int>& spilled) {
  TierOccupancy occupancy(aligned, members);
  auto spill = [&](int index) {
    occupancy.Remove(index);
    spilled.push_back(index);
  };
  auto kept = [&] {
    std::vector<int> stays;
    for (int index : members) {
      if (occupancy.Contains(index)) stays.push_back(index);
    }
    return stays;
  };
  // A buffer larger than the whole arena can never stay.
  for (int index : members) {
    if (aligned[index].size > limit && !aligned[index].pinned_offset.has_value()) spill(index);
  }
  std::optional<planner::PlanResult> plan;
  while (true) {
    // Spill at the peak until no step needs more than the limit, then
    // plan; fragmentation can still push the arena over, so repeat.
    auto [peak_step, peak_bytes] = occupancy.Peak();
    if (peak_bytes <= limit) {
      std::vector<int> stays = kept();
      absl::StatusOr<planner::PlanResult> attempt = SolveAndValidate(MakeProblem(aligned, stays), options, tier_name);
      if (!attempt.ok()) return attempt.status();
      if (attempt->arena_bytes <= limit) {
        members = std::move(stays);
        plan = *std::move(attempt);
        break;
      }
    }
    const int victim = ChooseSpill(aligned, members, occupancy, peak_step, policy);
    if (victim < 0) break;  // Only pinned buffers left: plan them as they are.
    spill(victim);
  }
  if (!plan.has_value()) members = kept();
  std::sort(spilled.begin(), spilled.end());
  return plan;
}

// The largest arena tier `tier` can give activations: its capacity less the
// weights placed there, and no more than its largest contiguous block.
std::optional<Bytes> ArenaLimit(const TierPlan& tier, const Memory& memory) {
  std::optional<Bytes> limit;
  if (tier.capacity_bytes.has_value()) limit = std::max<Bytes>(0, *tier.capacity_bytes - tier.weights_bytes);
  if (memory.has_contiguous_bytes()) limit = std::min(limit.value_or(memory.contiguous_bytes()), memory.contiguous_bytes());
  return limit;
}

// A planned activation tier's verdict: it fails when its arena exceeds the
// limit, and is unknown when it holds activations but has no capacity.
void JudgeActivationTier(const TierPlan& tier, std::optional<Bytes> limit, const std::vector<std::string>& spilled_from,
                         Verdicts& verdicts) {
  if (limit.has_value() && tier.arena_bytes > *limit) {
    std::string message = absl::StrCat("activations need ", FormatBytes(tier.arena_bytes),
                                       " but the largest arena in `", tier.name, "` is ", FormatBytes(*limit));
    if (!spilled_from.empty()) {
      absl::StrAppend(&message, " (after spilling from ", absl::StrJoin(spilled_from, ", "), ")");
    }
    verdicts.failures.push_back(std::move(message));
  } else if (!tier.capacity_bytes.has_value() && !tier.buffer_indices.empty()) {
    verdicts.unknowns.push_back(absl::StrCat("`", tier.name, "` holds activations but has no capacity set"));
  }
}

// fits and reason from every tier's verdict: any failure wins over unknowns.
void SetVerdict(const Verdicts& verdicts, DevicePlan& result) {
  if (!verdicts.failures.empty()) {
    result.fits = false;
    result.reason = absl::StrJoin(verdicts.failures, "; ");
  } else if (!verdicts.unknowns.empty()) {
    result.fits = std::nullopt;
    result.reason = absl::StrCat("unknown: ", absl::StrJoin(verdicts.unknowns, "; "));
  } else {
    result.fits = true;
  }
}

}  // namespace

std::string_view SpillPolicyName(SpillPolicy policy) {
  switch (policy) {
    case SpillPolicy::kPeakSizeTimesLifetime:
      return "peak-size-x-lifetime";
    case SpillPolicy::kPeakLargestFirst:
      return "peak-largest-first";
  }
  return "unknown";
}

std::string FormatBytes(Bytes bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char number[32];
  std::snprintf(number, sizeof(number), "%.1f", value);
  std::string text = number;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return absl::StrCat(text, " ", kUnits[unit]);
}

absl::StatusOr<DevicePlan> PlanOnDevice(const std::vector<planner::Buffer>& buffers, Bytes weights_bytes,
                                        const DeviceProfile& profile, const planner::SolveOptions& options,
                                        SpillPolicy policy) {
  if (absl::Status status = CheckDeviceProfile(profile); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("device `", profile.name(), "`: ", status.message()));
  }
  if (weights_bytes < 0) return absl::InvalidArgumentError("weights_bytes must be >= 0");
  {
    planner::Problem raw;
    raw.buffers = buffers;
    if (absl::Status status = planner::ValidateProblem(raw); !status.ok()) return status;
  }

  DevicePlan result;
  result.device = profile.name();
  result.spill_policy = std::string(SpillPolicyName(policy));
  result.placements.resize(buffers.size());
  result.tiers = EmptyTiers(profile);

  Verdicts verdicts;
  PlaceWeights(weights_bytes, result.tiers, verdicts);

  // Activations: first activation tier, spilling to the next ones.
  std::vector<int> activation_tiers;
  for (int t = 0; t < static_cast<int>(result.tiers.size()); ++t) {
    if (result.tiers[t].holds_activations) activation_tiers.push_back(t);
  }
  std::vector<int> incoming(buffers.size());
  std::iota(incoming.begin(), incoming.end(), 0);
  std::vector<std::string> spilled_from;
  for (size_t k = 0; k < activation_tiers.size(); ++k) {
    const int t = activation_tiers[k];
    TierPlan& tier = result.tiers[t];
    const bool has_next = k + 1 < activation_tiers.size();

    const std::optional<Bytes> limit = ArenaLimit(tier, profile.memory(t));
    tier.arena_limit_bytes = limit;
    const std::vector<planner::Buffer> aligned = AlignedTo(buffers, incoming, tier.alignment_bytes);
    std::vector<int> members = incoming;
    std::vector<int> spilled;
    std::optional<planner::PlanResult> plan;

    if (limit.has_value() && has_next) {
      absl::StatusOr<std::optional<planner::PlanResult>> fitted =
          SpillToLimit(aligned, *limit, policy, options, tier.name, members, spilled);
      if (!fitted.ok()) return fitted.status();
      plan = *std::move(fitted);
    }

    if (!plan.has_value()) {
      absl::StatusOr<planner::PlanResult> attempt = SolveAndValidate(MakeProblem(aligned, members), options, tier.name);
      if (!attempt.ok()) return attempt.status();
      plan = *std::move(attempt);
    }

    tier.buffer_indices = members;
    tier.problem = MakeProblem(aligned, members);
    tier.plan = *std::move(plan);
    tier.arena_bytes = tier.buffer_indices.empty() ? 0 : tier.plan.arena_bytes;
    for (size_t j = 0; j < members.size(); ++j) {
      result.placements[members[j]] = {.tier = t,
                                       .offset = tier.plan.solution.offsets[j],
                                       .aligned_size = aligned[members[j]].size};
    }
    if (k > 0) result.spilled_buffers += static_cast<int>(members.size());

    JudgeActivationTier(tier, limit, spilled_from, verdicts);
    if (!spilled.empty()) spilled_from.push_back(absl::StrCat("`", tier.name, "`"));
    incoming = std::move(spilled);
  }

  SetVerdict(verdicts, result);
  return result;
}

}  // namespace footprint::devices
