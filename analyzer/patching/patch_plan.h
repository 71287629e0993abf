// The patch option of a model: which segment to run patch by patch, on
// which grid, and what the patched model's arena is, planned by the same
// analysis as the model itself (AnalyzeModel on the rewritten model).
//
// Usage:
//   absl::StatusOr<PatchSearch> found = PlanPatches(loaded, options, {.max_overhead_percent = 20});
//   if (found->plan) ... found->plan->analysis.memory.arena_bytes ...
//   else std::cout << found->reason;  // why there is no patch option
//   absl::StatusOr<onnx::ModelProto> out = RewriteFullModel(full_model, *found->plan);  // --emit-model
//
// The search (docs/patching.md): segments that read a graph input
// (segment.h) on grids of up to 8 x 8 patches whose patches are about
// square, within max_overhead_percent extra multiply-accumulates of the
// whole model; then a second segment around the node that makes the peak
// once the first is patched (a head, a later stage), read from a tensor
// that dominates it, paired with each first segment or none. Candidates
// are taken by a lower bound on their arena, lowest first, compared by the
// planner's heuristics and a short schedule search; the best three are
// planned again with the user's options, and the lowest arena is the figure
// reported. Then each segment of the plan may be chained (chain.h): its T
// kept in pieces for the segment after it, and so on over a stage, only the
// chain's last T assembled, when that gives a lower arena. When the peak is
// then still at nodes no segment holds, a segment with several inputs
// around them (a neck's stage, a U-Net's decoder stage) is added when it
// lowers the arena, up to four times. Under --runtime, the same around the
// values that make the runtime planner's own peak, when that lowers the
// runtime's run and neither the arena nor the runtime's peak rises, up to
// four times (multi_input_search.h). Graph inputs are held whole (a patch
// slices them).
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_PLAN_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/segment.h"

namespace footprint::patching {

struct PatchSearchOptions {
  double max_overhead_percent = 20;  // --max-overhead: extra MACs allowed, % of the model's.
  int64_t max_patches_per_axis = 8;  // Finer grids recompute more than they save on these models.
  int64_t max_fine_patches_per_axis = 16;  // A prefix segment also tries its finest grid up to this, within the
                                           // MACs: with the input held whole, the last patches' pieces and
                                           // working set sit beside it (a 640x640 face detector).
  int64_t grids_per_segment = 4;     // The finest admissible grids planned per segment.
  int64_t max_planned_candidates = 24;  // Analyses of candidates at most (segments by their bound, lowest first).
  bool stream_input = false;         // --stream-input: plan RewriteWithStreamedInput's model (rewrite.h).
  int64_t max_chain_segments = 16;   // Segments chained after one of the plan's (chain.h), at most.
  int64_t max_planned_chains = 8;    // Analyses of chained plans at most (by their bound, lowest first).
  int64_t max_chain_copies = 3072;   // Node copies (nodes x patches, and the pieces' Slices and Concats) of a
                                     // chain and the segment it follows, at most: the analyses' time.
};

// One segment of the chosen plan, as reports name it.
struct SegmentChoice {
  std::string input;       // X, held whole.
  std::vector<std::string> other_inputs;  // More activations it reads, each held whole and sliced per patch.
  std::string output;      // T, assembled whole.
  std::string first_node;  // Its first node (name, or first output when unnamed).
  std::string last_node;   // T's producer.
  int64_t nodes = 0;       // Nodes in the segment (each copied once per patch).
  int64_t rows = 1;        // Patches along H.
  int64_t cols = 1;        // Patches along W.
  int64_t macs_before = 0;  // The segment's MACs unpatched.
  int64_t macs_after = 0;   // Over all its patches.
  bool output_in_pieces = false;  // T kept in pieces for the next segment (a chain), never whole.
};

struct PatchPlan {
  std::vector<SegmentChoice> segments;   // In the order they run.
  int64_t model_macs = 0;                // The whole model unpatched (Conv, ConvTranspose, Gemm, MatMul).
  int64_t extra_macs = 0;                // Sum over segments of macs_after - macs_before.
  double extra_macs_percent = 0;         // 100 x extra_macs / model_macs.
  LoadedModel model;                     // The rewritten model (the loaded one's structure, no weight bytes).
  Analysis analysis;                     // It, planned with the user's options.
  TensorShapes shapes;                   // Of the original model: the rewrite again on the full model.
  std::vector<PlannedSegment> planned;   // Node indices of the original model.
  bool stream_input = false;             // Planned with the graph input delivered patch by patch.
  int64_t layout_channel_block = kDefaultLayoutChannelBlock;  // Of the runtime it is written for (GraphFacts).
};

struct PatchSearch {
  std::optional<PatchPlan> plan;   // nullopt: no patch option.
  std::string reason;              // Why not (one line), when there is none.
};

// `given` is the analysis of `loaded` with `options` (the arena to beat).
// Errors: the analysis of a candidate failing for another reason than its
// model (overflow), passed on.
absl::StatusOr<PatchSearch> PlanPatches(const LoadedModel& loaded, const AnalyzeOptions& options,
                                        const Analysis& given, const PatchSearchOptions& search);

// The same rewrite applied to the model read whole (weights included): what
// --emit-model writes. `full` must be the model `plan` was made from.
absl::StatusOr<onnx::ModelProto> RewriteFullModel(const onnx::ModelProto& full, const PatchPlan& plan);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_PLAN_H_
