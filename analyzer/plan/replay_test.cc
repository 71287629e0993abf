// Replay on small built models: a right plan passes in every mode; a plan
// moved or shrunk so that live tensors overlap fails naming the pair; the
// sharing rules (alias carries its source's bytes, in-place overwrites only
// a dying input) are enforced.
#include "analyzer/plan/replay.h"

#include "absl/strings/match.h"
#include "analyzer/plan/plan_test_util.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::ModesOptions;
using ::footprint::testing::SharingModel;

ArenaPlan PlanOf(const ModelBuilder& builder, bool all_modes) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, ModesOptions(all_modes));
  EXPECT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(*analysis, "mx64:0");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *plan;
}

int64_t IdOf(const ArenaPlan& plan, const std::string& name) {
  for (size_t id = 0; id < plan.tensors.size(); ++id) {
    if (plan.tensors[id].name == name) return id;
  }
  ADD_FAILURE() << "no tensor " << name;
  return 0;
}

TEST(Replay, PassesTheAnalysisPlanInEveryMode) {
  for (bool all_modes : {false, true}) {
    const ArenaPlan plan = PlanOf(SharingModel(), all_modes);
    absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->ok) << result->failure;
    EXPECT_EQ(result->steps, 4);
    EXPECT_GT(result->bytes_checked, 0);
  }
}

TEST(Replay, NamesTheOverwrittenTensorAndTheOverwriter) {
  ArenaPlan plan = PlanOf(SharingModel(), /*all_modes=*/false);
  // Baseline: x2 is live from the start to sig's step; put d... rather put
  // a (written at relu0) over x2 (a graph input, live until sig).
  const int64_t a = IdOf(plan, "a"), x2 = IdOf(plan, "x2");
  plan.tensors[a].offset = plan.tensors[x2].offset;
  absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->ok);
  EXPECT_EQ(result->overwritten, x2);
  EXPECT_EQ(result->overwriter, a);
  EXPECT_EQ(result->step, plan.tensors[a].first_step);
  EXPECT_TRUE(absl::StrContains(result->failure, "node 'relu0'")) << result->failure;
  EXPECT_TRUE(absl::StrContains(result->failure, "tensor 'a'")) << result->failure;
  EXPECT_TRUE(absl::StrContains(result->failure, "live tensor 'x2'")) << result->failure;
}

TEST(Replay, AnArenaShrunkByOneAlignmentUnitFails) {
  ArenaPlan plan = PlanOf(SharingModel(), /*all_modes=*/true);
  plan.tiers[0].arena_bytes -= plan.tiers[0].alignment;
  absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(absl::StrContains(result->failure, "ends past the")) << result->failure;
}

TEST(Replay, AnAliasMustHoldItsSourceBytes) {
  ArenaPlan plan = PlanOf(SharingModel(), /*all_modes=*/true);
  const int64_t b = IdOf(plan, "b");
  ASSERT_EQ(plan.tensors[b].sharing, "alias");
  plan.tensors[b].offset += plan.tiers[0].alignment;  // A view somewhere else holds nothing of its source.
  plan.tiers[0].arena_bytes += plan.tiers[0].alignment;
  absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->overwritten, b);
}

TEST(Replay, InPlaceMayOverwriteOnlyADyingInput) {
  ArenaPlan plan = PlanOf(SharingModel(), /*all_modes=*/true);
  const int64_t c = IdOf(plan, "c"), b = IdOf(plan, "b");
  ASSERT_EQ(plan.tensors[c].sharing, "inplace");
  plan.tensors[b].last_step += 1;  // b now outlives the step c writes over it.
  absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->ok);
  EXPECT_EQ(result->overwritten, b);
  EXPECT_EQ(result->overwriter, c);
}

}  // namespace
}  // namespace footprint
