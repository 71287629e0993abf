#include "scheduler/optimizer.h"

#include <algorithm>
#include <set>
#include <span>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "scheduler/exact_search.h"
#include "scheduler/greedy.h"
#include "scheduler/schedule.h"
#include "scheduler/segments.h"
#include "scheduler/step_model.h"
#include "scheduler/window_search.h"

namespace footprint::scheduler {
namespace {

// Neighbouring parts between chokepoints are joined up to this many nodes:
// fewer, larger segments cost less to set up, and the exact search handles
// this size at once when the parts are chained.
constexpr int kJoinSegmentsUpTo = 24;

// A small exact search settles most segments; beyond this many executed sets
// it waits until the cheaper windows have had a go.
constexpr int64_t kQuickExactStates = 20'000;

// What is tried, in turn, on the segment that holds the peak.
enum class Phase { kQuickExact, kWindows, kFullExact, kStuck };

struct SegmentState {
  std::vector<int> order;            // Local node indices.
  int64_t peak = 0;                  // Including passing bytes.
  int64_t lower_bound = 0;           // Including passing bytes.
  bool solved = false;               // The exact search settled it.
  Phase phase = Phase::kQuickExact;  // What to try next on it.
  std::string method = "given";      // What produced `order`.
};

}  // namespace

absl::StatusOr<ScheduleResult> OptimizeSchedule(const DataflowGraph& graph,
                                                const std::vector<int>& given_order,
                                                const ScheduleOptions& options) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.time_limit;
  if (absl::Status status = ValidateGraph(graph); !status.ok()) return status;
  if (!IsTopologicalOrder(graph, given_order)) {
    return absl::InvalidArgumentError(
        "the given order is not a topological order of the graph's nodes "
        "(StableTopologicalOrder gives one)");
  }
  ScheduleResult result;
  result.given_peak = SchedulePeak(graph, given_order);

  const std::vector<FlatSegment> segments =
      SplitIntoSegments(Flatten(graph), given_order, kJoinSegmentsUpTo);
  std::vector<StepModel> models;
  std::vector<SegmentState> states(segments.size());
  models.reserve(segments.size());
  int64_t lower_bound = 0;
  size_t offset = 0;  // Of the segment in the given order.
  for (size_t s = 0; s < segments.size(); ++s) {
    const FlatSegment& segment = segments[s];
    const StepModel& model = models.emplace_back(BuildStepModel(segment.graph));
    SegmentState& state = states[s];
    std::vector<int> rank(model.num_nodes);
    for (int i = 0; i < model.num_nodes; ++i) rank[i] = i;
    // The segment's nodes are in the given order, but for floating groups.
    state.order = rank;
    if (!std::equal(segment.nodes.begin(), segment.nodes.end(), given_order.begin() + offset)) {
      state.method = "floating-groups-to-readers";
    }
    offset += segment.nodes.size();
    state.peak = ModelPeak(model, state.order) + segment.passing_bytes;
    // When every node reads the one before it, the given order is the only
    // one: every rule would return it.
    bool only_order = true;
    for (int i = 1; i < model.num_nodes && only_order; ++i) {
      const std::span<const int> predecessors = model.predecessors[i];
      only_order = !predecessors.empty() && predecessors.back() == i - 1;
    }
    for (auto [rule, name] : {std::pair{GreedyRule::kLeastGrowth, "greedy-least-growth"},
                              std::pair{GreedyRule::kPeakAware, "greedy-peak-aware"},
                              std::pair{GreedyRule::kDepthFirst, "greedy-depth-first"},
                              std::pair{GreedyRule::kChains, "greedy-chains"}}) {
      if (only_order) break;
      std::vector<int> order = GreedySchedule(model, rule, rank);
      const int64_t peak = ModelPeak(model, order) + segment.passing_bytes;
      if (peak < state.peak) {
        state.order = std::move(order);
        state.peak = peak;
        state.method = name;
      }
    }
    int64_t largest_local = 0;
    for (int64_t bytes : model.local_bytes) largest_local = std::max(largest_local, bytes);
    state.lower_bound = largest_local + segment.passing_bytes;
    lower_bound = std::max(lower_bound, state.lower_bound);
  }

  // Work on the segment that holds the peak until it is solved, nothing
  // improves it, or time is out: no other segment can lower the peak.
  while (!states.empty() && absl::Now() < deadline) {
    size_t top = 0;
    for (size_t s = 1; s < states.size(); ++s) {
      if (states[s].peak > states[top].peak ||
          (states[s].peak == states[top].peak && states[s].solved && !states[top].solved)) {
        top = s;
      }
    }
    SegmentState& state = states[top];
    if (state.peak <= lower_bound || state.solved) break;
    const int64_t passing = segments[top].passing_bytes;
    const int64_t good_enough = std::max<int64_t>(0, lower_bound - passing);
    const bool exact_fits = models[top].num_nodes <= kExactSearchMaxNodes;
    ExactSearchResult exact;
    if (state.phase == Phase::kQuickExact) {
      // Most segments are narrow: a small exact search settles them at once.
      state.phase = Phase::kWindows;
      if (!exact_fits) continue;
      exact = ExactSearch(models[top], {.upper_bound = state.peak - passing,
                                        .good_enough = good_enough,
                                        .deadline = deadline,
                                        .max_states = kQuickExactStates});
    } else if (state.phase == Phase::kWindows) {
      // With at most half the time left: windows are cheap, and a lower peak
      // to beat prunes the full exact search that follows.
      state.phase = Phase::kFullExact;
      if (ImproveByWindows(segments[top].graph, state.order, good_enough,
                           absl::Now() + (deadline - absl::Now()) / 2)) {
        state.peak = ModelPeak(models[top], state.order) + passing;
        state.method = state.method == "given" ? "windows" : state.method + "+windows";
      }
      continue;
    } else if (state.phase == Phase::kFullExact && exact_fits) {
      state.phase = Phase::kStuck;
      exact = ExactSearch(models[top], {.upper_bound = state.peak - passing,
                                        .good_enough = good_enough,
                                        .deadline = deadline});
    } else {
      break;  // Nothing more to try on the segment that holds the peak.
    }
    if (exact.outcome == ExactOutcome::kStopped) continue;
    state.solved = true;
    if (exact.outcome == ExactOutcome::kFound) {
      state.order = exact.order;
      state.peak = exact.peak + passing;
      state.method = "exact";
    }
    // Solved: no schedule of this segment, hence of the graph, peaks lower
    // (or it stopped at good_enough, which is no higher than the bound).
    lower_bound = std::max(lower_bound, state.peak);
  }

  std::vector<int> order;
  order.reserve(graph.nodes.size());
  std::set<std::string> methods;
  for (size_t s = 0; s < segments.size(); ++s) {
    for (int local : states[s].order) order.push_back(segments[s].nodes[local]);
    if (states[s].method != "given") methods.insert(states[s].method);  // Sorted, once each.
  }
  const int64_t peak = SchedulePeak(graph, order);
  int64_t segments_peak = 0;
  for (const SegmentState& state : states) segments_peak = std::max(segments_peak, state.peak);
  if (!IsTopologicalOrder(graph, order) || peak != segments_peak) {
    return absl::InternalError(absl::StrCat("the schedule optimizer assembled an invalid order (peak ",
                                            peak, ", segments say ", segments_peak, ")"));
  }
  if (peak < result.given_peak) {
    result.order = std::move(order);
    result.peak = peak;
    result.algorithm = absl::StrCat(absl::StrJoin(methods, ", "), " over ", segments.size(),
                                    segments.size() == 1 ? " segment" : " segments");
  } else {
    result.order = given_order;
    result.peak = result.given_peak;
    result.algorithm = "given";
  }
  result.lower_bound = std::min(lower_bound, result.peak);
  result.proven_optimal = result.peak <= lower_bound;
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

}  // namespace footprint::scheduler
