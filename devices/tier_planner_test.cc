#include "devices/tier_planner.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/device_catalog.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "planner/lower_bound.h"
#include "planner/validator.h"

namespace footprint::devices {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using planner::Buffer;

constexpr Bytes KiB = 1024;
constexpr Bytes MiB = 1024 * KiB;

DeviceProfile Profile(const std::string& text) {
  DeviceProfile profile;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &profile)) << text;
  return profile;
}

// The issue's custom profile: 256 KiB `sram` + 1 GiB `dram`, both holding activations, alignment 256.
DeviceProfile TwoTier() {
  return Profile(R"pb(name: "two-tier"
                      alignment_bytes: 256
                      memory { name: "sram" capacity_bytes: 262144 holds_activations: true }
                      memory {
                        name: "dram"
                        capacity_bytes: 1073741824
                        holds_weights: true
                        holds_activations: true
                      })pb");
}

// Every tier's plan is valid for its own problem, and the placements agree with it.
void ExpectConsistent(const std::vector<Buffer>& buffers, const DevicePlan& plan) {
  ASSERT_EQ(plan.placements.size(), buffers.size());
  for (size_t t = 0; t < plan.tiers.size(); ++t) {
    const TierPlan& tier = plan.tiers[t];
    SCOPED_TRACE(tier.name);
    EXPECT_TRUE(planner::ValidateSolution(tier.problem, tier.plan.solution).ok());
    EXPECT_EQ(tier.arena_bytes, planner::ArenaSize(tier.problem, tier.plan.solution));
    EXPECT_GE(tier.arena_bytes, planner::LowerBound(tier.problem));
    for (size_t j = 0; j < tier.buffer_indices.size(); ++j) {
      const int index = tier.buffer_indices[j];
      EXPECT_EQ(plan.placements[index].tier, static_cast<int>(t));
      EXPECT_EQ(plan.placements[index].offset, tier.plan.solution.offsets[j]);
      EXPECT_EQ(plan.placements[index].offset % tier.alignment_bytes, 0);
      EXPECT_EQ(plan.placements[index].aligned_size % tier.alignment_bytes, 0);
      EXPECT_GE(plan.placements[index].aligned_size, buffers[index].size);
    }
  }
  for (const BufferPlacement& placement : plan.placements) EXPECT_GE(placement.tier, 0);
}

// A chain of 24 layers; each output (odd sizes, not multiples of 256) lives
// until the next layer and every fourth one until the end, like skip
// connections: the peak is far above 256 KiB.
std::vector<Buffer> SyntheticNetwork() {
  std::vector<Buffer> buffers;
  for (int k = 0; k < 24; ++k) {
    const Bytes size = 10'000 + 7'919 * ((k * 5) % 13);
    const planner::Step last = (k % 4 == 0) ? 24 : k + 1;
    buffers.push_back({.id = absl::StrCat("t", k), .lifespan = {k, last}, .size = size});
  }
  return buffers;
}

TEST(TierPlannerTest, CustomTwoTierProfileUsesBothTiersWithAlignedOffsetsAndValidPlans) {
  const std::vector<Buffer> buffers = SyntheticNetwork();
  planner::Problem unaligned{.buffers = buffers};
  ASSERT_GT(planner::LowerBound(unaligned), 256 * KiB);

  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, /*weights_bytes=*/3 * MiB, TwoTier());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(buffers, *plan);
  ASSERT_EQ(plan->tiers.size(), 2u);
  EXPECT_FALSE(plan->tiers[0].buffer_indices.empty());
  EXPECT_FALSE(plan->tiers[1].buffer_indices.empty());
  EXPECT_LE(plan->tiers[0].arena_bytes, 256 * KiB);
  EXPECT_EQ(plan->tiers[0].arena_limit_bytes, 256 * KiB);
  EXPECT_EQ(plan->tiers[1].weights_bytes, 3 * MiB);
  EXPECT_EQ(plan->tiers[0].weights_bytes, 0);
  for (const BufferPlacement& placement : plan->placements) EXPECT_EQ(placement.offset % 256, 0);
  EXPECT_EQ(plan->spilled_buffers, static_cast<int>(plan->tiers[1].buffer_indices.size()));
  EXPECT_EQ(plan->fits, true);
  EXPECT_EQ(plan->reason, "");
  EXPECT_EQ(plan->spill_policy, "peak-size-x-lifetime");
}

// The spill policy on a case small enough to work out by hand. Limit 100 B:
//   A [0,3] 40 B   B [1,1] 60 B   C [1,2] 30 B   D [3,3] 50 B
//   live bytes per step: 40, 130, 70, 90 -> step 1 is the peak (130 > 100).
// peak-size-x-lifetime: A (40 x 4 = 160) beats B (60) and C (60): A spills,
//   step 1 drops to 90 and every step fits: sram keeps B, C, D.
// peak-largest-first: B (60 B) is the largest at step 1: B spills,
//   the steps become 40, 70, 70, 90: sram keeps A, C, D.
DeviceProfile TinyTwoTier() {
  return Profile(R"pb(name: "tiny"
                      alignment_bytes: 1
                      memory { name: "sram" capacity_bytes: 100 holds_activations: true }
                      memory { name: "dram" capacity_bytes: 1000 holds_weights: true holds_activations: true })pb");
}
std::vector<Buffer> HandMade() {
  return {{.id = "A", .lifespan = {0, 3}, .size = 40},
          {.id = "B", .lifespan = {1, 1}, .size = 60},
          {.id = "C", .lifespan = {1, 2}, .size = 30},
          {.id = "D", .lifespan = {3, 3}, .size = 50}};
}

TEST(SpillPolicyTest, SizeTimesLifetimeSpillsTheLongLivedBufferAtThePeak) {
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(HandMade(), 0, TinyTwoTier(), {},
                                                 SpillPolicy::kPeakSizeTimesLifetime);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(HandMade(), *plan);
  EXPECT_THAT(plan->tiers[0].buffer_indices, ElementsAre(1, 2, 3));
  EXPECT_THAT(plan->tiers[1].buffer_indices, ElementsAre(0));
  EXPECT_EQ(plan->tiers[0].arena_bytes, 90);
  EXPECT_EQ(plan->tiers[1].arena_bytes, 40);
  EXPECT_EQ(plan->spilled_buffers, 1);
  EXPECT_EQ(plan->fits, true);
}

TEST(SpillPolicyTest, LargestFirstSpillsTheLargestBufferAtThePeak) {
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(HandMade(), 0, TinyTwoTier(), {}, SpillPolicy::kPeakLargestFirst);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(HandMade(), *plan);
  EXPECT_THAT(plan->tiers[0].buffer_indices, ElementsAre(0, 2, 3));
  EXPECT_THAT(plan->tiers[1].buffer_indices, ElementsAre(1));
  EXPECT_EQ(plan->tiers[0].arena_bytes, 90);
  EXPECT_EQ(plan->spill_policy, "peak-largest-first");
}

TEST(SpillPolicyTest, ABufferLargerThanTheTierGoesStraightToTheNextAndNothingElseMoves) {
  std::vector<Buffer> buffers = HandMade();
  buffers.push_back({.id = "huge", .lifespan = {2, 2}, .size = 500});
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, 0, TinyTwoTier());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->tiers[1].buffer_indices, ElementsAre(0, 4));  // huge, then A as before.
}

TEST(SpillPolicyTest, IsDeterministic) {
  const std::vector<Buffer> buffers = SyntheticNetwork();
  absl::StatusOr<DevicePlan> first = PlanOnDevice(buffers, 0, TwoTier());
  absl::StatusOr<DevicePlan> second = PlanOnDevice(buffers, 0, TwoTier());
  ASSERT_TRUE(first.ok() && second.ok());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(first->placements[i].tier, second->placements[i].tier);
    EXPECT_EQ(first->placements[i].offset, second->placements[i].offset);
  }
}

TEST(TierPlannerTest, WhatTheLastTierCannotHoldMakesFitsFalseWithTheReason) {
  absl::StatusOr<DevicePlan> plan =
      PlanOnDevice({{.id = "x", .lifespan = {0, 0}, .size = 2000}}, 0, TinyTwoTier());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fits, false);
  EXPECT_EQ(plan->reason, "activations need 2 KiB but the largest arena in `dram` is 1000 B (after spilling from `sram`)");
}

TEST(TierPlannerTest, Stm32h743RejectsHundredsOfMegabytes) {
  absl::StatusOr<DeviceProfile> stm32 = FindDevice("stm32h743");
  ASSERT_TRUE(stm32.ok());
  std::vector<Buffer> buffers;
  for (int k = 0; k < 6; ++k) buffers.push_back({.id = absl::StrCat("l", k), .lifespan = {k, k + 1}, .size = 150 * MiB});
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, 250 * MiB, *stm32);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(buffers, *plan);
  EXPECT_EQ(plan->fits, false);
  EXPECT_THAT(plan->reason, HasSubstr("weights need 250 MiB but the tiers holding weights (`flash`) have 2 MiB"));
  EXPECT_THAT(plan->reason, HasSubstr("activations need 300 MiB but the largest arena in `sram4` is 64 KiB"));
}

TEST(TierPlannerTest, Stm32h743AcceptsAnMnistSizedModel) {
  // mnist-8 (testdata/mnist.onnx): about 26 KiB of weights, activations in the tens of KiB.
  const std::vector<Buffer> buffers = {{.id = "Input3", .lifespan = {0, 1}, .size = 3136},
                                       {.id = "Conv28", .lifespan = {1, 2}, .size = 25088},
                                       {.id = "Relu32", .lifespan = {2, 3}, .size = 25088},
                                       {.id = "Pool", .lifespan = {3, 4}, .size = 6272},
                                       {.id = "Conv110", .lifespan = {4, 5}, .size = 12544},
                                       {.id = "Plus", .lifespan = {5, 7}, .size = 1024},
                                       {.id = "Out", .lifespan = {7, 7}, .size = 40}};
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, 26 * KiB, *FindDevice("stm32h743"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(buffers, *plan);
  EXPECT_EQ(plan->fits, true);
  EXPECT_EQ(plan->spilled_buffers, 0);
  EXPECT_EQ(plan->tiers[0].name, "axi-sram");
  EXPECT_EQ(plan->tiers[0].buffer_indices.size(), buffers.size());
  EXPECT_EQ(plan->tiers.back().name, "flash");
  EXPECT_EQ(plan->tiers.back().weights_bytes, 26 * KiB);
  for (const BufferPlacement& placement : plan->placements) EXPECT_EQ(placement.offset % 16, 0);
}

TEST(TierPlannerTest, GenericCpuPutsEverythingInOneTierAndCannotJudge) {
  const std::vector<Buffer> buffers = SyntheticNetwork();
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, 5 * MiB, *FindDevice("generic-cpu"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectConsistent(buffers, *plan);
  ASSERT_EQ(plan->tiers.size(), 1u);
  EXPECT_EQ(plan->tiers[0].buffer_indices.size(), buffers.size());
  EXPECT_EQ(plan->tiers[0].weights_bytes, 5 * MiB);
  EXPECT_EQ(plan->fits, std::nullopt);
  EXPECT_THAT(plan->reason, HasSubstr("`ram` holds weights but has no capacity set"));
  for (const BufferPlacement& placement : plan->placements) {
    EXPECT_EQ(placement.offset % 64, 0);
    EXPECT_EQ(placement.aligned_size % 64, 0);
  }
}

TEST(TierPlannerTest, WeightsFillWeightTiersInOrder) {
  // Edge TPU: 8 MiB of SRAM caches parameters; the rest stays in host memory (no capacity).
  absl::StatusOr<DevicePlan> plan = PlanOnDevice({}, 10 * MiB, *FindDevice("edge-tpu"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->tiers[0].weights_bytes, 8 * MiB);
  EXPECT_EQ(plan->tiers[1].weights_bytes, 2 * MiB);
  EXPECT_EQ(plan->fits, std::nullopt);
}

TEST(TierPlannerTest, WeightsInASharedTierLeaveLessRoomForActivations) {
  // Jetson Orin Nano: 8 GiB shared; 7 GiB of weights leave 1 GiB for the arena.
  const Bytes GiB = 1024 * MiB;
  const std::vector<Buffer> buffers = {{.id = "a", .lifespan = {0, 1}, .size = 600 * MiB},
                                       {.id = "b", .lifespan = {1, 2}, .size = 600 * MiB}};
  absl::StatusOr<DevicePlan> plan = PlanOnDevice(buffers, 7 * GiB, *FindDevice("jetson-orin-nano-8gb"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->tiers[0].arena_limit_bytes, 1 * GiB);
  EXPECT_EQ(plan->fits, false);
  EXPECT_EQ(plan->reason, "activations need 1.2 GiB but the largest arena in `lpddr5` is 1 GiB");
}

TEST(TierPlannerTest, ContiguousLimitAloneCanRejectButNotAccept) {
  // WebGPU: no capacity, but one buffer is at most 256 MiB.
  absl::StatusOr<DevicePlan> big =
      PlanOnDevice({{.id = "a", .lifespan = {0, 0}, .size = 300 * MiB}}, 0, *FindDevice("webgpu"));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->fits, false);
  absl::StatusOr<DevicePlan> small =
      PlanOnDevice({{.id = "a", .lifespan = {0, 0}, .size = 1 * MiB}}, 0, *FindDevice("webgpu"));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->fits, std::nullopt);
}

TEST(TierPlannerTest, NoBuffersNoWeightsFitsAnywhereWithCapacities) {
  absl::StatusOr<DevicePlan> plan = PlanOnDevice({}, 0, *FindDevice("stm32f407"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fits, true);
  for (const TierPlan& tier : plan->tiers) EXPECT_EQ(tier.arena_bytes, 0);
}

TEST(TierPlannerTest, RejectsInvalidInput) {
  EXPECT_FALSE(PlanOnDevice({{.id = "bad", .lifespan = {3, 1}, .size = 8}}, 0, TwoTier()).ok());
  EXPECT_FALSE(PlanOnDevice({{.id = "neg", .lifespan = {0, 0}, .size = -1}}, 0, TwoTier()).ok());
  EXPECT_FALSE(PlanOnDevice({}, -1, TwoTier()).ok());
  EXPECT_FALSE(PlanOnDevice({}, 0, Profile(R"pb(name: "no-tiers")pb")).ok());
}

TEST(FormatBytesTest, PrintsBinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(512 * KiB), "512 KiB");
  EXPECT_EQ(FormatBytes(812 * KiB), "812 KiB");
  EXPECT_EQ(FormatBytes(3 * MiB + MiB / 10), "3.1 MiB");
  EXPECT_EQ(FormatBytes(int64_t{32} << 30), "32 GiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
}

}  // namespace
}  // namespace footprint::devices
