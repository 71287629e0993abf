// Internal to analyzer/patching/: the candidates of the patch search
// (patch_plan.h), how they compare, and how the best few are planned with
// the user's options; the graph figures the search ranks them by.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_PLAN_CANDIDATES_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_PLAN_CANDIDATES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/segment.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

// Every value of static shape, from an analysis of the model on the baseline
// (no folding, no fusion: every node output is an arena tensor).
absl::StatusOr<TensorShapes> ShapesOf(const LoadedModel& loaded, const AnalyzeOptions& options);

// The node of the original graph at `plan`'s peak step when no segment of
// the plan holds it (a head the patches never reach); nullopt when the peak
// is inside a patch or at an assembly.
std::optional<int> PeakOutsideSegments(const GraphFacts& facts, const PatchPlan& plan);

// A plan compared by the planner's heuristics alone (deterministic).
struct Candidate {
  PlannedSegment planned;                 // Its segment (a plan of one).
  std::vector<PlannedSegment> segments;   // Or its segments (a plan of two).
  int64_t arena_bytes = 0;
  int64_t extra_macs = 0;
  int64_t added_bound = 0;  // A segment with several inputs added to a plan: the bytes of its T. On a tie, the
                            // smaller assembly leaves more room for the next one; 0 elsewhere.
  int64_t added_held = 0;   // And of the inputs it holds whole while it runs: on a tie again, fewer leave more
                            // room (an SE's pooled tensor, or the smaller input its patches recompute it from).
};

// An added segment's smaller T, then its smaller inputs held, then fewer
// extra MACs, then fewer node copies (patches x nodes: the smaller model).
bool Cheaper(const Candidate& a, const Candidate& b);

// The lower arena, then Cheaper.
bool Better(const Candidate& a, const Candidate& b);

// The heuristics' best few are planned again with the user's budgets, where
// the order among near ties can change.
inline constexpr size_t kFinalists = 3;

// `candidate` among `finalists`, the kFinalists Better ones kept in order.
void KeepFinalist(Candidate candidate, std::vector<Candidate>& finalists);

using RewriteFunction = absl::StatusOr<onnx::ModelProto> (*)(const onnx::ModelProto&, const GraphFacts&,
                                                             const std::vector<PlannedSegment>&);

// `segments` rewritten and planned with `options` into `model`; nullopt when
// the rewrite refuses the plan (FailedPrecondition: an input that cannot stream).
absl::StatusOr<std::optional<Analysis>> PlanWith(const LoadedModel& loaded, const GraphFacts& facts,
                                                 const AnalyzeOptions& options,
                                                 const std::vector<PlannedSegment>& segments, RewriteFunction rewrite,
                                                 LoadedModel& model);

struct Finalist {
  std::vector<PlannedSegment> planned;  // Its segments.
  LoadedModel model;                    // The rewritten model.
  Analysis analysis;                    // Its analysis with the user's options.
};

// Each finalist planned with `options`: the lowest arena (fewer extra MACs on
// a tie, then the heuristics' order).
absl::StatusOr<std::optional<Finalist>> PlanFinalists(const LoadedModel& loaded, const GraphFacts& facts,
                                                      const AnalyzeOptions& options,
                                                      const std::vector<Candidate>& finalists, RewriteFunction rewrite);

// `chosen` becomes `plan`'s segments, model and analysis.
void TakePlan(Finalist chosen, PatchPlan& plan);

// The MACs of the model's nodes that run (not folded at load).
int64_t ModelMacs(const GraphFacts& facts);

// The larger side of each node (its activations in, or out): the part of
// the graph left whole never needs less at its step, even where it writes
// over an input (in-place).
std::vector<int64_t> SideBytes(const GraphFacts& facts, int64_t alignment);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_PLAN_CANDIDATES_H_
