#include "scheduler/schedule.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Builds a graph from nodes and value sizes, then connects the values.
DataflowGraph Graph(std::vector<Value> values, std::vector<Node> nodes) {
  DataflowGraph graph{.nodes = std::move(nodes), .values = std::move(values)};
  ConnectValues(graph);
  return graph;
}

TEST(SchedulePeakTest, ChainFreesEachValueAfterItsLastReader) {
  // a(10) -> n0 -> b(20) -> n1 -> c(30, graph output)
  const DataflowGraph graph = Graph(
      {{.bytes = 10}, {.bytes = 20}, {.bytes = 30, .is_graph_output = true}},
      {{.inputs = {0}, .outputs = {1}}, {.inputs = {1}, .outputs = {2}}});
  EXPECT_THAT(LiveBytesPerStep(graph, {0, 1}), ElementsAre(10 + 20, 20 + 30));
  EXPECT_EQ(SchedulePeak(graph, {0, 1}), 50);
}

TEST(SchedulePeakTest, GraphInputsAreLiveFromStepZeroUntilTheirLastReader) {
  // a(100) is read only by the last node: it is live at every step.
  //   n0: x(1) -> y(5); n1: y -> z(5); n2: a, z -> out(1, graph output)
  const DataflowGraph graph = Graph({{.bytes = 100},
                                     {.bytes = 1},
                                     {.bytes = 5},
                                     {.bytes = 5},
                                     {.bytes = 1, .is_graph_output = true}},
                                    {{.inputs = {1}, .outputs = {2}},
                                     {.inputs = {2}, .outputs = {3}},
                                     {.inputs = {0, 3}, .outputs = {4}}});
  EXPECT_THAT(LiveBytesPerStep(graph, {0, 1, 2}),
              ElementsAre(100 + 1 + 5, 100 + 5 + 5, 100 + 5 + 1));
  EXPECT_EQ(SchedulePeak(graph, {0, 1, 2}), 110);
}

TEST(SchedulePeakTest, UnreadOutputsGraphOutputsAndExtraBytes) {
  // i(10) -> n0 -> p(50, read by nobody), q(7)
  // q -> n1 -> r(3, graph output: live to the last step)
  // q -> n2 (extra 100) -> s(4);  s -> n3 -> t(2, graph output)
  const DataflowGraph graph = Graph({{.bytes = 10},
                                     {.bytes = 50},
                                     {.bytes = 7},
                                     {.bytes = 3, .is_graph_output = true},
                                     {.bytes = 4},
                                     {.bytes = 2, .is_graph_output = true}},
                                    {{.inputs = {0}, .outputs = {1, 2}},
                                     {.inputs = {2}, .outputs = {3}},
                                     {.inputs = {2}, .outputs = {4}, .extra_bytes = 100},
                                     {.inputs = {4}, .outputs = {5}}});
  EXPECT_THAT(LiveBytesPerStep(graph, {0, 1, 2, 3}),
              ElementsAre(10 + 50 + 7, 7 + 3, 7 + 3 + 4 + 100, 3 + 4 + 2));
  EXPECT_EQ(SchedulePeak(graph, {0, 1, 2, 3}), 114);
}

TEST(SchedulePeakTest, UnreadGraphInputsLiveAtStepZeroOnlyUnlessGraphOutputs) {
  // d(1000) is read by nobody: step 0 only. e(3) is also a graph output: every step.
  const DataflowGraph graph = Graph({{.bytes = 1000},
                                     {.bytes = 3, .is_graph_output = true},
                                     {.bytes = 1},
                                     {.bytes = 2},
                                     {.bytes = 0, .is_graph_output = true}},
                                    {{.inputs = {2}, .outputs = {3}}, {.inputs = {3}, .outputs = {4}}});
  EXPECT_THAT(LiveBytesPerStep(graph, {0, 1}), ElementsAre(1000 + 3 + 1 + 2, 3 + 2));
}

TEST(SchedulePeakTest, RepeatedReadsCountOnceAndEmptyGraphPeaksAtZero) {
  const DataflowGraph graph = Graph({{.bytes = 8}, {.bytes = 8, .is_graph_output = true}},
                                    {{.inputs = {0, 0}, .outputs = {1}}});
  EXPECT_EQ(SchedulePeak(graph, {0}), 16);
  EXPECT_EQ(SchedulePeak(DataflowGraph{}, {}), 0);
}

TEST(IsTopologicalOrderTest, ChecksPermutationAndDependencies) {
  const DataflowGraph graph = Graph({{.bytes = 1}, {.bytes = 1}, {.bytes = 1}},
                                    {{.inputs = {0}, .outputs = {1}}, {.inputs = {1}, .outputs = {2}}});
  EXPECT_TRUE(IsTopologicalOrder(graph, {0, 1}));
  EXPECT_FALSE(IsTopologicalOrder(graph, {1, 0}));
  EXPECT_FALSE(IsTopologicalOrder(graph, {0, 0}));
  EXPECT_FALSE(IsTopologicalOrder(graph, {0}));
  EXPECT_FALSE(IsTopologicalOrder(graph, {0, 2}));
}

TEST(StableTopologicalOrderTest, KeepsAValidOrder) {
  const DataflowGraph graph = Graph(
      {{.bytes = 1}, {.bytes = 1}, {.bytes = 1}},
      {{.inputs = {0}, .outputs = {1}}, {.inputs = {0}, .outputs = {2}}, {.inputs = {1, 2}}});
  absl::StatusOr<std::vector<int>> order = StableTopologicalOrder(graph);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(*order, ElementsAre(0, 1, 2));
}

TEST(StableTopologicalOrderTest, MovesOnlyWhatMustMove) {
  // Listed: c (reads vb), a (reads in), b (reads va), d (reads in).
  // a -> b -> c must run in that order; d keeps its place after them.
  const DataflowGraph graph = Graph({{.bytes = 1}, {.bytes = 1}, {.bytes = 1}, {.bytes = 1}},
                                    {{.inputs = {2}, .name = "c"},
                                     {.inputs = {0}, .outputs = {1}, .name = "a"},
                                     {.inputs = {1}, .outputs = {2}, .name = "b"},
                                     {.inputs = {0}, .outputs = {3}, .name = "d"}});
  absl::StatusOr<std::vector<int>> order = StableTopologicalOrder(graph);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(*order, ElementsAre(1, 2, 0, 3));
  EXPECT_TRUE(IsTopologicalOrder(graph, *order));
}

TEST(StableTopologicalOrderTest, NamesTheNodesOnACycle) {
  // start -> a <-> b: a reads b's output and b reads a's.
  const DataflowGraph graph = Graph({{.bytes = 1}, {.bytes = 1}, {.bytes = 1}, {.bytes = 1}},
                                    {{.inputs = {0}, .outputs = {1}, .name = "start"},
                                     {.inputs = {1, 3}, .outputs = {2}, .name = "a"},
                                     {.inputs = {2}, .outputs = {3}, .name = "b"}});
  absl::StatusOr<std::vector<int>> order = StableTopologicalOrder(graph);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(order.status().message(), HasSubstr("cycle"));
  EXPECT_THAT(order.status().message(), HasSubstr("'a' (node 1)"));
  EXPECT_THAT(order.status().message(), HasSubstr("'b' (node 2)"));
  EXPECT_THAT(order.status().message(), ::testing::Not(HasSubstr("start")));
}

TEST(StableTopologicalOrderTest, ReportsASelfLoop) {
  const DataflowGraph graph = Graph({{.bytes = 1}}, {{.inputs = {0}, .outputs = {0}, .name = "loop"}});
  absl::StatusOr<std::vector<int>> order = StableTopologicalOrder(graph);
  ASSERT_FALSE(order.ok());
  EXPECT_THAT(order.status().message(), HasSubstr("'loop'"));
}

TEST(ValidateGraphTest, AcceptsAConnectedGraph) {
  const DataflowGraph graph = Graph({{.bytes = 1}, {.bytes = 1}}, {{.inputs = {0, 0}, .outputs = {1}}});
  EXPECT_TRUE(ValidateGraph(graph).ok());
}

TEST(ValidateGraphTest, RejectsInconsistentGraphs) {
  DataflowGraph graph = Graph({{.bytes = 1}, {.bytes = 1}}, {{.inputs = {0}, .outputs = {1}, .name = "n"}});
  DataflowGraph wrong_producer = graph;
  wrong_producer.values[1].producer = -1;
  EXPECT_THAT(ValidateGraph(wrong_producer).message(), HasSubstr("'n' (node 0)"));
  DataflowGraph missing_consumer = graph;
  missing_consumer.values[0].consumers.clear();
  EXPECT_FALSE(ValidateGraph(missing_consumer).ok());
  DataflowGraph out_of_range = graph;
  out_of_range.nodes[0].inputs.push_back(7);
  EXPECT_THAT(ValidateGraph(out_of_range).message(), HasSubstr("out of range"));
  DataflowGraph negative = graph;
  negative.values[0].bytes = -1;
  EXPECT_THAT(ValidateGraph(negative).message(), HasSubstr("negative"));
  DataflowGraph two_writers = graph;
  two_writers.nodes.push_back({.outputs = {1}, .name = "m"});
  EXPECT_THAT(ValidateGraph(two_writers).message(), HasSubstr("written by both"));
}

}  // namespace
}  // namespace footprint::scheduler
