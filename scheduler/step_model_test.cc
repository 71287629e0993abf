#include "scheduler/step_model.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/schedule.h"
#include "scheduler/testing/brute_force.h"
#include "scheduler/testing/graphs.h"

namespace footprint::scheduler {
namespace {

std::vector<int> SortedUnique(std::vector<int> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  return items;
}

std::vector<int> Items(std::span<const int> list) { return {list.begin(), list.end()}; }

// The flat lists against the definitions in step_model.h, written plainly.
TEST(BuildStepModelTest, ListsAreTheDistinctNeighboursInIncreasingOrder) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 1, .max_nodes = 40});
    const StepModel model = BuildStepModel(graph);
    ASSERT_EQ(model.num_nodes, static_cast<int>(graph.nodes.size()));
    ASSERT_EQ(model.readers.size(), static_cast<int>(graph.values.size()));
    std::vector<std::vector<int>> successors(graph.nodes.size());
    for (int n = 0; n < model.num_nodes; ++n) {
      std::vector<int> predecessors;
      std::vector<int> inputs;
      for (int v : graph.nodes[n].inputs) {
        if (graph.values[v].producer != -1) {
          predecessors.push_back(graph.values[v].producer);
          successors[graph.values[v].producer].push_back(n);
        }
        if (graph.values[v].bytes > 0) inputs.push_back(v);
      }
      EXPECT_EQ(Items(model.predecessors[n]), SortedUnique(predecessors)) << seed;
      EXPECT_EQ(Items(model.inputs[n]), SortedUnique(inputs)) << seed;
    }
    for (int n = 0; n < model.num_nodes; ++n) {
      EXPECT_EQ(Items(model.successors[n]), SortedUnique(successors[n])) << seed;
    }
    for (int v = 0; v < model.readers.size(); ++v) {
      EXPECT_EQ(Items(model.readers[v]), SortedUnique(graph.values[v].consumers)) << seed;
    }
  }
}

TEST(ModelPeakTest, EqualsSchedulePeakStepByStep) {
  std::mt19937_64 random(3);
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const DataflowGraph graph = testing::RandomDag(
        seed, {.min_nodes = 0, .max_nodes = 30, .shuffle_nodes = seed % 2 == 0});
    const StepModel model = BuildStepModel(graph);
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::vector<int> order = testing::RandomTopologicalOrder(graph, random);
      EXPECT_EQ(ModelPeak(model, order), SchedulePeak(graph, order)) << seed;
      EXPECT_EQ(ModelLiveBytesPerStep(model, order), LiveBytesPerStep(graph, order)) << seed;
    }
  }
}

}  // namespace
}  // namespace footprint::scheduler
