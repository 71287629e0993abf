// Internal to analyzer/patching/: the last steps of the patch search
// (patch_plan.h), segments with several inputs added to a plan: around the
// arena's peak (a neck's or a decoder's stage), and under --runtime around
// the runtime planner's own peak.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_MULTI_INPUT_SEARCH_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_MULTI_INPUT_SEARCH_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/plan_candidates.h"
#include "analyzer/patching/segment.h"

namespace footprint::patching {

// What the search was given, shared by its steps.
struct SearchContext {
  const LoadedModel& loaded;          // The model.
  const AnalyzeOptions& options;      // The user's: finalists are planned with them.
  const AnalyzeOptions& quick;        // Candidates' (the planner's heuristics, a short schedule search).
  const Analysis& given;              // The model unpatched, with `options`.
  const PatchSearchOptions& search;   // Grids and limits.
  const GraphFacts& facts;            // Of the original graph.
  int64_t alignment = 64;             // The device's.
  double allowed_macs = 0;            // Extra MACs all segments may cost together.
  RewriteFunction rewrite = nullptr;  // RewriteWithPatches, or with the input streamed.
};

// A segment with several inputs around the nodes that make the peak of
// `plan` (or of the model, when there is no plan) outside its segments: a
// neck's or decoder's stage reading an upsampled branch and a skip, which
// no single dominating input reaches locally. Its finest admissible grids
// within the MACs left are planned beside the plan's segments; true when
// one gives a lower arena (then `plan` holds it).
absl::StatusOr<bool> AddMultiInputSegment(const SearchContext& context, PatchPlan& plan);

// Under --runtime: the same around the values that make the runtime
// planner's peak (RuntimePeakNodes) outside the plan's segments. ORT's
// planner keeps a freed buffer for a later tensor of the same shape, so its
// peak can sit where our arena has room to spare (a YOLOv5 neck, beside
// buffers the backbone's tensors left for the neck's); a patched stage has
// other shapes and takes none of them. Taken when the runtime's run figure
// falls, the arena does not rise, and the runtime's peak (with the weights
// each node copy pre-packs for itself: ORT packs per node) stays at most the
// unpatched model's; true then. False at once without --runtime.
absl::StatusOr<bool> AddRuntimeSegment(const SearchContext& context, PatchPlan& plan);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_MULTI_INPUT_SEARCH_H_
