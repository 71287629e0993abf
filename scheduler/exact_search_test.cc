#include "scheduler/exact_search.h"

#include <random>
#include <tuple>

#include "gtest/gtest.h"
#include "scheduler/greedy.h"
#include "scheduler/schedule.h"
#include "scheduler/step_model.h"
#include "scheduler/testing/brute_force.h"
#include "scheduler/testing/graphs.h"

namespace footprint::scheduler {
namespace {

// The exact search alone (no greedy start, no splitting) against enumeration.
TEST(ExactSearchTest, FindsTheLeastPeakAndProvesNothingIsLower) {
  int compared = 0;
  for (uint64_t seed = 2000; seed < 2300; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed);
    const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 30'000);
    if (!best.has_value()) continue;
    ++compared;
    const StepModel model = BuildStepModel(graph);
    const ExactSearchResult found = ExactSearch(model, {.upper_bound = *best + 1});
    ASSERT_EQ(found.outcome, ExactOutcome::kFound) << "seed " << seed;
    ASSERT_TRUE(IsTopologicalOrder(graph, found.order)) << "seed " << seed;
    EXPECT_EQ(found.peak, *best) << "seed " << seed;
    EXPECT_EQ(SchedulePeak(graph, found.order), *best) << "seed " << seed;
    EXPECT_EQ(ExactSearch(model, {.upper_bound = *best}).outcome, ExactOutcome::kNoneBelow)
        << "seed " << seed;
  }
  EXPECT_GE(compared, 150);
}

TEST(ExactSearchTest, StopsAtGoodEnough) {
  const DataflowGraph graph = testing::RandomDag(5);
  const StepModel model = BuildStepModel(graph);
  const std::optional<int64_t> best = testing::BruteForceMinPeak(graph, 1'000'000);
  ASSERT_TRUE(best.has_value());
  const int64_t ceiling = *best + 1'000'000;
  const ExactSearchResult found =
      ExactSearch(model, {.upper_bound = ceiling, .good_enough = ceiling - 1});
  ASSERT_EQ(found.outcome, ExactOutcome::kFound);
  EXPECT_LT(found.peak, ceiling);
  EXPECT_EQ(found.peak, SchedulePeak(graph, found.order));
}

TEST(ExactSearchTest, StopsAtTheStateCap) {
  // 40 independent towers: far more executed sets than the cap allows.
  const DataflowGraph graph = testing::ParallelTowers(40, 4);
  const StepModel model = BuildStepModel(graph);
  const ExactSearchResult found = ExactSearch(model, {.upper_bound = 1, .max_states = 1000});
  EXPECT_NE(found.outcome, ExactOutcome::kFound);
  const ExactSearchResult capped =
      ExactSearch(model, {.upper_bound = int64_t{1} << 60, .max_states = 50});
  EXPECT_EQ(capped.outcome, ExactOutcome::kStopped);
}

// The rules written as a plain scan over the ready nodes at every step: the
// incremental version must pick exactly the same nodes.
std::vector<int> ScanGreedy(const DataflowGraph& graph, GreedyRule rule, const std::vector<int>& rank) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const StepModel model = BuildStepModel(graph);
  std::vector<bool> done(num_nodes, false);
  std::vector<int> ready_since(num_nodes, 0);
  std::vector<int> order;
  int64_t live = model.initial_live;
  int64_t peak = 0;
  for (int step = 0; step < num_nodes; ++step) {
    int best = -1;
    std::tuple<int64_t, int64_t, int64_t> best_key;
    for (int n = 0; n < num_nodes; ++n) {
      if (done[n]) continue;
      bool ready = true;
      for (int p : model.predecessors[n]) ready = ready && done[p];
      if (!ready) continue;
      const int64_t growth = model.kept_bytes[n] - FreedBytes(model, n, done);
      const int64_t cost = live + model.run_bytes[n] + (step == 0 ? model.first_step_bytes : 0);
      std::tuple<int64_t, int64_t, int64_t> key;
      switch (rule) {
        case GreedyRule::kLeastGrowth: key = {growth, cost, rank[n]}; break;
        case GreedyRule::kPeakAware: key = {std::max(cost, peak), growth, rank[n]}; break;
        case GreedyRule::kDepthFirst: key = {-ready_since[n], growth, rank[n]}; break;
        case GreedyRule::kChains: ADD_FAILURE() << "chains are not scanned node by node"; break;
      }
      if (best == -1 || key < best_key) {
        best = n;
        best_key = key;
      }
    }
    peak = std::max(peak, live + model.run_bytes[best] + (step == 0 ? model.first_step_bytes : 0));
    live += model.kept_bytes[best] - FreedBytes(model, best, done);
    done[best] = true;
    order.push_back(best);
    for (int s : model.successors[best]) {
      bool ready = true;
      for (int p : model.predecessors[s]) ready = ready && done[p];
      if (ready) ready_since[s] = step + 1;
    }
  }
  return order;
}

TEST(GreedyScheduleTest, IncrementalRulesMatchAPlainScan) {
  std::mt19937_64 random(5);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 1, .max_nodes = 60});
    const StepModel model = BuildStepModel(graph);
    const std::vector<int> rank = testing::RandomTopologicalOrder(graph, random);
    for (GreedyRule rule : {GreedyRule::kLeastGrowth, GreedyRule::kPeakAware, GreedyRule::kDepthFirst}) {
      EXPECT_EQ(GreedySchedule(model, rule, rank), ScanGreedy(graph, rule, rank))
          << "seed " << seed << " rule " << static_cast<int>(rule);
    }
  }
  // Wide graphs: many nodes ready at once, whose keys change while they wait.
  for (int towers : {3, 12, 30}) {
    const DataflowGraph graph = testing::ParallelTowers(towers, 6);
    const StepModel model = BuildStepModel(graph);
    const std::vector<int> rank = testing::RandomTopologicalOrder(graph, random);
    for (GreedyRule rule : {GreedyRule::kLeastGrowth, GreedyRule::kPeakAware, GreedyRule::kDepthFirst}) {
      EXPECT_EQ(GreedySchedule(model, rule, rank), ScanGreedy(graph, rule, rank))
          << towers << " towers, rule " << static_cast<int>(rule);
    }
  }
}

// kChains written plainly: every ready chain simulated again at every step.
std::vector<int> PlainChains(const StepModel& model, const std::vector<int>& rank) {
  std::vector<int> remaining(model.readers.size());
  for (int v = 0; v < model.readers.size(); ++v) remaining[v] = static_cast<int>(model.readers[v].size());
  std::vector<int> missing(model.num_nodes);
  std::vector<int> ready;
  for (int n = 0; n < model.num_nodes; ++n) {
    missing[n] = static_cast<int>(model.predecessors[n].size());
    if (missing[n] == 0) ready.push_back(n);
  }
  auto chain_of = [&](int n) {
    std::vector<int> chain = {n};
    while (model.successors[chain.back()].size() == 1 &&
           model.predecessors[model.successors[chain.back()][0]].size() == 1) {
      chain.push_back(model.successors[chain.back()][0]);
    }
    return chain;
  };
  std::vector<int> order;
  while (!ready.empty()) {
    EXPECT_LE(ready.size(), 512u) << "the plain version does not give up on wide graphs";
    size_t best = 0;
    std::tuple<int64_t, int> best_key;
    for (size_t i = 0; i < ready.size(); ++i) {
      std::vector<int> left = remaining;
      int64_t live = 0;
      int64_t rise = 0;
      for (int m : chain_of(ready[i])) {
        rise = std::max(rise, live + model.run_bytes[m]);
        live += model.kept_bytes[m];
        for (int v : model.inputs[m]) {
          if (left[v] == 1 && !model.value_is_graph_output[v]) live -= model.value_bytes[v];
          --left[v];
        }
      }
      const std::tuple<int64_t, int> key = {-(rise - live), rank[ready[i]]};
      if (i == 0 || key < best_key) {
        best = i;
        best_key = key;
      }
    }
    const std::vector<int> chain = chain_of(ready[best]);
    ready.erase(ready.begin() + best);
    for (int m : chain) {
      order.push_back(m);
      for (int v : model.inputs[m]) --remaining[v];
      for (int s : model.successors[m]) {
        if (--missing[s] == 0 && std::find(chain.begin(), chain.end(), s) == chain.end()) {
          ready.push_back(s);
        }
      }
    }
  }
  return order;
}

TEST(GreedyScheduleTest, ChainsMatchAPlainSimulationOfEveryChainAtEveryStep) {
  std::mt19937_64 random(11);
  int differently_ordered = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    // Few inputs and outputs per node: many chains, some reading shared values.
    const DataflowGraph graph = testing::RandomDag(
        seed, {.min_nodes = 5, .max_nodes = 80, .max_inputs = 1 + static_cast<int>(seed % 3),
               .max_outputs = 1 + static_cast<int>(seed % 2)});
    const StepModel model = BuildStepModel(graph);
    const std::vector<int> rank = testing::RandomTopologicalOrder(graph, random);
    const std::vector<int> chains = GreedySchedule(model, GreedyRule::kChains, rank);
    const std::vector<int> plain = PlainChains(model, rank);
    EXPECT_EQ(chains, plain) << "seed " << seed;
    differently_ordered += chains != rank;
  }
  EXPECT_GT(differently_ordered, 100);
  for (int towers : {2, 9, 40}) {
    const DataflowGraph graph = testing::ParallelTowers(towers, 7);
    const StepModel model = BuildStepModel(graph);
    const std::vector<int> rank = testing::RandomTopologicalOrder(graph, random);
    EXPECT_EQ(GreedySchedule(model, GreedyRule::kChains, rank), PlainChains(model, rank)) << towers;
  }
}

TEST(GreedyScheduleTest, ChainsRunTheBiggestBranchOfAnInceptionModuleFirst) {
  // Four branches from x to a Concat: running the 256-channel pooling branch
  // first, while nothing else is held, is what the exact search finds too.
  const DataflowGraph graph = testing::InceptionChain(1);
  const StepModel model = BuildStepModel(graph);
  std::vector<int> rank(model.num_nodes);
  for (int n = 0; n < model.num_nodes; ++n) rank[n] = n;
  const std::vector<int> chains = GreedySchedule(model, GreedyRule::kChains, rank);
  ASSERT_TRUE(IsTopologicalOrder(graph, chains));
  EXPECT_EQ(graph.nodes[chains[0]].name, "mixed0/b4/maxpool");
  const ExactSearchResult exact = ExactSearch(model, {.upper_bound = int64_t{1} << 40});
  ASSERT_EQ(exact.outcome, ExactOutcome::kFound);
  EXPECT_EQ(SchedulePeak(graph, chains), exact.peak);
  EXPECT_GT(SchedulePeak(graph, GreedySchedule(model, GreedyRule::kLeastGrowth, rank)), exact.peak);
}

TEST(GreedyScheduleTest, EveryRuleGivesATopologicalOrder) {
  std::mt19937_64 random(3);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const DataflowGraph graph = testing::RandomDag(seed, {.min_nodes = 1, .max_nodes = 80});
    const StepModel model = BuildStepModel(graph);
    std::vector<int> rank = testing::RandomTopologicalOrder(graph, random);
    for (GreedyRule rule : {GreedyRule::kLeastGrowth, GreedyRule::kPeakAware,
                            GreedyRule::kDepthFirst, GreedyRule::kChains}) {
      EXPECT_TRUE(IsTopologicalOrder(graph, GreedySchedule(model, rule, rank))) << seed;
    }
  }
}

}  // namespace
}  // namespace footprint::scheduler
