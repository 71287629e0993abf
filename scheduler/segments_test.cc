#include "scheduler/segments.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/schedule.h"
#include "scheduler/testing/brute_force.h"
#include "scheduler/testing/graphs.h"

namespace footprint::scheduler {
namespace {

using ::testing::ElementsAre;

TEST(FindChokepointsTest, ForkAndJoinOfADiamondButNotItsBranches) {
  // fork -> left, right -> join
  DataflowGraph graph{
      .nodes = {{.inputs = {0}, .outputs = {1}, .name = "fork"},
                {.inputs = {1}, .outputs = {2}, .name = "left"},
                {.inputs = {1}, .outputs = {3}, .name = "right"},
                {.inputs = {2, 3}, .outputs = {4}, .name = "join"}},
      .values = {{.bytes = 1}, {.bytes = 1}, {.bytes = 1}, {.bytes = 1}, {.bytes = 1}}};
  ConnectValues(graph);
  EXPECT_THAT(FindChokepoints(graph, {0, 1, 2, 3}), ElementsAre(true, false, false, true));
  EXPECT_THAT(FindChokepoints(graph, {0, 2, 1, 3}), ElementsAre(true, false, false, true));
}

TEST(FindChokepointsTest, IndependentNodesAreNotChokepoints) {
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}}, {.inputs = {0}, .outputs = {2}}},
                      .values = {{.bytes = 1}, {.bytes = 1}, {.bytes = 1}}};
  ConnectValues(graph);
  EXPECT_THAT(FindChokepoints(graph, {0, 1}), ElementsAre(false, false));
}

TEST(FindChokepointsTest, EveryNodeOfAChainAndEveryResidualAdd) {
  const DataflowGraph graph = testing::TransformerChain(3);
  std::vector<int> order(graph.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const std::vector<bool> chokepoints = FindChokepoints(graph, order);
  // Inside a block: Mul, ReduceMean, Sqrt, Div, Scale, MatMul, Gelu, MatMul, Add are all
  // on the one path, except that x skips over the first four to reach Div and Add.
  for (int b = 0; b < 3; ++b) {
    EXPECT_TRUE(chokepoints[b * 9 + 0]) << b;  // norm/Mul: everything before feeds it.
    EXPECT_TRUE(chokepoints[b * 9 + 8]) << b;  // The residual Add.
  }
}

TEST(FindFloatingGroupsTest, AWeightChainFeedingOneNodeIsOneGroup) {
  // in -> A -> a;  W -> w (64) -> Unsqueeze -> u (64);  B reads a and u.
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}, .name = "A"},
                                {.outputs = {2}, .name = "W"},
                                {.inputs = {2}, .outputs = {3}, .name = "Unsqueeze"},
                                {.inputs = {1, 3}, .outputs = {4}, .name = "B"}},
                      .values = {{.bytes = 100},
                                 {.bytes = 100},
                                 {.bytes = 64},
                                 {.bytes = 64},
                                 {.bytes = 100, .is_graph_output = true}}};
  ConnectValues(graph);
  EXPECT_THAT(FindFloatingGroups(graph, {1, 2, 0, 3}), ElementsAre(-1, 2, 2, -1));
  // They are placed right before B, and A becomes a chokepoint again.
  const std::vector<Segment> segments = SplitIntoSegments(graph, {1, 2, 0, 3}, 1);
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_THAT(segments[0].nodes, ElementsAre(0));
  EXPECT_THAT(segments[1].nodes, ElementsAre(1, 2, 3));
}

TEST(FindFloatingGroupsTest, AChainThatShrinksABigWeightStaysFree) {
  // W makes 2000 bytes that R reduces to 1 for B (whose own step is 1 byte):
  // running W, R right before B could cost far more than B's step, so R is
  // not glued; W alone is (R is its only reader, and W's step is below R's).
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}, .name = "A"},
                                {.outputs = {2}, .name = "W"},
                                {.inputs = {2}, .outputs = {3}, .name = "R"},
                                {.inputs = {1, 3}, .outputs = {4}, .name = "B"}},
                      .values = {{.bytes = 1},
                                 {.bytes = 1000},
                                 {.bytes = 2000},
                                 {.bytes = 1},
                                 {.bytes = 1, .is_graph_output = true}}};
  ConnectValues(graph);
  EXPECT_THAT(FindFloatingGroups(graph, {1, 2, 0, 3}), ElementsAre(-1, 1, -1, -1));
}

TEST(FindFloatingGroupsTest, NoneWhenAGraphInputIsReadByNobody) {
  DataflowGraph graph{.nodes = {{.outputs = {1}}, {.inputs = {1}, .outputs = {2}}},
                      .values = {{.bytes = 5}, {.bytes = 1}, {.bytes = 1, .is_graph_output = true}}};
  ConnectValues(graph);
  EXPECT_THAT(FindFloatingGroups(graph, {0, 1}), ElementsAre(-1, -1));
  graph.values[0].bytes = 0;
  EXPECT_THAT(FindFloatingGroups(graph, {0, 1}), ElementsAre(0, -1));
}

// The contract of SplitIntoSegments: any local orders, concatenated, peak at
// the max over segments of the local peak plus the passing bytes.
TEST(SplitIntoSegmentsTest, PeakOfConcatenatedOrdersIsTheMaxOverSegments) {
  std::mt19937_64 random(7);
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const DataflowGraph graph =
        testing::RandomDag(seed, {.min_nodes = 5, .max_nodes = 40, .shuffle_nodes = seed % 2 == 0});
    ASSERT_TRUE(ValidateGraph(graph).ok()) << seed;
    const std::vector<int> given = testing::RandomTopologicalOrder(graph, random);
    for (int join_up_to : {1, 6, 1000}) {
      const std::vector<Segment> segments = SplitIntoSegments(graph, given, join_up_to);
      std::vector<int> order;
      int64_t expected = 0;
      for (const Segment& segment : segments) {
        ASSERT_TRUE(ValidateGraph(segment.graph).ok()) << seed;
        const std::vector<int> local = testing::RandomTopologicalOrder(segment.graph, random);
        for (int n : local) order.push_back(segment.nodes[n]);
        expected = std::max(expected, SchedulePeak(segment.graph, local) + segment.passing_bytes);
      }
      ASSERT_TRUE(IsTopologicalOrder(graph, order)) << seed;
      EXPECT_EQ(SchedulePeak(graph, order), expected) << "seed " << seed << " join " << join_up_to;
    }
  }
}

// The same contract holds for any cut, and ExtractPositions builds the same part.
TEST(SplitAtPositionsTest, AnyCutKeepsThePeakFormula) {
  std::mt19937_64 random(9);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 2, .max_nodes = 40});
    const std::vector<int> given = testing::RandomTopologicalOrder(graph, random);
    const int num_nodes = static_cast<int>(given.size());
    std::vector<int> starts = {0};
    for (int p = 1; p < num_nodes; ++p) {
      if (random() % 4 == 0) starts.push_back(p);
    }
    const std::vector<Segment> segments = SplitAtPositions(graph, given, starts);
    ASSERT_EQ(segments.size(), starts.size());
    std::vector<int> order;
    int64_t expected = 0;
    for (size_t s = 0; s < segments.size(); ++s) {
      const Segment& segment = segments[s];
      ASSERT_TRUE(ValidateGraph(segment.graph).ok()) << seed;
      const std::vector<int> local = testing::RandomTopologicalOrder(segment.graph, random);
      for (int n : local) order.push_back(segment.nodes[n]);
      expected = std::max(expected, SchedulePeak(segment.graph, local) + segment.passing_bytes);
      const int end = s + 1 < starts.size() ? starts[s + 1] : num_nodes;
      const Segment alone = ExtractPositions(graph, given, starts[s], end);
      EXPECT_EQ(alone.nodes, segment.nodes) << seed;
      EXPECT_EQ(alone.passing_bytes, segment.passing_bytes) << seed;
      EXPECT_EQ(SchedulePeak(alone.graph, local), SchedulePeak(segment.graph, local)) << seed;
    }
    ASSERT_TRUE(IsTopologicalOrder(graph, order)) << seed;
    EXPECT_EQ(SchedulePeak(graph, order), expected) << "seed " << seed;
  }
}

TEST(SplitIntoSegmentsTest, ValuesPassingOverASegmentAreCounted) {
  // in(1000) is read by n0 and by the last node n3: while n1 and n2 run, it
  // only passes over them. Every node here is a chokepoint.
  DataflowGraph graph{.nodes = {{.inputs = {0}, .outputs = {1}},
                                {.inputs = {1}, .outputs = {2}},
                                {.inputs = {2}, .outputs = {3}},
                                {.inputs = {0, 3}, .outputs = {4}}},
                      .values = {{.bytes = 1000},
                                 {.bytes = 1},
                                 {.bytes = 1},
                                 {.bytes = 1},
                                 {.bytes = 1, .is_graph_output = true}}};
  ConnectValues(graph);
  const std::vector<Segment> segments = SplitIntoSegments(graph, {0, 1, 2, 3}, 1);
  ASSERT_EQ(segments.size(), 4u);
  EXPECT_EQ(segments[0].passing_bytes, 0);
  EXPECT_EQ(segments[1].passing_bytes, 1000);
  EXPECT_EQ(segments[2].passing_bytes, 1000);
  EXPECT_EQ(segments[3].passing_bytes, 0);
}

}  // namespace
}  // namespace footprint::scheduler
