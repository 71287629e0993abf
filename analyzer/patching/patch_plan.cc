#include "analyzer/patching/patch_plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/memory/analyze.h"

namespace footprint::patching {
namespace {

// Every value of static shape, from an analysis of the model on the baseline
// (no folding, no fusion: every node output is an arena tensor).
absl::StatusOr<TensorShapes> ShapesOf(const LoadedModel& loaded, const AnalyzeOptions& options) {
  AnalyzeOptions baseline = options;
  baseline.optimize_schedule = false;
  baseline.alias = false;
  baseline.inplace = false;
  baseline.fold_constants = false;
  baseline.accumulate = false;
  baseline.qdq = false;
  baseline.runtime.clear();
  baseline.sample_unbound_dims = false;
  baseline.device_profile.reset();
  baseline.planner_time_limit = absl::ZeroDuration();
  absl::StatusOr<Analysis> analysis = AnalyzeModel(loaded, baseline);
  if (!analysis.ok()) return analysis.status();
  TensorShapes shapes;
  const auto add = [&](const std::string& name, const std::vector<Dim>& dims) {
    std::vector<int64_t> values;
    for (const Dim& dim : dims) {
      if (!dim.value.has_value()) return;
      values.push_back(*dim.value);
    }
    shapes.emplace(name, std::move(values));
  };
  for (const TensorRecord& tensor : analysis->tensors) {
    if (tensor.shape.has_value()) add(tensor.name, *tensor.shape);
  }
  for (const WeightRecord& weight : analysis->weights) {
    if (weight.graph.empty()) add(weight.name, weight.shape);
  }
  return shapes;
}

int64_t AlignedBytes(const std::vector<int64_t>& dims, int64_t alignment) {
  int64_t elements = 1;
  for (int64_t dim : dims) elements *= dim;
  const int64_t bytes = elements * 4;  // A bound only: float32, the dtype of the CNNs patched.
  return (bytes + alignment - 1) / alignment * alignment;
}

// The grids tried for an output of height x width: up to `most` x `most`
// patches, square ones and ones whose patches are about square; coarsest first.
std::vector<Grid> GridsFor(int64_t height, int64_t width, int64_t most) {
  std::vector<Grid> grids;
  for (int64_t rows = 1; rows <= std::min(most, height); ++rows) {
    const int64_t matched = std::llround(static_cast<double>(rows) * width / height);
    for (int64_t cols : {rows, matched}) {
      if (cols < 1 || cols > std::min(most, width) || rows * cols < 2) continue;
      const Grid grid{.rows = rows, .cols = cols};
      if (std::none_of(grids.begin(), grids.end(),
                       [&](const Grid& g) { return g.rows == rows && g.cols == cols; })) {
        grids.push_back(grid);
      }
    }
  }
  std::stable_sort(grids.begin(), grids.end(),
                   [](const Grid& a, const Grid& b) { return a.rows * a.cols < b.rows * b.cols; });
  return grids;
}

std::string NodeName(const onnx::NodeProto& node) { return node.name().empty() ? node.output(0) : node.name(); }

struct Candidate {
  PlannedSegment planned;
  int64_t arena_bytes = 0;
  int64_t extra_macs = 0;
};

}  // namespace

absl::StatusOr<PatchSearch> PlanPatches(const LoadedModel& loaded, const AnalyzeOptions& options,
                                        const Analysis& given, const PatchSearchOptions& search) {
  PatchSearch result;
  if (!given.memory.complete) {
    result.reason = "some tensor has no known size (bind the input dims)";
    return result;
  }
  absl::StatusOr<TensorShapes> shapes = ShapesOf(loaded, options);
  if (!shapes.ok()) return shapes.status();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(loaded.model->graph(), *shapes);
  if (!facts.ok()) return facts.status();
  const onnx::GraphProto& graph = loaded.model->graph();
  int64_t model_macs = 0;
  for (int node : facts->order) {
    if (!facts->IsStatic(graph.node(node).output_size() > 0 ? graph.node(node).output(0) : "")) {
      model_macs += NodeMacs(graph.node(node), [&](const std::string& value) { return facts->ShapeOf(value); });
    }
  }
  if (model_macs == 0) {
    result.reason = "the model has no Conv, Gemm or MatMul: nothing to patch";
    return result;
  }
  const int64_t alignment = given.device.alignment_bytes > 0 ? given.device.alignment_bytes : 64;
  // Bytes a node holds at its step (its activations in and out): the part of
  // the graph left whole never needs less.
  std::vector<int64_t> step_bytes(graph.node_size(), 0);
  for (int node : facts->order) {
    for (const auto* values : {&graph.node(node).input(), &graph.node(node).output()}) {
      for (const std::string& value : *values) {
        if (value.empty() || facts->IsStatic(value) || !facts->shapes.contains(value)) continue;
        step_bytes[node] += AlignedBytes(facts->shapes.at(value), alignment);
      }
    }
  }
  std::vector<std::pair<int64_t, Segment>> segments;  // (a bound on the patched arena, segment)
  std::string reasons;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (facts->IsStatic(input.name())) continue;
    SegmentSearch found = SegmentsFrom(*facts, input.name());
    if (found.segments.empty()) absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", found.reason);
    for (Segment& segment : found.segments) {
      absl::flat_hash_set<int> members(segment.nodes.begin(), segment.nodes.end());
      int64_t bound = 2 * AlignedBytes(facts->shapes.at(segment.output), alignment);  // Pieces + T at the assembly.
      for (int node : facts->order) {
        if (!members.contains(node)) bound = std::max(bound, step_bytes[node]);
      }
      segments.emplace_back(bound, std::move(segment));
    }
  }
  if (segments.empty()) {
    result.reason = reasons.empty() ? "the model has no NCHW graph input" : reasons;
    return result;
  }
  std::stable_sort(segments.begin(), segments.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto rewrite = search.stream_input ? RewriteWithStreamedInput : RewriteWithPatches;
  AnalyzeOptions quick = options;
  quick.planner_time_limit = absl::Milliseconds(10);
  quick.schedule_time_limit = absl::Milliseconds(10);
  quick.sample_unbound_dims = false;
  std::optional<Candidate> best;
  int64_t within_budget = 0;
  int64_t planned_candidates = 0;
  const double allowed_macs = search.max_overhead_percent / 100.0 * static_cast<double>(model_macs);
  for (const auto& [bound, segment] : segments) {
    if (bound >= given.memory.arena_bytes) break;
    if (best.has_value() && bound >= best->arena_bytes) break;
    if (planned_candidates >= search.max_planned_candidates) break;
    const std::vector<int64_t>& out = facts->shapes.at(segment.output);
    std::vector<PatchGeometry> admissible;
    // Coarsest first: finer grids along both axes only recompute more, so
    // the first grid over the budget ends the segment's grids.
    for (const Grid& grid : GridsFor(out[2], out[3], search.max_patches_per_axis)) {
      PatchGeometry geometry = GeometryOf(*facts, segment, grid);
      if (static_cast<double>(geometry.macs_after - geometry.macs_before) > allowed_macs) break;
      admissible.push_back(std::move(geometry));
    }
    std::sort(admissible.begin(), admissible.end(), [](const PatchGeometry& a, const PatchGeometry& b) {
      const int64_t patches_a = a.rows * a.cols, patches_b = b.rows * b.cols;
      return patches_a != patches_b ? patches_a > patches_b : a.macs_after < b.macs_after;
    });
    if (admissible.size() > static_cast<size_t>(search.grids_per_segment)) admissible.resize(search.grids_per_segment);
    within_budget += admissible.empty() ? 0 : 1;
    for (PatchGeometry& geometry : admissible) {
      PlannedSegment planned{.segment = segment, .geometry = std::move(geometry)};
      absl::StatusOr<onnx::ModelProto> rewritten = rewrite(*loaded.model, *facts, {planned});
      if (absl::IsFailedPrecondition(rewritten.status())) {
        result.reason = std::string(rewritten.status().message());
        return result;
      }
      if (!rewritten.ok()) return rewritten.status();
      LoadedModel candidate_model = loaded;
      candidate_model.model = std::move(*rewritten);
      absl::StatusOr<Analysis> analysis = AnalyzeModel(candidate_model, quick);
      if (!analysis.ok()) return analysis.status();
      ++planned_candidates;
      const int64_t extra = planned.geometry.macs_after - planned.geometry.macs_before;
      if (!best.has_value() || analysis->memory.arena_bytes < best->arena_bytes ||
          (analysis->memory.arena_bytes == best->arena_bytes && extra < best->extra_macs)) {
        best = Candidate{.planned = std::move(planned), .arena_bytes = analysis->memory.arena_bytes, .extra_macs = extra};
      }
    }
  }
  if (!best.has_value()) {
    result.reason = within_budget == 0 && segments.front().first < given.memory.arena_bytes
                        ? absl::StrCat("every patch grid costs more than ", search.max_overhead_percent,
                                       "% extra MACs (--max-overhead)")
                        : "the peak is outside every patchable segment: patching cannot lower the arena";
    return result;
  }
  PatchPlan plan;
  plan.model_macs = model_macs;
  plan.shapes = std::move(*shapes);
  plan.planned.push_back(std::move(best->planned));
  plan.stream_input = search.stream_input;
  absl::StatusOr<onnx::ModelProto> rewritten = rewrite(*loaded.model, *facts, plan.planned);
  if (!rewritten.ok()) return rewritten.status();
  plan.model = loaded;
  plan.model.model = std::move(*rewritten);
  absl::StatusOr<Analysis> analysis = AnalyzeModel(plan.model, options);
  if (!analysis.ok()) return analysis.status();
  if (analysis->memory.arena_bytes >= given.memory.arena_bytes) {
    result.reason = "the peak is outside every patchable segment: patching cannot lower the arena";
    return result;
  }
  plan.analysis = std::move(*analysis);
  for (const PlannedSegment& planned : plan.planned) {
    const Segment& segment = planned.segment;
    plan.segments.push_back({.input = segment.input,
                             .output = segment.output,
                             .first_node = NodeName(graph.node(segment.nodes.front())),
                             .last_node = NodeName(graph.node(segment.nodes.back())),
                             .nodes = static_cast<int64_t>(segment.nodes.size()),
                             .rows = planned.geometry.rows,
                             .cols = planned.geometry.cols,
                             .macs_before = planned.geometry.macs_before,
                             .macs_after = planned.geometry.macs_after});
    plan.extra_macs += planned.geometry.macs_after - planned.geometry.macs_before;
  }
  plan.extra_macs_percent = 100.0 * static_cast<double>(plan.extra_macs) / static_cast<double>(model_macs);
  result.plan = std::move(plan);
  return result;
}

absl::StatusOr<onnx::ModelProto> RewriteFullModel(const onnx::ModelProto& full, const PatchPlan& plan) {
  if (plan.stream_input) return absl::InvalidArgumentError("a plan with the input streamed is a figure, not a model to write");
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(full.graph(), plan.shapes);
  if (!facts.ok()) return facts.status();
  return RewriteWithPatches(full, *facts, plan.planned);
}

}  // namespace footprint::patching
