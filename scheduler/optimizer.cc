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

// The given order cut into segments at chokepoints: each segment scheduled
// greedily, then the searches spent on the segment that holds the peak.
class SegmentedOptimizer {
 public:
  SegmentedOptimizer(const DataflowGraph& graph, const std::vector<int>& given_order, absl::Time deadline)
      : given_order_(given_order),
        deadline_(deadline),
        flat_(Flatten(graph)),
        segments_(SegmentOrder(flat_, given_order, kJoinSegmentsUpTo)),
        states_(segments_.num_segments()) {}

  // Every segment's best greedy order, its peak and lower bound.
  void ScheduleSegmentsGreedily() {
    size_t offset = 0;  // Of the segment in the given order.
    for (int s = 0; s < segments_.num_segments(); ++s) {
      offset = ScheduleSegment(s, offset);
      if (s == 0 || states_[s].peak > states_[built_[1 - spare_].segment].peak) spare_ = 1 - spare_;
    }
  }

  // Works on the segment that holds the peak until it is solved, nothing
  // improves it, or time is out: no other segment can lower the peak.
  void SearchThePeakSegment() {
    while (segments_.num_segments() > 0 && absl::Now() < deadline_ && SearchStep(PeakSegment())) {
    }
  }

  // The segments' orders as one order of the graph's nodes, and the methods
  // that made them (sorted, once each).
  std::vector<int> AssembledOrder(std::set<std::string>& methods) const {
    std::vector<int> order;
    order.reserve(given_order_.size());
    for (int s = 0; s < segments_.num_segments(); ++s) {
      const std::span<const int> nodes = segments_.nodes(s);
      for (int local : states_[s].order) order.push_back(nodes[local]);
      if (states_[s].method != "given") methods.insert(states_[s].method);
    }
    return order;
  }

  int64_t SegmentsPeak() const {
    int64_t peak = 0;
    for (const SegmentState& state : states_) peak = std::max(peak, state.peak);
    return peak;
  }
  int64_t lower_bound() const { return lower_bound_; }
  int num_segments() const { return segments_.num_segments(); }

 private:
  // One graph, model and greedy memory serve every segment in turn: a long
  // model has hundreds of segments. Two slots: one keeps the segment with
  // the highest peak so far (where the search starts), the other takes the next.
  struct Built {
    int segment = -1;
    FlatGraph graph;
    StepModelBuilder model;
  };

  // Segment `s`, which starts at `offset` in the given order: the best of the
  // given order and the greedy rules. Returns the next segment's offset.
  size_t ScheduleSegment(int s, size_t offset) {
    Built& slot = built_[spare_];
    segments_.BuildGraph(s, slot.graph);
    const StepModel& model = slot.model.Build(slot.graph);
    slot.segment = s;
    const std::span<const int> nodes = segments_.nodes(s);
    const int64_t passing = segments_.passing_bytes(s);
    SegmentState& state = states_[s];
    rank_.resize(model.num_nodes);
    for (int i = 0; i < model.num_nodes; ++i) rank_[i] = i;
    // The segment's nodes are in the given order, but for floating groups.
    state.order = rank_;
    if (!std::equal(nodes.begin(), nodes.end(), given_order_.begin() + static_cast<std::ptrdiff_t>(offset))) {
      state.method = "floating-groups-to-readers";
    }
    state.peak = ModelPeak(model, state.order, scratch_) + passing;
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
      greedy_.Schedule(model, rule, rank_, candidate_);
      const int64_t peak = ModelPeak(model, candidate_, scratch_) + passing;
      if (peak < state.peak) {
        state.order.swap(candidate_);
        state.peak = peak;
        state.method = name;
      }
    }
    int64_t largest_local = 0;
    for (int64_t bytes : model.local_bytes) largest_local = std::max(largest_local, bytes);
    state.lower_bound = largest_local + passing;
    lower_bound_ = std::max(lower_bound_, state.lower_bound);
    return offset + nodes.size();
  }

  // The segment with the highest peak (a solved one on ties).
  int PeakSegment() const {
    int top = 0;
    for (int s = 1; s < segments_.num_segments(); ++s) {
      if (states_[s].peak > states_[top].peak ||
          (states_[s].peak == states_[top].peak && states_[s].solved && !states_[top].solved)) {
        top = s;
      }
    }
    return top;
  }

  // The graph and model of segment `s`, built again when no slot holds it.
  Built& SlotFor(int s) {
    for (Built& slot : built_) {
      if (slot.segment == s) return slot;
    }
    Built& slot = built_[spare_];
    segments_.BuildGraph(s, slot.graph);
    slot.model.Build(slot.graph);
    slot.segment = s;
    return slot;
  }

  // The next phase on segment `top`; false when the search should end.
  bool SearchStep(int top) {
    SegmentState& state = states_[top];
    if (state.peak <= lower_bound_ || state.solved) return false;
    const int64_t passing = segments_.passing_bytes(top);
    const int64_t good_enough = std::max<int64_t>(0, lower_bound_ - passing);
    Built& searched = SlotFor(top);
    const StepModel& model = searched.model.model();
    const bool exact_fits = model.num_nodes <= kExactSearchMaxNodes;
    ExactSearchResult exact;
    if (state.phase == Phase::kQuickExact) {
      // Most segments are narrow: a small exact search settles them at once.
      state.phase = Phase::kWindows;
      if (!exact_fits) return true;
      exact = ExactSearch(model, {.upper_bound = state.peak - passing,
                                  .good_enough = good_enough,
                                  .deadline = deadline_,
                                  .max_states = kQuickExactStates});
    } else if (state.phase == Phase::kWindows) {
      // With at most half the time left: windows are cheap, and a lower peak
      // to beat prunes the full exact search that follows.
      state.phase = Phase::kFullExact;
      if (ImproveByWindows(searched.graph, state.order, good_enough, absl::Now() + (deadline_ - absl::Now()) / 2)) {
        state.peak = ModelPeak(model, state.order) + passing;
        state.method = state.method == "given" ? "windows" : state.method + "+windows";
      }
      return true;
    } else if (state.phase == Phase::kFullExact && exact_fits) {
      state.phase = Phase::kStuck;
      exact = ExactSearch(model, {.upper_bound = state.peak - passing,
                                  .good_enough = good_enough,
                                  .deadline = deadline_});
    } else {
      return false;  // Nothing more to try on the segment that holds the peak.
    }
    if (exact.outcome == ExactOutcome::kStopped) return true;
    state.solved = true;
    if (exact.outcome == ExactOutcome::kFound) {
      state.order = exact.order;
      state.peak = exact.peak + passing;
      state.method = "exact";
    }
    // Solved: no schedule of this segment, hence of the graph, peaks lower
    // (or it stopped at good_enough, which is no higher than the bound).
    lower_bound_ = std::max(lower_bound_, state.peak);
    return true;
  }

  const std::vector<int>& given_order_;
  const absl::Time deadline_;
  const FlatGraph flat_;
  Segmentation segments_;
  std::vector<SegmentState> states_;
  Built built_[2];
  int spare_ = 0;
  GreedyScheduler greedy_;
  std::vector<int> rank_;       // Scratch of ScheduleSegment.
  std::vector<int> candidate_;  // Scratch of ScheduleSegment.
  std::vector<int> scratch_;    // Scratch of ModelPeak.
  int64_t lower_bound_ = 0;
};

}  // namespace

absl::StatusOr<ScheduleResult> OptimizeSchedule(const DataflowGraph& graph,
                                                const std::vector<int>& given_order,
                                                const ScheduleOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status status = ValidateGraph(graph); !status.ok()) return status;
  if (!IsTopologicalOrder(graph, given_order)) {
    return absl::InvalidArgumentError(
        "the given order is not a topological order of the graph's nodes "
        "(StableTopologicalOrder gives one)");
  }
  ScheduleResult result;
  result.given_peak = SchedulePeak(graph, given_order);
  SegmentedOptimizer optimizer(graph, given_order, start + options.time_limit);
  optimizer.ScheduleSegmentsGreedily();
  optimizer.SearchThePeakSegment();

  std::set<std::string> methods;
  std::vector<int> order = optimizer.AssembledOrder(methods);
  const int64_t peak = SchedulePeak(graph, order);
  const int64_t segments_peak = optimizer.SegmentsPeak();
  if (!IsTopologicalOrder(graph, order) || peak != segments_peak) {
    return absl::InternalError(absl::StrCat("the schedule optimizer assembled an invalid order (peak ",
                                            peak, ", segments say ", segments_peak, ")"));
  }
  const int num_segments = optimizer.num_segments();
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
  result.lower_bound = std::min(optimizer.lower_bound(), result.peak);
  result.proven_optimal = result.peak <= optimizer.lower_bound();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

}  // namespace footprint::scheduler
