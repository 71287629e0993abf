// Runs the planner over a folder of MiniMalloc CSV problems and prints, per
// instance, the heuristic-only and the time-limited figures next to the lower bound.
//
//   planner_bench DIR [--time-limit SECONDS]
//   planner_bench --synthetic BUFFERS [--time-limit SECONDS]
//
// The synthetic problem has the analyzer's shape: many short-lived buffers
// along a long schedule, a few long-lived ones (graph inputs, skip connections).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "planner/csv.h"
#include "planner/planner.h"
#include "planner/validator.h"

namespace fp = footprint::planner;

namespace {

fp::Problem Synthetic(int count) {
  fp::Problem problem;
  uint64_t state = 88172645463325252ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int i = 0; i < count; ++i) {
    const fp::Step first = i * 9 / 20;  // About 2.2 buffers per step.
    const bool long_lived = next() % 200 == 0;
    const fp::Step length = long_lived ? 1 + next() % 2000 : 1 + next() % 6;
    problem.buffers.push_back({.id = std::to_string(i),
                               .lifespan = {first, first + length},
                               .size = 64 * static_cast<fp::Bytes>(1 + next() % 4096),
                               .alignment = 64});
  }
  return problem;
}

int RunSynthetic(int count, double time_limit) {
  const fp::Problem problem = Synthetic(count);
  for (double limit : {0.0, time_limit}) {
    const absl::StatusOr<fp::PlanResult> plan = fp::Solve(problem, {.time_limit = absl::Seconds(limit)});
    if (!plan.ok()) {
      std::fprintf(stderr, "synthetic: %s\n", std::string(plan.status().message()).c_str());
      return 1;
    }
    std::printf("synthetic %d buffers, time limit %.1f s: arena %lld, lower bound %lld, ratio %.3f, %s, %.3f s (%s)\n",
                count, limit, (long long)plan->arena_bytes, (long long)plan->lower_bound,
                double(plan->arena_bytes) / double(std::max<fp::Bytes>(1, plan->lower_bound)),
                plan->proven_optimal ? "proven optimal" : "not proven", plan->seconds, plan->algorithm.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR|--synthetic BUFFERS [--time-limit SECONDS]\n", argv[0]);
    return 2;
  }
  double time_limit = 10;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--time-limit" && !absl::SimpleAtod(argv[i + 1], &time_limit)) return 2;
  }
  if (std::string(argv[1]) == "--synthetic") {
    int count = 0;
    if (argc < 3 || !absl::SimpleAtoi(argv[2], &count)) return 2;
    return RunSynthetic(count, time_limit);
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::printf("Columns: the lower bound; the portfolio alone (greedy orderings); heuristics only (--time-limit 0:\n"
              "portfolio + bounded dive); and --time-limit %g. Ratios are arena / lower bound.\n\n", time_limit);
  std::printf("%-8s %7s %9s | %6s %7s | %9s %6s %7s | %9s %6s %6s %7s %s\n", "instance", "buffers", "lower_bnd",
              "ratio", "seconds", "arena", "ratio", "seconds", "arena", "ratio", "proven", "seconds", "algorithm");
  double portfolio_ratio_sum = 0, portfolio_seconds = 0;
  double heuristic_ratio_sum = 0, ratio_sum = 0, heuristic_seconds = 0, seconds = 0;
  int at_lower_bound = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<fp::Problem> problem = fp::ParseProblemCsv(text.str());
    if (!problem.ok()) {
      std::fprintf(stderr, "%s: %s\n", file.c_str(), std::string(problem.status().message()).c_str());
      return 1;
    }
    const absl::StatusOr<fp::PlanResult> portfolio =
        fp::Solve(*problem, {.time_limit = absl::ZeroDuration(), .bounded_search_nodes = 0});
    const absl::StatusOr<fp::PlanResult> heuristic = fp::Solve(*problem, {.time_limit = absl::ZeroDuration()});
    const absl::StatusOr<fp::PlanResult> exact = fp::Solve(*problem, {.time_limit = absl::Seconds(time_limit)});
    if (!portfolio.ok() || !heuristic.ok() || !exact.ok()) {
      std::fprintf(stderr, "%s: planner failed\n", file.c_str());
      return 1;
    }
    const double portfolio_ratio = double(portfolio->arena_bytes) / double(portfolio->lower_bound);
    portfolio_ratio_sum += portfolio_ratio;
    portfolio_seconds += portfolio->seconds;
    const double heuristic_ratio = double(heuristic->arena_bytes) / double(heuristic->lower_bound);
    const double ratio = double(exact->arena_bytes) / double(exact->lower_bound);
    heuristic_ratio_sum += heuristic_ratio;
    ratio_sum += ratio;
    heuristic_seconds += heuristic->seconds;
    seconds += exact->seconds;
    at_lower_bound += exact->arena_bytes == exact->lower_bound;
    std::printf("%-8s %7zu %9lld | %6.3f %7.3f | %9lld %6.3f %7.3f | %9lld %6.3f %6s %7.3f %s\n",
                file.stem().stem().c_str(), problem->buffers.size(), (long long)exact->lower_bound, portfolio_ratio,
                portfolio->seconds, (long long)heuristic->arena_bytes, heuristic_ratio, heuristic->seconds, (long long)exact->arena_bytes,
                ratio, exact->proven_optimal ? "yes" : "no", exact->seconds, exact->algorithm.c_str());
    std::fflush(stdout);
  }
  const double n = std::max<double>(1, files.size());
  std::printf("\nportfolio alone: mean ratio %.3f, total %.3f s\n", portfolio_ratio_sum / n, portfolio_seconds);
  std::printf("heuristics only: mean ratio %.3f, total %.3f s\n", heuristic_ratio_sum / n, heuristic_seconds);
  std::printf("time limit %.1f s: mean ratio %.3f, at the lower bound on %d of %zu, total %.3f s\n", time_limit,
              ratio_sum / n, at_lower_bound, files.size(), seconds);
  return 0;
}
