#include "planner/lower_bound.h"

#include "gtest/gtest.h"

namespace footprint::planner {
namespace {

TEST(LowerBoundTest, EmptyProblemIsZero) { EXPECT_EQ(LowerBound(Problem{}), 0); }

TEST(LowerBoundTest, ClosedIntervalsTouchingAtOneStepOverlap) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 2}, .size = 10},
                               {.id = "b", .lifespan = {2, 4}, .size = 20},
                           }};
  EXPECT_EQ(LowerBound(problem), 30);
}

TEST(LowerBoundTest, AdjacentIntervalsDoNotOverlap) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 10},
                               {.id = "b", .lifespan = {2, 4}, .size = 20},
                               {.id = "c", .lifespan = {5, 5}, .size = 5},
                           }};
  EXPECT_EQ(LowerBound(problem), 20);
}

TEST(LowerBoundTest, PeakInTheMiddle) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 3}, .size = 1},
                               {.id = "b", .lifespan = {1, 2}, .size = 2},
                               {.id = "c", .lifespan = {2, 2}, .size = 4},
                               {.id = "d", .lifespan = {3, 5}, .size = 3},
                           }};
  EXPECT_EQ(LowerBound(problem), 7);  // Step 2: a + b + c.
}

TEST(LiveProfileTest, SumsPerStep) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {1, 3}, .size = 1},
                               {.id = "b", .lifespan = {2, 4}, .size = 2},
                           }};
  const LiveProfile profile = ComputeLiveProfile(problem);
  EXPECT_EQ(profile.first_step, 1);
  EXPECT_EQ(profile.live_bytes, (std::vector<Bytes>{1, 3, 3, 2}));
}

}  // namespace
}  // namespace footprint::planner
