#include "planner/planner.h"

#include "gtest/gtest.h"
#include "planner/lower_bound.h"
#include "planner/testing/staircase.h"
#include "planner/validator.h"

namespace footprint::planner {
namespace {

// kStaircase: greedy by size wastes bytes there (exact_test.cc).

TEST(SolveTest, HeuristicsOnlyStillValidAndNamed) {
  const absl::StatusOr<PlanResult> result =
      Solve(kStaircase, {.time_limit = absl::ZeroDuration(), .bounded_search_nodes = 0});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(ValidateSolution(kStaircase, result->solution).ok());
  EXPECT_EQ(result->search_nodes, 0);
  EXPECT_FALSE(result->algorithm.empty());
  EXPECT_GE(result->arena_bytes, result->lower_bound);
}

TEST(SolveTest, WithTimeReachesAndProvesTheOptimum) {
  const absl::StatusOr<PlanResult> result = Solve(kStaircase, {.time_limit = absl::Seconds(5)});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->lower_bound, 7);
  EXPECT_EQ(result->arena_bytes, 7);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(SolveTest, AHintAtTheLowerBoundIsKeptAsGiven) {
  const absl::StatusOr<PlanResult> optimal = Solve(kStaircase, {.time_limit = absl::Seconds(5)});
  ASSERT_TRUE(optimal.ok() && optimal->proven_optimal);
  const absl::StatusOr<PlanResult> result =
      Solve(kStaircase, {.time_limit = absl::ZeroDuration(), .bounded_search_nodes = 0, .hint = &optimal->solution});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->algorithm, "given");
  EXPECT_EQ(result->solution, optimal->solution);
  EXPECT_EQ(result->arena_bytes, 7);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(SolveTest, InvalidOrWorseHintsLoseToTheHeuristics) {
  const Solution overlapping = {.offsets = {0, 0, 0, 0, 0, 0}};
  const Solution stacked = {.offsets = {0, 4, 6, 7, 10, 14}};  // Valid, 18 bytes: no reuse at all.
  const Solution too_short = {.offsets = {0, 4}};
  ASSERT_TRUE(ValidateSolution(kStaircase, stacked).ok());
  for (const Solution* hint : {&overlapping, &stacked, &too_short}) {
    const absl::StatusOr<PlanResult> result =
        Solve(kStaircase, {.time_limit = absl::ZeroDuration(), .bounded_search_nodes = 0, .hint = hint});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_NE(result->algorithm, "given");
    EXPECT_TRUE(ValidateSolution(kStaircase, result->solution).ok());
    EXPECT_LT(result->arena_bytes, 18);
  }
}

TEST(SolveTest, EmptyAndZeroSizeProblems) {
  const absl::StatusOr<PlanResult> empty = Solve({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->arena_bytes, 0);
  EXPECT_TRUE(empty->proven_optimal);
  const Problem zeros = {.buffers = {{.id = "a", .lifespan = {0, 1}, .size = 0},
                                     {.id = "b", .lifespan = {0, 1}, .size = 0, .alignment = 8}}};
  const absl::StatusOr<PlanResult> result = Solve(zeros);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->arena_bytes, 0);
}

TEST(SolveTest, LargeShortLivedProblemStaysValid) {
  // The analyzer's shape: tens of thousands of buffers, each live a few steps.
  Problem problem;
  for (int i = 0; i < 30000; ++i) {
    problem.buffers.push_back({.id = std::to_string(i),
                               .lifespan = {i / 2, i / 2 + 1 + i % 3},
                               .size = 64 * (1 + (i * 7919) % 50),
                               .alignment = 64});
  }
  const absl::StatusOr<PlanResult> result = Solve(problem, {.time_limit = absl::ZeroDuration()});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->arena_bytes, LowerBound(problem));
}

TEST(SolveTest, ReportsLowerBoundAndValidPlan) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 64, .alignment = 64},
                               {.id = "b", .lifespan = {1, 2}, .size = 128, .alignment = 64},
                               {.id = "c", .lifespan = {2, 3}, .size = 64, .alignment = 64},
                           }};
  absl::StatusOr<PlanResult> result = Solve(problem);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->lower_bound, 192);
  EXPECT_EQ(result->arena_bytes, 192);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(SolveTest, SaysWhenThePlanExceedsTheCapacity) {
  Problem problem = kStaircase;
  problem.capacity = 6;  // Below the lower bound of 7.
  EXPECT_EQ(Solve(problem).status().code(), absl::StatusCode::kResourceExhausted);
  problem.capacity = 7;
  EXPECT_TRUE(Solve(problem).ok());
}

TEST(SolveTest, RejectsInvalidProblem) {
  EXPECT_FALSE(Solve({.buffers = {{.id = "a", .lifespan = {3, 1}, .size = 1}}}).ok());
}

}  // namespace
}  // namespace footprint::planner
