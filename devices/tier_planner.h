// Plans a model's arena tensors into a device's memory tiers and says whether
// it fits.
//
// Usage:
//   std::vector<footprint::planner::Buffer> buffers = ...;  // unaligned sizes
//   absl::StatusOr<footprint::devices::DevicePlan> plan = footprint::devices::PlanOnDevice(
//       buffers, /*weights_bytes=*/model_weights, *footprint::devices::FindDevice("stm32h743"),
//       {.time_limit = absl::Seconds(1)});
//   if (!plan.ok()) return plan.status();
//   // plan->fits: true / false / nullopt (unknown: a tier in use has no capacity set);
//   // plan->placements[i]: buffer i's tier and offset; plan->tiers[t].plan: tier t's validated plan.
//
// Why tiers: a microcontroller runs a model out of several RAM blocks at
// different addresses and keeps weights in flash; an NPU prefers its SRAM
// and falls back to DRAM. Like TVM's unified static memory planner (one pool
// per tier), each tier is its own arena, planned and validated on its own.
//
// How it works:
// - Alignment: every buffer's size is rounded up to its tier's alignment
//   (the tier's, else the profile's, else 64 B) and its offset aligned to it.
// - Weights (a total: their placement is per byte, not per tensor) fill the
//   tiers that hold weights in profile order, each up to its capacity; a tier
//   with no capacity set takes whatever is left.
// - Activations are planned into the first activation tier. Its usable size is
//   min(capacity - weights placed in it, contiguous_bytes) ("one arena cannot
//   be larger than the largest contiguous block"). While the planned arena is
//   larger, whole buffers move to the next activation tier, chosen by the spill
//   policy, and the tier is replanned; then the next tier gets the same
//   treatment with what it received. What the last tier cannot hold stays
//   there, and the verdict is fits = false with the reason.
// - Every tier's plan comes from planner::Solve (validated) and is validated
//   again against the tier's aligned problem before it is returned.
//
// What it does not guarantee: the fewest spilled bytes. Choosing which
// buffers to spill is a knapsack-like problem; the policies below are greedy
// and deterministic (ties broken by buffer index), and a buffer never moves
// back to a faster tier once spilled.
#ifndef ONNX_FOOTPRINT_DEVICES_TIER_PLANNER_H_
#define ONNX_FOOTPRINT_DEVICES_TIER_PLANNER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/device_profile.pb.h"
#include "planner/planner.h"
#include "planner/problem.h"

namespace footprint::devices {

using planner::Bytes;

// Which buffers leave a tier that is too full. Both look only at the buffers
// live at the tier's peak step (the busiest step, earliest on ties): only
// they can lower the peak, which no plan can go under.
enum class SpillPolicy {
  // Default. The buffer with the largest aligned size x lifespan length
  // (steps): it frees the most byte-steps of the fast tier, so it also lowers
  // the steps next to the peak, and fewer buffers move. Ties: larger size,
  // then lower index.
  kPeakSizeTimesLifetime,
  // The largest buffer at the peak (ties: longer lifespan, then lower index):
  // the fewest moves for the peak step alone.
  kPeakLargestFirst,
};
std::string_view SpillPolicyName(SpillPolicy policy);  // "peak-size-x-lifetime", "peak-largest-first".

struct TierPlan {
  std::string name;                           // The profile's memory name.
  std::optional<Bytes> capacity_bytes;        // The profile's figure; nullopt: unknown.
  std::optional<Bytes> arena_limit_bytes;     // Largest arena allowed here for activations:
                                              // min(capacity - weights_bytes, contiguous); nullopt: no limit known.
  Bytes alignment_bytes = 0;                  // Offsets and sizes in this tier are multiples of it.
  bool holds_weights = false;                 // From the profile.
  bool holds_activations = false;             // From the profile.
  Bytes weights_bytes = 0;                    // Weights placed in this tier.
  std::vector<int> buffer_indices;            // Input buffers planned here, in input order.
  planner::Problem problem;                   // Their aligned buffers (same order as buffer_indices).
  planner::PlanResult plan;                   // Validated plan of `problem` (empty when no buffers).
  Bytes arena_bytes = 0;                      // plan.arena_bytes (0 when no buffers).
};

struct BufferPlacement {
  int tier = -1;           // Index into DevicePlan::tiers.
  Bytes offset = 0;        // Offset within that tier's arena.
  Bytes aligned_size = 0;  // Size rounded up to the tier's alignment.
};

struct DevicePlan {
  std::string device;                       // The profile's name.
  std::vector<TierPlan> tiers;              // One per profile memory, in profile order.
  std::vector<BufferPlacement> placements;  // placements[i] belongs to the input buffers[i].
  std::optional<bool> fits;                 // nullopt: unknown (a tier in use has no capacity).
  std::string reason;                       // Why it does not fit, or why the verdict is unknown; "" when it fits.
  std::string spill_policy;                 // SpillPolicyName of the policy used.
  int spilled_buffers = 0;                  // Buffers planned outside the first activation tier.
};

// Plans `buffers` (sizes not yet aligned; lifespans in schedule steps) plus
// `weights_bytes` of weights onto `profile`. Errors: an invalid profile
// (CheckDeviceProfile), an invalid buffer (negative size, first > last...),
// negative weights, or a planner failure (Internal).
absl::StatusOr<DevicePlan> PlanOnDevice(const std::vector<planner::Buffer>& buffers, Bytes weights_bytes,
                                        const DeviceProfile& profile, const planner::SolveOptions& options = {},
                                        SpillPolicy policy = SpillPolicy::kPeakSizeTimesLifetime);

// "812 KiB", "3.1 MiB", "100 B": how reasons print sizes.
std::string FormatBytes(Bytes bytes);

}  // namespace footprint::devices

#endif  // ONNX_FOOTPRINT_DEVICES_TIER_PLANNER_H_
