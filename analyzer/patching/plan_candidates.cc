#include "analyzer/patching/plan_candidates.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/patching/second_segment.h"
#include "analyzer/patching/spatial_ops.h"

namespace footprint::patching {

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

std::optional<int> PeakOutsideSegments(const GraphFacts& facts, const PatchPlan& plan) {
  const std::vector<int64_t>& live = plan.analysis.live_bytes_per_step;
  if (live.empty() || live.size() != plan.analysis.schedule.size()) return std::nullopt;
  const std::string& name = plan.analysis.schedule[std::max_element(live.begin(), live.end()) - live.begin()];
  const onnx::GraphProto& written = plan.model.model->graph();
  std::string output;
  for (int i = 0; i < written.node_size() && output.empty(); ++i) {
    const onnx::NodeProto& node = written.node(i);
    if ((node.name().empty() ? absl::StrCat(node.op_type(), "_", i) : node.name()) == name && node.output_size() > 0) {
      output = node.output(0);
    }
  }
  auto producer = facts.producer.find(output);
  if (output.empty() || producer == facts.producer.end()) return std::nullopt;
  for (const PlannedSegment& planned : plan.planned) {
    if (std::find(planned.segment.nodes.begin(), planned.segment.nodes.end(), producer->second) != planned.segment.nodes.end()) {
      return std::nullopt;  // A segment's T, assembled.
    }
  }
  return producer->second;
}

namespace {

int64_t CopiesOf(const Candidate& candidate) {
  const auto copies = [](const PlannedSegment& planned) {
    return planned.geometry.rows * planned.geometry.cols * static_cast<int64_t>(planned.segment.nodes.size());
  };
  if (candidate.segments.empty()) return copies(candidate.planned);
  int64_t total = 0;
  for (const PlannedSegment& planned : candidate.segments) total += copies(planned);
  return total;
}

}  // namespace

bool Cheaper(const Candidate& a, const Candidate& b) {
  if (a.added_bound != b.added_bound) return a.added_bound < b.added_bound;
  if (a.added_held != b.added_held) return a.added_held < b.added_held;
  if (a.extra_macs != b.extra_macs) return a.extra_macs < b.extra_macs;
  return CopiesOf(a) < CopiesOf(b);
}

bool Better(const Candidate& a, const Candidate& b) {
  return a.arena_bytes != b.arena_bytes ? a.arena_bytes < b.arena_bytes : Cheaper(a, b);
}

void KeepFinalist(Candidate candidate, std::vector<Candidate>& finalists) {
  finalists.push_back(std::move(candidate));
  std::stable_sort(finalists.begin(), finalists.end(), Better);
  if (finalists.size() > kFinalists) finalists.pop_back();
}

absl::StatusOr<std::optional<Analysis>> PlanWith(const LoadedModel& loaded, const GraphFacts& facts,
                                                 const AnalyzeOptions& options,
                                                 const std::vector<PlannedSegment>& segments, RewriteFunction rewrite,
                                                 LoadedModel& model) {
  absl::StatusOr<onnx::ModelProto> rewritten = rewrite(*loaded.model, facts, segments);
  if (absl::IsFailedPrecondition(rewritten.status())) return std::nullopt;
  if (!rewritten.ok()) return rewritten.status();
  model = loaded;
  model.model = std::move(*rewritten);
  absl::StatusOr<Analysis> analysis = AnalyzeModel(model, options);
  if (!analysis.ok()) return analysis.status();
  return std::optional<Analysis>(std::move(*analysis));
}

absl::StatusOr<std::optional<Finalist>> PlanFinalists(const LoadedModel& loaded, const GraphFacts& facts,
                                                      const AnalyzeOptions& options,
                                                      const std::vector<Candidate>& finalists, RewriteFunction rewrite) {
  std::optional<Finalist> best;
  const Candidate* best_candidate = nullptr;
  for (const Candidate& candidate : finalists) {
    Finalist finalist{.planned = candidate.segments.empty() ? std::vector<PlannedSegment>{candidate.planned} : candidate.segments};
    absl::StatusOr<std::optional<Analysis>> planned = PlanWith(loaded, facts, options, finalist.planned, rewrite, finalist.model);
    if (!planned.ok()) return planned.status();
    if (!planned->has_value()) continue;
    finalist.analysis = std::move(**planned);
    if (!best.has_value() || finalist.analysis.memory.arena_bytes < best->analysis.memory.arena_bytes ||
        (finalist.analysis.memory.arena_bytes == best->analysis.memory.arena_bytes &&
         Cheaper(candidate, *best_candidate))) {
      best = std::move(finalist);
      best_candidate = &candidate;
    }
  }
  return best;
}

void TakePlan(Finalist chosen, PatchPlan& plan) {
  plan.planned = std::move(chosen.planned);
  plan.model = std::move(chosen.model);
  plan.analysis = std::move(chosen.analysis);
}

int64_t ModelMacs(const GraphFacts& facts) {
  const onnx::GraphProto& graph = *facts.graph;
  int64_t model_macs = 0;
  for (int node : facts.order) {
    if (!facts.IsStatic(graph.node(node).output_size() > 0 ? graph.node(node).output(0) : "")) {
      model_macs += NodeMacs(graph.node(node), [&](const std::string& value) { return facts.ShapeOf(value); });
    }
  }
  return model_macs;
}

std::vector<int64_t> SideBytes(const GraphFacts& facts, int64_t alignment) {
  const onnx::GraphProto& graph = *facts.graph;
  std::vector<int64_t> side_bytes(graph.node_size(), 0);
  for (int node : facts.order) {
    for (const auto* values : {&graph.node(node).input(), &graph.node(node).output()}) {
      int64_t side = 0;
      absl::flat_hash_set<std::string> counted;
      for (const std::string& value : *values) {
        if (value.empty() || facts.IsStatic(value) || !facts.shapes.contains(value) || !counted.insert(value).second) {
          continue;
        }
        side += AlignedBytes(facts.shapes.at(value), alignment);
      }
      side_bytes[node] = std::max(side_bytes[node], side);
    }
  }
  return side_bytes;
}

}  // namespace footprint::patching
