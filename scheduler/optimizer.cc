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

  // One graph, model and greedy memory serve every segment in turn: a long
  // model has hundreds of segments.
  const FlatGraph flat = Flatten(graph);
  Segmentation segments = SegmentOrder(flat, given_order, kJoinSegmentsUpTo);
  const int num_segments = segments.num_segments();
  std::vector<SegmentState> states(num_segments);
  // Two slots: one keeps the segment with the highest peak so far (where
  // the search starts), the other takes the next segment.
  struct Built {
    int segment = -1;
    FlatGraph graph;
    StepModelBuilder model;
  };
  Built built[2];
  int spare = 0;
  GreedyScheduler greedy;
  std::vector<int> rank;
  std::vector<int> candidate;
  std::vector<int> scratch;
  int64_t lower_bound = 0;
  size_t offset = 0;  // Of the segment in the given order.
  for (int s = 0; s < num_segments; ++s) {
    Built& slot = built[spare];
    segments.BuildGraph(s, slot.graph);
    const StepModel& model = slot.model.Build(slot.graph);
    slot.segment = s;
    const std::span<const int> nodes = segments.nodes(s);
    const int64_t passing = segments.passing_bytes(s);
    SegmentState& state = states[s];
    rank.resize(model.num_nodes);
    for (int i = 0; i < model.num_nodes; ++i) rank[i] = i;
    // The segment's nodes are in the given order, but for floating groups.
    state.order = rank;
    if (!std::equal(nodes.begin(), nodes.end(), given_order.begin() + offset)) {
      state.method = "floating-groups-to-readers";
    }
    offset += nodes.size();
    state.peak = ModelPeak(model, state.order, scratch) + passing;
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
      greedy.Schedule(model, rule, rank, candidate);
      const int64_t peak = ModelPeak(model, candidate, scratch) + passing;
      if (peak < state.peak) {
        state.order.swap(candidate);
        state.peak = peak;
        state.method = name;
      }
    }
    int64_t largest_local = 0;
    for (int64_t bytes : model.local_bytes) largest_local = std::max(largest_local, bytes);
    state.lower_bound = largest_local + passing;
    lower_bound = std::max(lower_bound, state.lower_bound);
    if (s == 0 || state.peak > states[built[1 - spare].segment].peak) spare = 1 - spare;
  }

  // The graph and model of the segment the search works on, built again
  // when it moves to one no slot holds.
  auto search_on = [&](int s) -> Built& {
    for (Built& slot : built) {
      if (slot.segment == s) return slot;
    }
    Built& slot = built[spare];
    segments.BuildGraph(s, slot.graph);
    slot.model.Build(slot.graph);
    slot.segment = s;
    return slot;
  };
  // Work on the segment that holds the peak until it is solved, nothing
  // improves it, or time is out: no other segment can lower the peak.
  while (num_segments > 0 && absl::Now() < deadline) {
    int top = 0;
    for (int s = 1; s < num_segments; ++s) {
      if (states[s].peak > states[top].peak ||
          (states[s].peak == states[top].peak && states[s].solved && !states[top].solved)) {
        top = s;
      }
    }
    SegmentState& state = states[top];
    if (state.peak <= lower_bound || state.solved) break;
    const int64_t passing = segments.passing_bytes(top);
    const int64_t good_enough = std::max<int64_t>(0, lower_bound - passing);
    Built& searched = search_on(top);
    const StepModel& model = searched.model.model();
    const bool exact_fits = model.num_nodes <= kExactSearchMaxNodes;
    ExactSearchResult exact;
    if (state.phase == Phase::kQuickExact) {
      // Most segments are narrow: a small exact search settles them at once.
      state.phase = Phase::kWindows;
      if (!exact_fits) continue;
      exact = ExactSearch(model, {.upper_bound = state.peak - passing,
                                  .good_enough = good_enough,
                                  .deadline = deadline,
                                  .max_states = kQuickExactStates});
    } else if (state.phase == Phase::kWindows) {
      // With at most half the time left: windows are cheap, and a lower peak
      // to beat prunes the full exact search that follows.
      state.phase = Phase::kFullExact;
      if (ImproveByWindows(searched.graph, state.order, good_enough,
                           absl::Now() + (deadline - absl::Now()) / 2)) {
        state.peak = ModelPeak(model, state.order) + passing;
        state.method = state.method == "given" ? "windows" : state.method + "+windows";
      }
      continue;
    } else if (state.phase == Phase::kFullExact && exact_fits) {
      state.phase = Phase::kStuck;
      exact = ExactSearch(model, {.upper_bound = state.peak - passing,
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
  for (int s = 0; s < num_segments; ++s) {
    const std::span<const int> nodes = segments.nodes(s);
    for (int local : states[s].order) order.push_back(nodes[local]);
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
    result.algorithm = absl::StrCat(absl::StrJoin(methods, ", "), " over ", num_segments,
                                    num_segments == 1 ? " segment" : " segments");
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
