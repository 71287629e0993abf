#include "scheduler/optimizer.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/schedule.h"
#include "scheduler/testing/brute_force.h"
#include "scheduler/testing/graphs.h"

namespace footprint::scheduler {
namespace {

using ::testing::HasSubstr;

// Checks what every result must satisfy, whatever the algorithm.
void ExpectSound(const DataflowGraph& graph, const std::vector<int>& given,
                 const ScheduleResult& result) {
  EXPECT_TRUE(IsTopologicalOrder(graph, result.order));
  EXPECT_EQ(result.peak, SchedulePeak(graph, result.order));
  EXPECT_EQ(result.given_peak, SchedulePeak(graph, given));
  EXPECT_LE(result.peak, result.given_peak);
  EXPECT_LE(result.lower_bound, result.peak);
  EXPECT_EQ(result.proven_optimal, result.lower_bound == result.peak);
  if (result.peak == result.given_peak) {
    EXPECT_EQ(result.order, given);
    EXPECT_EQ(result.algorithm, "given");
  }
}

// Two branches of a big then a small value each: finishing one branch before
// starting the other keeps only one big value live.
DataflowGraph TwoBranches() {
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}, .name = "a1"},
                                {.inputs = {0}, .outputs = {3}, .name = "b1"},
                                {.inputs = {1}, .outputs = {2}, .name = "a2"},
                                {.inputs = {3}, .outputs = {4}, .name = "b2"},
                                {.inputs = {2, 4}, .outputs = {5}, .name = "join"}},
                      .values = {{.bytes = 10},
                                 {.bytes = 100},
                                 {.bytes = 1},
                                 {.bytes = 100},
                                 {.bytes = 1},
                                 {.bytes = 1, .is_graph_output = true}}};
  ConnectValues(graph);
  return graph;
}

TEST(OptimizeScheduleTest, FinishesOneBranchBeforeTheOther) {
  const DataflowGraph graph = TwoBranches();
  const std::vector<int> given = {0, 1, 2, 3, 4};  // a1, b1: both big values live.
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, given);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, given, *result);
  EXPECT_EQ(result->given_peak, 10 + 100 + 100);
  // a1, a2, b1, b2, join: x + A1 + A2 = 111 and x + A2 + B1 = 111.
  EXPECT_EQ(result->peak, 111);
  EXPECT_TRUE(result->proven_optimal);
  EXPECT_NE(result->algorithm, "given");
}

TEST(OptimizeScheduleTest, KeepsTheGivenOrderWhenNothingIsBetter) {
  const DataflowGraph graph = TwoBranches();
  const std::vector<int> given = {0, 2, 1, 3, 4};
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, given);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, given, *result);
  EXPECT_EQ(result->order, given);
  EXPECT_EQ(result->algorithm, "given");
  EXPECT_TRUE(result->proven_optimal);
}

TEST(OptimizeScheduleTest, RejectsAnOrderThatIsNotTopological) {
  const DataflowGraph graph = TwoBranches();
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, {2, 0, 1, 3, 4});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("topological"));
  EXPECT_FALSE(OptimizeSchedule(graph, {0, 1, 2, 3}).ok());
}

TEST(OptimizeScheduleTest, RejectsAnInconsistentGraph) {
  DataflowGraph graph = TwoBranches();
  graph.values[1].consumers.clear();
  EXPECT_FALSE(OptimizeSchedule(graph, {0, 1, 2, 3, 4}).ok());
}

TEST(OptimizeScheduleTest, EmptyGraph) {
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(DataflowGraph{}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->peak, 0);
  EXPECT_TRUE(result->proven_optimal);
}

// The exact search against enumeration of every topological order.
TEST(OptimizeScheduleTest, MatchesBruteForceOnRandomSmallGraphs) {
  int compared = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed);
    const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 30'000);
    if (!best.has_value()) continue;
    ++compared;
    absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
    ASSERT_TRUE(given.ok()) << given.status();
    absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectSound(graph, *given, *result);
    EXPECT_EQ(result->peak, *best) << "seed " << seed;
    EXPECT_TRUE(result->proven_optimal) << "seed " << seed;
    EXPECT_EQ(result->lower_bound, *best) << "seed " << seed;
  }
  EXPECT_GE(compared, 200);
}

// The same with every node in one segment (no chokepoint to lean on).
TEST(OptimizeScheduleTest, MatchesBruteForceOnWideRandomGraphs) {
  int compared = 0;
  for (uint64_t seed = 1000; seed < 1200; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.max_inputs = 2, .max_outputs = 3});
    const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 100'000);
    if (!best.has_value()) continue;
    ++compared;
    absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
    ASSERT_TRUE(given.ok()) << given.status();
    absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->peak, *best) << "seed " << seed;
    EXPECT_TRUE(result->proven_optimal) << "seed " << seed;
  }
  EXPECT_GE(compared, 100);
}

// Adds chains of 1-3 nodes that read nothing at first (like ConstantOfShape,
// then Unsqueeze), each feeding one random node: floating groups.
DataflowGraph WithWeightChains(DataflowGraph graph, uint64_t seed, int max_extra_nodes) {
  std::mt19937_64 random(seed);
  auto uniform = [&random](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  const int core_nodes = static_cast<int>(graph.nodes.size());
  int added = 0;
  while (added < max_extra_nodes) {
    const int length = static_cast<int>(std::min<int64_t>(uniform(1, 3), max_extra_nodes - added));
    int previous = -1;
    for (int i = 0; i < length; ++i) {
      graph.values.push_back({.bytes = uniform(1, 400)});
      Node node{.outputs = {static_cast<int>(graph.values.size()) - 1}};
      if (previous != -1) node.inputs.push_back(previous);
      previous = node.outputs[0];
      graph.nodes.push_back(std::move(node));
    }
    graph.nodes[uniform(0, core_nodes - 1)].inputs.push_back(previous);
    added += length;
  }
  ConnectValues(graph);
  return graph;
}

TEST(OptimizeScheduleTest, MatchesBruteForceWithFloatingWeightChains) {
  int compared = 0;
  for (uint64_t seed = 3000; seed < 3300; ++seed) {
    DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 5, .max_nodes = 9});
    // No unread graph input: they turn floating groups off.
    for (Value& value : graph.values) {
      if (value.producer == -1 && value.consumers.empty()) value.is_graph_output = true;
    }
    graph = WithWeightChains(std::move(graph), seed, 5);
    const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 50'000);
    if (!best.has_value()) continue;
    ++compared;
    absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
    ASSERT_TRUE(given.ok()) << given.status();
    absl::StatusOr<ScheduleResult> result =
        OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectSound(graph, *given, *result);
    EXPECT_EQ(result->peak, *best) << "seed " << seed;
    EXPECT_TRUE(result->proven_optimal) << "seed " << seed;
  }
  EXPECT_GE(compared, 100);
}

TEST(OptimizeScheduleTest, RunsAShrinkingWeightChainWhereLittleIsLive) {
  // A chain in -> A -> B -> C -> D with big values between A-B and C-D, and a
  // weight chain W (2000 bytes) -> R (1 byte) that only D reads. Gluing W, R
  // right before D would hold 2000 bytes next to c: they must run early.
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}, .name = "A"},
                                {.inputs = {1}, .outputs = {2}, .name = "B"},
                                {.inputs = {2}, .outputs = {3}, .name = "C"},
                                {.inputs = {3, 6}, .outputs = {4}, .name = "D"},
                                {.outputs = {5}, .name = "W"},
                                {.inputs = {5}, .outputs = {6}, .name = "R"}},
                      .values = {{.bytes = 1},
                                 {.bytes = 1000},
                                 {.bytes = 1},
                                 {.bytes = 1000},
                                 {.bytes = 1, .is_graph_output = true},
                                 {.bytes = 2000},
                                 {.bytes = 1}}};
  ConnectValues(graph);
  const std::vector<int> given = {0, 1, 2, 4, 5, 3};
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, given, {.time_limit = absl::Seconds(60)});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, given, *result);
  EXPECT_EQ(result->given_peak, 1000 + 2000 + 1);
  EXPECT_EQ(result->peak, *testing::BruteForceMinPeak(graph, 1000));
  EXPECT_EQ(result->peak, 1 + 2000 + 1);  // W, R first, while only `in` is live.
  EXPECT_TRUE(result->proven_optimal);
}

TEST(OptimizeScheduleTest, NeverWorseThanGivenOnLargerRandomGraphs) {
  std::mt19937_64 random(11);
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const DataflowGraph graph = testing::RandomDag(
        seed, {.min_nodes = 30, .max_nodes = 300, .max_inputs = 3, .max_outputs = 3});
    const std::vector<int> given = testing::RandomTopologicalOrder(graph, random);
    for (absl::Duration limit : {absl::ZeroDuration(), absl::Milliseconds(20)}) {
      absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, given, {.time_limit = limit});
      ASSERT_TRUE(result.ok()) << result.status();
      ExpectSound(graph, given, *result);
    }
  }
}

TEST(OptimizeScheduleTest, ProvesTransformerChainsOptimal) {
  const DataflowGraph graph = testing::TransformerChain(50);
  absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *given, *result);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(OptimizeScheduleTest, MovesWeightsListedFirstToTheirReaders) {
  const DataflowGraph graph = testing::TransformerChain(30, /*weights_first=*/true);
  absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<ScheduleResult> result =
      OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *given, *result);
  // Given: all 60 weights live before the first block; then at most a few.
  EXPECT_LT(result->peak * 10, result->given_peak);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(OptimizeScheduleTest, ImprovesBreadthFirstInceptionModules) {
  const DataflowGraph graph = testing::InceptionChain(20);
  absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *given, *result);
  EXPECT_LT(result->peak, result->given_peak);
  EXPECT_TRUE(result->proven_optimal);
}

TEST(OptimizeScheduleTest, ImprovesRoundRobinTowersWithoutChokepoints) {
  const DataflowGraph graph = testing::ParallelTowers(8, 12);
  absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<ScheduleResult> result = OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(60)});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *given, *result);
  EXPECT_LT(result->peak, result->given_peak);
}

}  // namespace
}  // namespace footprint::scheduler
