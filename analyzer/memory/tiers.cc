// Plans the tiers: the main graph's tensors and weights on the device's
// memories, the fits verdict and what spills (graph_stages.h).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/memory/graph_stages.h"
#include "devices/device_catalog.h"
#include "devices/tier_planner.h"
#include "planner/planner.h"
#include "planner/problem.h"

namespace footprint {

namespace {

// The device's profile, or the one-tier profile of the analysis' device.
devices::DeviceProfile ProfileOf(const AnalyzeOptions& options) {
  if (options.device_profile.has_value()) return *options.device_profile;
  devices::DeviceProfile profile;
  profile.set_name(options.device.name);
  profile.set_alignment_bytes(options.device.alignment_bytes);
  devices::Memory* memory = profile.add_memory();
  memory->set_name("arena");
  memory->set_holds_activations(true);
  memory->set_holds_weights(true);
  return profile;
}

// The sized tensors as buffers: one per group of tensors sharing bytes, as
// in the single arena; under --runtime, one more for what the runtime holds
// beyond the arena and its weights.
struct TierBuffers {
  std::vector<planner::Buffer> buffers;
  std::vector<size_t> tensor_of_buffer;   // The group's owner (buffers of tensors only).
  std::vector<int64_t> buffer_of_tensor;  // -1: unsized.
  int64_t weights_bytes = 0;              // The resident weights the tiers hold.
  int64_t runtime_buffer = -1;            // Index of the runtime's own memory, when any.
};

// Under --runtime the device holds the runtime's figure: the weights after
// its load, and its peak beyond them, of which the arena's tensors are a
// part (when the runtime needs less than the arena, the arena still counts:
// a device verdict must not err low). Else the resident weights, folded ones
// included.
TierBuffers BuffersOf(const AnalyzeOptions& options, const Analysis& analysis) {
  TierBuffers out;
  const MemoryFigures& memory = analysis.memory;
  out.weights_bytes = memory.weights_bytes + memory.folded_weights_bytes;
  int64_t runtime_extra_bytes = 0;
  if (!options.runtime.empty()) {
    out.weights_bytes = memory.runtime_weights_bytes;
    runtime_extra_bytes = std::max<int64_t>(0, memory.peak_bytes - memory.runtime_weights_bytes - memory.arena_bytes);
  }
  out.buffer_of_tensor.assign(analysis.tensors.size(), -1);
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    const TensorRecord& tensor = analysis.tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index >= 0) continue;
    out.buffer_of_tensor[i] = static_cast<int64_t>(out.buffers.size());
    out.buffers.push_back(planner::Buffer{
        .id = tensor.name,
        .lifespan = {tensor.first_step, tensor.last_step},
        .size = *tensor.bytes,
    });
    out.tensor_of_buffer.push_back(i);
  }
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    const TensorRecord& tensor = analysis.tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index < 0) continue;
    out.buffer_of_tensor[i] = out.buffer_of_tensor[tensor.shares_with_index];
    planner::Buffer& group = out.buffers[out.buffer_of_tensor[i]];
    group.lifespan.first = std::min(group.lifespan.first, tensor.first_step);
    group.lifespan.last = std::max(group.lifespan.last, tensor.last_step);
    group.size = std::max(group.size, *tensor.bytes);
  }
  if (runtime_extra_bytes > 0) {
    out.runtime_buffer = static_cast<int64_t>(out.buffers.size());
    const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(analysis.schedule.size()));
    out.buffers.push_back(planner::Buffer{
        .id = "the runtime's own memory",
        .lifespan = {0, steps - 1},
        .size = runtime_extra_bytes,
    });
  }
  return out;
}

// With one activation tier at the device's alignment, that tier's problem is
// the single arena's, already planned with the full budget: the tiers are
// planned with heuristics only and the better of the two plans is kept.
absl::StatusOr<devices::DevicePlan> PlanTiers(const AnalyzeOptions& options, const Analysis& analysis,
                                              const devices::DeviceProfile& profile, const TierBuffers& buffers) {
  int activation_tiers = 0;
  bool same_alignment = true;
  for (const devices::Memory& memory : profile.memory()) {
    if (!memory.holds_activations()) continue;
    ++activation_tiers;
    same_alignment = devices::TierAlignment(profile, memory) == options.device.alignment_bytes;
  }
  const bool reuse_single_arena = activation_tiers == 1 && same_alignment;
  planner::SolveOptions tier_options{.time_limit = options.planner_time_limit};
  // The single arena's offsets, buffer by buffer (the runtime's own memory
  // above the arena): the tier's plan when it fits.
  planner::Solution single_arena;
  int64_t single_arena_bytes = analysis.memory.arena_bytes;
  for (size_t tensor : buffers.tensor_of_buffer) {
    single_arena.offsets.push_back(analysis.tensors[tensor].offset.value_or(0));
  }
  if (buffers.runtime_buffer >= 0) {
    const int64_t alignment = std::max<int64_t>(1, options.device.alignment_bytes);
    single_arena.offsets.push_back(analysis.memory.arena_bytes);
    single_arena_bytes += (buffers.buffers[buffers.runtime_buffer].size + alignment - 1) / alignment * alignment;
  }
  if (reuse_single_arena) {
    tier_options = {.time_limit = absl::ZeroDuration(), .bounded_search_nodes = 0, .hint = &single_arena};
  }
  absl::StatusOr<devices::DevicePlan> plan =
      devices::PlanOnDevice(buffers.buffers, buffers.weights_bytes, profile, tier_options);
  if (!plan.ok()) return plan.status();
  if (reuse_single_arena && plan->spilled_buffers > 0) {
    // The heuristics alone did not fit the tier: let the search try too.
    plan = devices::PlanOnDevice(buffers.buffers, buffers.weights_bytes, profile,
                                 {.time_limit = options.planner_time_limit});
    if (!plan.ok()) return plan.status();
  }
  if (reuse_single_arena && plan->spilled_buffers == 0) {
    for (devices::TierPlan& tier : plan->tiers) {
      if (!tier.holds_activations || tier.arena_bytes <= single_arena_bytes) continue;
      // Same problem, better plan: the single arena's offsets (already validated).
      tier.arena_bytes = single_arena_bytes;
      tier.plan.proven_optimal = analysis.plan.proven_optimal && buffers.runtime_buffer < 0;
      for (size_t i = 0; i < buffers.buffers.size(); ++i) plan->placements[i].offset = single_arena.offsets[i];
    }
  }
  return plan;
}

// The plan's tiers, each tensor's tier and offset in it, and the verdict, into `analysis`.
void RecordTiers(const devices::DevicePlan& plan, const TierBuffers& buffers, Analysis& analysis) {
  for (const devices::TierPlan& tier : plan.tiers) {
    analysis.tiers.push_back(TierSummary{
        .name = tier.name,
        .capacity_bytes = tier.capacity_bytes,
        .arena_limit_bytes = tier.arena_limit_bytes,
        .alignment_bytes = tier.alignment_bytes,
        .arena_bytes = tier.arena_bytes,
        .weights_bytes = tier.weights_bytes,
        .tensors = 0,  // Counted below: a group of tensors sharing bytes is one buffer.
        .holds_weights = tier.holds_weights,
        .holds_activations = tier.holds_activations,
        .proven_optimal = tier.plan.proven_optimal,
    });
  }
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    if (buffers.buffer_of_tensor[i] < 0) continue;
    const devices::BufferPlacement& placement = plan.placements[buffers.buffer_of_tensor[i]];
    TensorRecord& tensor = analysis.tensors[i];
    if (placement.tier < 0) continue;
    tensor.tier = plan.tiers[placement.tier].name;
    tensor.tier_offset = placement.offset;
    ++analysis.tiers[placement.tier].tensors;
  }
  analysis.fits = plan.fits;
  analysis.fits_reason = plan.reason;
  analysis.spill_policy = plan.spill_policy;
  analysis.spilled_tensors = plan.spilled_buffers;
  if (analysis.fits.has_value() && *analysis.fits && !analysis.memory.complete) {
    // Unsized tensors are missing from every tier: "fits" would be a guess.
    analysis.fits = std::nullopt;
    analysis.fits_reason = "some tensors have no known size";
  }
}

}  // namespace

// The device's view: weights into the tiers that hold them, arena tensors
// into the activation tiers (spilling when one is full), and the verdict.
// The spec's figures above stay those of one arena at the device's
// alignment; the tiers say where that arena actually goes.
absl::Status PlanOnDeviceTiers(const AnalyzeOptions& options, Analysis& analysis) {
  const devices::DeviceProfile profile = ProfileOf(options);
  const TierBuffers buffers = BuffersOf(options, analysis);
  absl::StatusOr<devices::DevicePlan> plan = PlanTiers(options, analysis, profile, buffers);
  if (!plan.ok()) return plan.status();
  RecordTiers(*plan, buffers, analysis);
  return absl::OkStatus();
}

}  // namespace footprint
