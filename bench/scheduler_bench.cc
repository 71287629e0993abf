// Times StableTopologicalOrder + OptimizeSchedule on model-sized dataflow
// graphs and prints, per graph: nodes, given peak, optimized peak, reduction,
// the proven lower bound, whether the peak is proven optimal, and seconds
// (the fastest of --repeat runs). Exits with 1 when a graph takes longer than
// --max_seconds.
//
// Usage: scheduler_bench [--time_limit_ms=1000] [--max_seconds=1] [--repeat=1]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "scheduler/optimizer.h"
#include "scheduler/schedule.h"
#include "scheduler/testing/graphs.h"

namespace {

using footprint::scheduler::DataflowGraph;
namespace testing = footprint::scheduler::testing;

struct BenchGraph {
  std::string name;
  std::function<DataflowGraph()> build;
};

}  // namespace

int main(int argc, char** argv) {
  int64_t time_limit_ms = 1000;
  double max_seconds = 1.0;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--time_limit_ms=", 16) == 0) {
      time_limit_ms = std::atoll(argv[i] + 16);
    } else if (std::strncmp(argv[i], "--max_seconds=", 14) == 0) {
      max_seconds = std::atof(argv[i] + 14);
    } else if (std::strncmp(argv[i], "--repeat=", 9) == 0) {
      repeat = std::max(1, std::atoi(argv[i] + 9));
    } else {
      std::fprintf(stderr, "scheduler_bench: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const std::vector<BenchGraph> graphs = {
      {"transformer-chain (2000 blocks x 9)", [] { return testing::TransformerChain(2000); }},
      {"transformer-weights-first (2000 x 11)", [] { return testing::TransformerChain(2000, true); }},
      {"inception-breadth-first (1286 x 14)", [] { return testing::InceptionChain(1286); }},
      {"parallel-towers (100 x 179, 1 join)", [] { return testing::ParallelTowers(100, 179); }},
      {"parallel-towers (8 x 12, 1 join)", [] { return testing::ParallelTowers(8, 12); }},
  };
  std::printf("%-38s %7s %12s %12s %9s %12s %6s %8s  %s\n", "graph", "nodes", "given_peak",
              "peak", "reduction", "lower_bound", "proven", "seconds", "algorithm");
  int status = 0;
  for (const BenchGraph& bench : graphs) {
    const DataflowGraph graph = bench.build();
    absl::StatusOr<footprint::scheduler::ScheduleResult> result;
    double seconds = 0;
    for (int run = 0; run < repeat; ++run) {
      const absl::Time start = absl::Now();
      absl::StatusOr<std::vector<int>> given = footprint::scheduler::StableTopologicalOrder(graph);
      if (!given.ok()) {
        std::fprintf(stderr, "%s: %s\n", bench.name.c_str(), given.status().ToString().c_str());
        return 2;
      }
      result = footprint::scheduler::OptimizeSchedule(
          graph, *given, {.time_limit = absl::Milliseconds(time_limit_ms)});
      const double run_seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", bench.name.c_str(), result.status().ToString().c_str());
        return 2;
      }
      seconds = run == 0 ? run_seconds : std::min(seconds, run_seconds);
    }
    const double reduction =
        result->given_peak == 0 ? 0.0 : 100.0 * (result->given_peak - result->peak) / result->given_peak;
    std::printf("%-38s %7zu %12lld %12lld %8.1f%% %12lld %6s %8.3f  %s\n", bench.name.c_str(),
                graph.nodes.size(), static_cast<long long>(result->given_peak),
                static_cast<long long>(result->peak), reduction,
                static_cast<long long>(result->lower_bound), result->proven_optimal ? "yes" : "no",
                seconds, result->algorithm.c_str());
    if (seconds > max_seconds) {
      std::printf("  ^ over the %.2f s target\n", max_seconds);
      status = 1;
    }
  }
  return status;
}
