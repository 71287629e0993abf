// Runs the modes of one graph on its sized values: the schedule (the
// baseline or the optimizer's order), aliasing and in-place reuse, each with
// its lower bound (graph_stages.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/memory/graph_stages.h"
#include "analyzer/memory/liveness.h"
#include "analyzer/memory/modes.h"
#include "planner/lower_bound.h"
#include "planner/problem.h"
#include "scheduler/optimizer.h"

namespace footprint {
namespace {

// The spec's lower bound of one graph under `order`, with the tensors of
// each group in `sharing` (nullptr: none) merged into one buffer as the plan
// does; `sized_bytes` holds each value's aligned size, -1 when it is unsized
// or not in the arena.
int64_t LowerBoundOf(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<int64_t>& sized_bytes,
                     const std::vector<NodeId>& order, const std::vector<int64_t>& workspace_of,
                     const std::vector<Sharing>* sharing) {
  const std::vector<planner::Lifespan> lifespans = ComputeLifespans(graph, order, rewrite);
  const std::vector<planner::Step> step_of = StepsOf(order, static_cast<int>(graph.nodes.size()));
  // Steps are dense here: the live profile's linear sweep, not LowerBound's sort.
  planner::Problem problem;
  problem.buffers.reserve(sized_bytes.size());
  std::vector<int64_t> buffer_of_value(graph.values.size(), -1);
  for (int pass = 0; pass < 2; ++pass) {  // Owners, then the values sharing their bytes.
    for (size_t id = 0; id < sized_bytes.size(); ++id) {
      if (sized_bytes[id] < 0) continue;
      const ValueId owner = sharing == nullptr ? static_cast<ValueId>(id) : (*sharing)[id].owner;
      if ((owner == static_cast<ValueId>(id)) != (pass == 0)) continue;
      if (pass == 0) {
        buffer_of_value[id] = static_cast<int64_t>(problem.buffers.size());
        problem.buffers.push_back({.lifespan = lifespans[id], .size = sized_bytes[id]});
        continue;
      }
      planner::Buffer& group = problem.buffers[buffer_of_value[owner]];
      group.lifespan.first = std::min(group.lifespan.first, lifespans[id].first);
      group.lifespan.last = std::max(group.lifespan.last, lifespans[id].last);
      group.size = std::max(group.size, sized_bytes[id]);
    }
  }
  for (size_t node = 0; node < graph.nodes.size(); ++node) {
    if (workspace_of[node] == 0) continue;
    problem.buffers.push_back({.lifespan = {step_of[node], step_of[node]}, .size = workspace_of[node]});
  }
  const std::vector<int64_t> live = planner::ComputeLiveProfile(problem).live_bytes;
  return live.empty() ? 0 : std::max<int64_t>(0, *std::max_element(live.begin(), live.end()));
}

}  // namespace

absl::Status RunScheduleMode(const GraphSizes& sizes, bool main_graph, const AnalyzeOptions& options,
                             const std::string& graph_label, GraphResult& result) {
  const IrGraph& g = result.ir;
  result.order = result.schedule.order;
  ModesSummary& modes = result.modes;
  modes.baseline_lower_bound_bytes = LowerBoundOf(g, result.rewrite, sizes.sized_bytes, result.schedule.order,
                                                  sizes.step_extra_of, /*sharing=*/nullptr);
  modes.schedule.lower_bound_bytes = modes.baseline_lower_bound_bytes;
  if (main_graph && options.optimize_schedule && g.nodes.empty()) {
    // No node, one (empty) order. The scheduler counts no step at all there,
    // where the spec still holds the graph inputs at step 0: not asked.
    modes.schedule.name = "optimized";
    modes.schedule.proven_optimal = true;
  } else if (main_graph && options.optimize_schedule) {
    const scheduler::DataflowGraph dataflow = ToDataflowGraph(g, result.rewrite, sizes.aligned_of, sizes.step_extra_of);
    absl::StatusOr<scheduler::ScheduleResult> scheduled =
        scheduler::OptimizeSchedule(dataflow, result.schedule.order, {.time_limit = options.schedule_time_limit});
    if (!scheduled.ok()) return WithPrefix(scheduled.status(), graph_label);
    result.order = scheduled->order;
    modes.schedule = ScheduleMode{
        .name = "optimized",
        .algorithm = scheduled->algorithm,
        .proven_optimal = scheduled->proven_optimal,
        // The same order has the same bound (the optimizer keeps the given order when nothing beats it).
        .lower_bound_bytes = result.order == result.schedule.order
                                 ? modes.baseline_lower_bound_bytes
                                 : LowerBoundOf(g, result.rewrite, sizes.sized_bytes, result.order,
                                                sizes.step_extra_of, nullptr),
        .seconds = scheduled->seconds,
    };
    // The scheduler's peaks and the spec's lower bound are one definition
    // computed twice: a mismatch is a bug, never a figure to print.
    if (scheduled->given_peak != modes.baseline_lower_bound_bytes ||
        scheduled->peak != modes.schedule.lower_bound_bytes) {
      return absl::InternalError(absl::StrCat(
          ErrorPrefix(graph_label), "the schedule optimizer's peaks (given ", scheduled->given_peak, ", optimized ",
          scheduled->peak, ") differ from the lower bounds (", modes.baseline_lower_bound_bytes, ", ",
          modes.schedule.lower_bound_bytes, ")"));
    }
  }
  modes.schedule.saved_bytes = modes.baseline_lower_bound_bytes - modes.schedule.lower_bound_bytes;
  return absl::OkStatus();
}

std::vector<Sharing> RunSharingModes(const GraphSizes& sizes, const std::vector<planner::Lifespan>& lifespans,
                                     bool main_graph, const AnalyzeOptions& options, const RuntimeModel* runtime,
                                     GraphResult& result) {
  const IrGraph& g = result.ir;
  ModesSummary& modes = result.modes;
  const bool device_allows_inplace =
      !options.device_profile.has_value() || options.device_profile->allow_inplace();
  modes.alias.enabled = main_graph && options.alias;
  modes.inplace.enabled = main_graph && options.inplace && device_allows_inplace;
  if (main_graph && options.inplace && !device_allows_inplace) {
    result.warnings.push_back(
        absl::StrCat("in-place reuse is off: device profile '", options.device.name, "' does not allow it"));
  }
  modes.alias.lower_bound_bytes = modes.schedule.lower_bound_bytes;
  if (modes.alias.enabled) {
    const std::vector<Sharing> aliased = PlanSharing(g, result.order, lifespans, sizes.facts, {.alias = true});
    const bool any_alias = std::any_of(aliased.begin(), aliased.end(),
                                       [](const Sharing& sharing) { return sharing.kind != SharingKind::kOwner; });
    if (any_alias) {
      modes.alias.lower_bound_bytes =
          LowerBoundOf(g, result.rewrite, sizes.sized_bytes, result.order, sizes.step_extra_of, &aliased);
    }
  }
  modes.alias.saved_bytes = modes.schedule.lower_bound_bytes - modes.alias.lower_bound_bytes;
  return PlanSharing(g, result.order, lifespans, sizes.facts,
                     {.alias = modes.alias.enabled,
                      .inplace = modes.inplace.enabled,
                      .runtime_writes_over =
                          result.rewrite.writes_over.empty() ? nullptr : &result.rewrite.writes_over,
                      .runtime = main_graph ? runtime : nullptr});
}

absl::Status FinishInPlaceMode(const std::string& graph_label, GraphResult& result) {
  ModesSummary& modes = result.modes;
  modes.inplace.lower_bound_bytes = result.plan.lower_bound;
  modes.inplace.saved_bytes = modes.alias.lower_bound_bytes - modes.inplace.lower_bound_bytes;
  if (!modes.inplace.enabled && modes.inplace.saved_bytes != 0) {
    return absl::InternalError(absl::StrCat(ErrorPrefix(graph_label), "the plan's lower bound ",
                                            result.plan.lower_bound, " differs from the modes' ",
                                            modes.alias.lower_bound_bytes));
  }
  return absl::OkStatus();
}

}  // namespace footprint
