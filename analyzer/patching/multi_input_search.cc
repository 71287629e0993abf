#include "analyzer/patching/multi_input_search.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/patching/plan_candidates.h"
#include "analyzer/patching/second_segment.h"

namespace footprint::patching {
namespace {

constexpr int64_t kPlannedPairs = 16;  // Plans of an added segment analysed at most.
constexpr size_t kPeakNodes = 4;       // Producers of the largest values live at the peak, tried.

// `segments` rewritten and planned with `options` into `model` (PlanWith).
absl::StatusOr<std::optional<Analysis>> Plan(const SearchContext& context, const AnalyzeOptions& options,
                                             const std::vector<PlannedSegment>& segments, LoadedModel& model) {
  return PlanWith(context.loaded, context.facts, options, segments, context.rewrite, model);
}

// The nodes of the plan's segments.
absl::flat_hash_set<int> Taken(const PatchPlan& plan) {
  absl::flat_hash_set<int> taken;
  for (const PlannedSegment& planned : plan.planned) {
    taken.insert(planned.segment.nodes.begin(), planned.segment.nodes.end());
  }
  return taken;
}

int64_t ExtraMacs(const PatchPlan& plan) {
  int64_t extra = 0;
  for (const PlannedSegment& planned : plan.planned) {
    extra += planned.geometry.macs_after - planned.geometry.macs_before;
  }
  return extra;
}

// AddRuntimeSegment's test of `patched` against the plan so far, `current`.
bool LowersTheRuntimesFigure(const SearchContext& context, const Analysis& current, const Analysis& patched) {
  return RuntimeRunBytes(patched.memory) < RuntimeRunBytes(current.memory) &&
         patched.memory.arena_bytes <= current.memory.arena_bytes &&
         RunPeakBytes(patched.memory) <= RunPeakBytes(context.given.memory);
}

// Each segment with several inputs around each of `peaks` (outside the
// plan's segments, `taken`; several, as equal sizes are common: a U-Net's skip held
// across its decoder beside the stage's Concat) on its finest grids within
// the MACs left, by its own bound (its T assembled, its copies' working
// sets), lowest first.
std::vector<Half> MultiInputHalves(const SearchContext& context, const PatchPlan& plan,
                                   const absl::flat_hash_set<int>& taken, const std::vector<int>& peaks) {
  const double macs_left = context.allowed_macs - static_cast<double>(ExtraMacs(plan));
  std::vector<Half> halves;
  std::vector<std::vector<int>> seen;  // Node sets already taken in `halves`.
  for (int peak : peaks) {
    if (!SpatialOpIn(context.facts, context.facts.graph->node(peak)).ok()) continue;
    for (const Segment& segment : MultiInputSegmentsAround(context.facts, peak, taken)) {
      if (std::find(seen.begin(), seen.end(), segment.nodes) != seen.end()) continue;
      seen.push_back(segment.nodes);
      for (PatchGeometry& geometry : AdmissibleGrids(context.facts, segment, macs_left, context.search)) {
        halves.push_back(
            MakeHalf(context.facts, {.segment = segment, .geometry = std::move(geometry)}, context.alignment));
      }
    }
  }
  std::stable_sort(halves.begin(), halves.end(),
                   [](const Half& a, const Half& b) { return a.inner_bound < b.inner_bound; });
  return halves;
}

}  // namespace

absl::StatusOr<bool> AddMultiInputSegment(const SearchContext& context, PatchPlan& plan) {
  const Analysis& current = plan.planned.empty() ? context.given : plan.analysis;
  const absl::flat_hash_set<int> taken = Taken(plan);
  std::vector<Half> halves =
      MultiInputHalves(context, plan, taken, PeakNodes(current, context.facts, taken, kPeakNodes));
  std::vector<Candidate> finalists;
  int64_t analyses = 0;
  for (Half& half : halves) {
    if (analyses >= kPlannedPairs || half.inner_bound >= current.memory.arena_bytes) break;
    const int64_t assembled = AlignedBytes(context.facts.shapes.at(half.planned.segment.output), context.alignment);
    int64_t held = 0;
    for (const std::string& input : InputsOf(half.planned.segment)) {
      held += AlignedBytes(context.facts.shapes.at(input), context.alignment);
    }
    std::vector<PlannedSegment> segments = plan.planned;
    segments.push_back(std::move(half.planned));
    const int64_t extra = ExtraMacs(plan) + half.extra_macs;
    LoadedModel model;
    absl::StatusOr<std::optional<Analysis>> planned = Plan(context, context.quick, segments, model);
    if (!planned.ok()) return planned.status();
    ++analyses;
    if (!planned->has_value() || (*planned)->memory.arena_bytes >= current.memory.arena_bytes) continue;
    KeepFinalist(Candidate{.segments = std::move(segments), .arena_bytes = (*planned)->memory.arena_bytes,
                           .extra_macs = extra, .added_bound = assembled, .added_held = held},
                 finalists);
  }
  if (finalists.empty()) return false;
  absl::StatusOr<std::optional<Finalist>> chosen =
      PlanFinalists(context.loaded, context.facts, context.options, finalists, context.rewrite);
  if (!chosen.ok()) return chosen.status();
  if (!chosen->has_value() || (*chosen)->analysis.memory.arena_bytes >= current.memory.arena_bytes) return false;
  TakePlan(std::move(**chosen), plan);
  return true;
}

absl::StatusOr<bool> AddRuntimeSegment(const SearchContext& context, PatchPlan& plan) {
  if (context.options.runtime.empty()) return false;
  const Analysis& current = plan.planned.empty() ? context.given : plan.analysis;
  const absl::flat_hash_set<int> taken = Taken(plan);
  std::vector<Half> halves =
      MultiInputHalves(context, plan, taken, RuntimePeakNodes(current, context.facts, taken, kPeakNodes));
  std::optional<std::pair<int64_t, std::vector<PlannedSegment>>> best;  // (RuntimeRunBytes, segments)
  int64_t analyses = 0;
  for (Half& half : halves) {
    if (analyses >= kPlannedPairs) break;
    std::vector<PlannedSegment> segments = plan.planned;
    segments.push_back(std::move(half.planned));
    LoadedModel model;
    absl::StatusOr<std::optional<Analysis>> planned = Plan(context, context.quick, segments, model);
    if (!planned.ok()) return planned.status();
    ++analyses;
    if (!planned->has_value() || !LowersTheRuntimesFigure(context, current, **planned)) continue;
    const int64_t run = RuntimeRunBytes((*planned)->memory);
    if (!best.has_value() || run < best->first) best.emplace(run, std::move(segments));
  }
  if (!best.has_value()) return false;
  LoadedModel model;
  absl::StatusOr<std::optional<Analysis>> planned = Plan(context, context.options, best->second, model);
  if (!planned.ok()) return planned.status();
  if (!planned->has_value() || !LowersTheRuntimesFigure(context, current, **planned)) return false;
  TakePlan({.planned = std::move(best->second), .model = std::move(model), .analysis = std::move(**planned)}, plan);
  return true;
}

}  // namespace footprint::patching
