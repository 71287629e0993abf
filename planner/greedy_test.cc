#include "planner/greedy.h"

#include "gtest/gtest.h"
#include "planner/lower_bound.h"
#include "planner/planner.h"
#include "planner/testing/staircase.h"
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

TEST(OrderingsTest, SortLargestKeyFirst) {
  const Problem problem = {.buffers = {
                               {.id = "short_big", .lifespan = {2, 2}, .size = 10},
                               {.id = "long_small", .lifespan = {0, 5}, .size = 2},
                               {.id = "mid", .lifespan = {1, 3}, .size = 4},
                           }};
  EXPECT_EQ(OrderBySizeDescending(problem), (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(OrderByLifespanDescending(problem), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(OrderByAreaDescending(problem), (std::vector<int>{2, 1, 0}));  // 12 = 12: larger size first.
  EXPECT_EQ(OrderByStart(problem), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(OrderByPeakLoadDescending(problem), (std::vector<int>{0, 2, 1}));  // Peaks 16, 16, 16: by size.
}

TEST(SkylineTest, FillsBottomUpAndReachesTheStaircaseOptimum) {
  // Greedy by size needs 10 bytes here (exact_test.cc); skyline by start, 7.
  const Problem& problem = kStaircase;
  EXPECT_EQ(ArenaSize(problem, GreedyBySize(problem)), 10);
  const HeuristicPlan plan = RunHeuristicPortfolio(problem, 7);
  EXPECT_TRUE(ValidateSolution(problem, plan.solution).ok());
  EXPECT_EQ(plan.arena_bytes, 7);
}

TEST(SkylineTest, RespectsAlignmentAndPinnedBuffers) {
  const Problem problem = {.buffers = {
                               {.id = "pinned", .lifespan = {0, 3}, .size = 8, .pinned_offset = 0},
                               {.id = "a", .lifespan = {0, 1}, .size = 3},
                               {.id = "b", .lifespan = {1, 2}, .size = 8, .alignment = 16},
                           }};
  const Solution solution = PlaceSkyline(problem, {0, 1, 2});
  EXPECT_TRUE(ValidateSolution(problem, solution).ok());
  EXPECT_EQ(solution.offsets[0], 0);
  EXPECT_EQ(solution.offsets[1], 8);
  EXPECT_EQ(solution.offsets[2], 16);
}

TEST(PortfolioTest, NeverWorseThanGreedyBySizeAndAlwaysValid) {
  Problem problem;
  for (int i = 0; i < 200; ++i) {
    problem.buffers.push_back({.id = std::to_string(i),
                               .lifespan = {(i * 37) % 50, (i * 37) % 50 + (i * 13) % 9},
                               .size = 16 * (1 + (i * 7919) % 23),
                               .alignment = i % 4 == 0 ? 64 : 16});
  }
  const HeuristicPlan plan = RunHeuristicPortfolio(problem, 0);
  EXPECT_TRUE(ValidateSolution(problem, plan.solution).ok());
  EXPECT_LE(plan.arena_bytes, ArenaSize(problem, GreedyBySize(problem)));
}

}  // namespace
}  // namespace footprint::planner
