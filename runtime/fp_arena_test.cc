// fp_arena in both builds (this file is compiled against each): init's
// refusals, tensor pointers, and, in the checked build, the live-step and
// guard checks.
#include "runtime/fp_arena.h"

#include "runtime/fp_arena.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "gtest/gtest.h"

namespace {

#ifdef FP_ARENA_CHECKED
constexpr bool kChecked = true;
#else
constexpr bool kChecked = false;
#endif

// Two tiers: "sram" (256 bytes, alignment 64) holding a [0,1], b [1,2] at
// offset 128 and c [2,3] at offset 0; "dram" (128 bytes, alignment 16)
// holding d [0,3].
struct SmallPlan {
  size_t tier_size[2] = {256, 128};
  size_t tier_alignment[2] = {64, 16};
  const char* tier_name[2] = {"sram", "dram"};
  uint32_t tensor_tier[4] = {0, 0, 0, 1};
  size_t offset[4] = {0, 128, 0, 0};
  size_t size[4] = {60, 100, 64, 128};
  size_t aligned[4] = {64, 128, 64, 128};
  int32_t first[4] = {0, 1, 2, 0};
  int32_t last[4] = {1, 2, 3, 3};
  int32_t shares[4] = {-1, -1, -1, -1};
  uint8_t sharing[4] = {FP_SHARING_OWN, FP_SHARING_OWN, FP_SHARING_OWN, FP_SHARING_OWN};
  const char* tensor_name[4] = {"a", "b", "c", "d"};
  const char* node_name[4] = {"n0", "n1", "n2", "n3"};
  fp_plan plan{2, tier_size, tier_alignment, tier_name, 4, tensor_tier, offset, size, aligned, first, last, shares,
               sharing, tensor_name, 4, node_name};
};

// An aligned heap block, freed at scope end.
struct Block {
  explicit Block(size_t bytes, size_t alignment = 64)
      : base(static_cast<unsigned char*>(std::aligned_alloc(alignment, (bytes + 2 * alignment) / alignment * alignment))) {}
  ~Block() { std::free(base); }
  unsigned char* base;
};

struct Seen {
  std::vector<fp_violation> what;
  std::vector<uint32_t> tensor;
  std::vector<int32_t> step;
};

void Record(void* user, fp_violation what, uint32_t tensor, int32_t step) {
  auto* seen = static_cast<Seen*>(user);
  seen->what.push_back(what);
  seen->tensor.push_back(tensor);
  seen->step.push_back(step);
}

TEST(FpArenaInit, RequiredBytesAreTheArenaPlusGuardsWhenChecked) {
  SmallPlan p;
  EXPECT_EQ(fp_arena_required_bytes(&p.plan, 0), 256 + (kChecked ? FP_ARENA_GUARD_BYTES : 0));
  EXPECT_EQ(fp_arena_required_bytes(&p.plan, 1), 128 + (kChecked ? FP_ARENA_GUARD_BYTES : 0));
  EXPECT_EQ(fp_arena_required_bytes(&p.plan, 2), 0u);
  EXPECT_EQ(fp_arena_required_bytes(nullptr, 0), 0u);
}

TEST(FpArenaInit, AcceptsTheExactBuffer) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base, fp_arena_required_bytes(&p.plan, 0)), FP_OK);
  EXPECT_EQ(arena.size, 256u);
  EXPECT_EQ(arena.step, 0);
}

TEST(FpArenaInit, RefusesABufferOneByteTooSmall) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base, fp_arena_required_bytes(&p.plan, 0) - 1),
            FP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(arena.base, nullptr);
  EXPECT_EQ(fp_tensor(&arena, 0), nullptr);  // Unusable after a refusal, never a crash.
}

TEST(FpArenaInit, RefusesAMisalignedBuffer) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base + 16, 400), FP_ERR_MISALIGNED);
  // dram's alignment is 16: the same address is fine there.
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 1, block.base + 16, 400), FP_OK);
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 1, block.base + 8, 400), FP_ERR_MISALIGNED);
}

TEST(FpArenaInit, RefusesNullsAndUnknownTiers) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  EXPECT_EQ(fp_arena_init(nullptr, &p.plan, 0, block.base, 512), FP_ERR_NULL);
  EXPECT_EQ(fp_arena_init(&arena, nullptr, 0, block.base, 512), FP_ERR_NULL);
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 0, nullptr, 512), FP_ERR_NULL);
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 2, block.base, 512), FP_ERR_NO_SUCH_TIER);
}

TEST(FpArenaInit, RefusesAPlanWhoseTensorEndsPastTheArena) {
  SmallPlan p;
  p.tier_size[0] = 128;  // b ends at 256.
  Block block(512);
  fp_arena arena;
  EXPECT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base, 512), FP_ERR_BAD_PLAN);
  SmallPlan misaligned;
  misaligned.offset[1] = 32;
  EXPECT_EQ(fp_arena_init(&arena, &misaligned.plan, 0, block.base, 512), FP_ERR_BAD_PLAN);
  EXPECT_STREQ(fp_status_name(FP_ERR_BAD_PLAN), "a tensor of the tier does not fit its arena");
}

TEST(FpTensor, IsTheBasePlusTheOffsetInItsTier) {
  SmallPlan p;
  Block sram(512), dram(512);
  fp_arena a0, a1;
  ASSERT_EQ(fp_arena_init(&a0, &p.plan, 0, sram.base, 512), FP_OK);
  ASSERT_EQ(fp_arena_init(&a1, &p.plan, 1, dram.base, 512), FP_OK);
  Seen seen;
  fp_arena_set_violation_handler(&a0, Record, &seen);
  fp_arena_set_violation_handler(&a1, Record, &seen);
  EXPECT_EQ(fp_tensor(&a0, 0), sram.base);
  EXPECT_EQ(fp_tensor(&a1, 3), dram.base);
  fp_step(&a0, 1);
  EXPECT_EQ(fp_tensor(&a0, 1), sram.base + 128);
  fp_step(&a0, 2);
  EXPECT_EQ(fp_tensor(&a0, 2), sram.base);
  EXPECT_EQ(fp_tensor(&a0, 3), nullptr);  // d is in dram.
  EXPECT_EQ(fp_tensor(&a0, 4), nullptr);  // No such id.
  EXPECT_EQ(seen.what.size(), kChecked ? 2u : 0u);
  if (kChecked) {
    EXPECT_EQ(seen.what[0], FP_VIOLATION_WRONG_TIER);
    EXPECT_EQ(seen.what[1], FP_VIOLATION_BAD_ID);
  }
}

TEST(FpChecked, ReportsATensorAskedForOutsideItsLiveSteps) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  ASSERT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base, 512), FP_OK);
  Seen seen;
  fp_arena_set_violation_handler(&arena, Record, &seen);
  fp_step(&arena, 2);
  EXPECT_EQ(fp_tensor(&arena, 1), block.base + 128);  // b [1,2]: live.
  EXPECT_EQ(fp_tensor(&arena, 0), block.base);       // a [0,1]: dead, still its pointer.
  fp_step(&arena, 0);
  EXPECT_NE(fp_tensor(&arena, 2), nullptr);          // c [2,3]: not yet live.
  if (!kChecked) {
    EXPECT_TRUE(seen.what.empty());
    return;
  }
  ASSERT_EQ(seen.what.size(), 2u);
  EXPECT_EQ(seen.what[0], FP_VIOLATION_NOT_LIVE);
  EXPECT_EQ(seen.tensor[0], 0u);
  EXPECT_EQ(seen.step[0], 2);
  EXPECT_EQ(seen.tensor[1], 2u);
  EXPECT_EQ(seen.step[1], 0);
  EXPECT_EQ(arena.violations, 2u);
}

TEST(FpChecked, ReportsAWritePastTheTierEndIntoTheGuard) {
  SmallPlan p;
  Block block(512);
  fp_arena arena;
  ASSERT_EQ(fp_arena_init(&arena, &p.plan, 0, block.base, 512), FP_OK);
  Seen seen;
  fp_arena_set_violation_handler(&arena, Record, &seen);
  fp_step(&arena, 1);
  auto* b = static_cast<unsigned char*>(fp_tensor(&arena, 1));
  for (int i = 0; i < 128; ++i) b[i] = 1;  // Its whole aligned size: ends exactly at the arena's end.
  fp_step(&arena, 2);
  EXPECT_TRUE(seen.what.empty());
  EXPECT_EQ(fp_arena_guard_intact(&arena), 1);
  b[128] = 1;  // One byte past the arena.
  EXPECT_EQ(fp_arena_guard_intact(&arena), kChecked ? 0 : 1);
  fp_step(&arena, 3);
  if (!kChecked) {
    EXPECT_TRUE(seen.what.empty());
    return;
  }
  ASSERT_EQ(seen.what.size(), 1u);
  EXPECT_EQ(seen.what[0], FP_VIOLATION_GUARD);
  EXPECT_EQ(seen.tensor[0], 1u);  // b, live at step 2, ends last.
  EXPECT_EQ(seen.step[0], 2);
  EXPECT_EQ(fp_arena_guard_intact(&arena), 1);  // Rearmed: each overrun is reported once.
}

TEST(FpArenaCpp, WrapsInitTensorsStepsAndViolations) {
  SmallPlan p;
  Block block(512);
  fp::Arena refused(p.plan, 0, block.base + 16, 400);
  EXPECT_EQ(refused.status(), FP_ERR_MISALIGNED);
  EXPECT_EQ(refused.Tensor(0), nullptr);
  fp::Arena arena(p.plan, 0, block.base, 512);
  ASSERT_TRUE(arena.ok());
  int seen = 0;
  auto count = [&](fp_violation what, uint32_t tensor, int32_t step) {
    EXPECT_EQ(what, FP_VIOLATION_NOT_LIVE);
    EXPECT_EQ(tensor, 2u);
    ++seen;
  };
  arena.OnViolation(count);
  arena.Step(1);
  EXPECT_EQ(arena.step(), 1);
  EXPECT_EQ(arena.Tensor<float>(1), reinterpret_cast<float*>(block.base + 128));
  EXPECT_EQ(arena.TensorBytes(1), 100u);
  EXPECT_EQ(arena.TensorBytes(9), 0u);
  arena.Tensor(2);  // c [2,3] at step 1.
  EXPECT_EQ(seen, kChecked ? 1 : 0);
  EXPECT_EQ(arena.violations(), kChecked ? 1u : 0u);
}

}  // namespace
