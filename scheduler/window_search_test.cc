#include "scheduler/window_search.h"

#include <random>

#include "gtest/gtest.h"
#include "scheduler/schedule.h"
#include "scheduler/testing/brute_force.h"
#include "scheduler/testing/graphs.h"

namespace footprint::scheduler {
namespace {

TEST(ImproveByWindowsTest, NeverRaisesThePeakAndKeepsAValidOrder) {
  std::mt19937_64 random(13);
  int improved = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 20, .max_nodes = 150});
    std::vector<int> order = testing::RandomTopologicalOrder(graph, random);
    const int64_t before = SchedulePeak(graph, order);
    const bool changed = ImproveByWindows(graph, order, 0, absl::Now() + absl::Seconds(60));
    ASSERT_TRUE(IsTopologicalOrder(graph, order)) << seed;
    const int64_t after = SchedulePeak(graph, order);
    EXPECT_LE(after, before) << seed;
    if (changed) {
      EXPECT_LT(after, before) << seed;
      ++improved;
    } else {
      EXPECT_EQ(after, before) << seed;
    }
  }
  EXPECT_GT(improved, 30);  // Random orders leave a lot to win.
}

TEST(ImproveByWindowsTest, FindsTheOptimumOfAGraphThatFitsOneWindow) {
  std::mt19937_64 random(17);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed);  // At most 14 nodes: one window.
    const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 30'000);
    if (!best.has_value()) continue;
    std::vector<int> order = testing::RandomTopologicalOrder(graph, random);
    ImproveByWindows(graph, order, 0, absl::Now() + absl::Seconds(60));
    EXPECT_EQ(SchedulePeak(graph, order), *best) << seed;
  }
}

TEST(ImproveByWindowsTest, StopsAtGoodEnough) {
  const DataflowGraph graph = testing::ParallelTowers(6, 10);
  std::mt19937_64 random(1);
  std::vector<int> order = testing::RandomTopologicalOrder(graph, random);
  const int64_t before = SchedulePeak(graph, order);
  EXPECT_FALSE(ImproveByWindows(graph, order, before, absl::Now() + absl::Seconds(60)));
}

}  // namespace
}  // namespace footprint::scheduler
