#include "planner/greedy.h"

#include "gtest/gtest.h"
#include "planner/lower_bound.h"
#include "planner/planner.h"
#include "planner/validator.h"

namespace footprint::planner {
namespace {

TEST(GreedyBySizeTest, ReusesBytesOfDeadBuffers) {
  // A chain a -> b -> c: a and c never live together, so they share bytes.
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 100},
                               {.id = "b", .lifespan = {1, 2}, .size = 50},
                               {.id = "c", .lifespan = {2, 3}, .size = 100},
                           }};
  const Solution solution = GreedyBySize(problem);
  EXPECT_TRUE(ValidateSolution(problem, solution).ok());
  EXPECT_EQ(solution, (Solution{.offsets = {0, 100, 0}}));
  EXPECT_EQ(ArenaSize(problem, solution), 150);
}

TEST(GreedyBySizeTest, BestFitPicksTheSmallestGap) {
  // After placing the big buffers, two holes are left at [100,150) and
  // [250,270); the 20-byte buffer goes into the smaller one.
  const Problem problem = {.buffers = {
                               {.id = "x", .lifespan = {0, 0}, .size = 100, .pinned_offset = 0},
                               {.id = "y", .lifespan = {0, 0}, .size = 100, .pinned_offset = 150},
                               {.id = "z", .lifespan = {0, 0}, .size = 30, .pinned_offset = 270},
                               {.id = "small", .lifespan = {0, 0}, .size = 20},
                           }};
  const Solution solution = GreedyBySize(problem);
  EXPECT_TRUE(ValidateSolution(problem, solution).ok());
  EXPECT_EQ(solution.offsets[3], 250);
}

TEST(GreedyBySizeTest, RespectsAlignment) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 10, .alignment = 1},
                               {.id = "b", .lifespan = {0, 1}, .size = 8, .alignment = 64},
                           }};
  const Solution solution = GreedyBySize(problem);
  EXPECT_TRUE(ValidateSolution(problem, solution).ok());
  EXPECT_EQ(solution.offsets[1] % 64, 0);
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

TEST(SolveTest, RejectsInvalidProblem) {
  EXPECT_FALSE(Solve({.buffers = {{.id = "a", .lifespan = {3, 1}, .size = 1}}}).ok());
}

}  // namespace
}  // namespace footprint::planner
