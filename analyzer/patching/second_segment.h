// The pieces of the patch search that a second segment needs: the grids of
// a segment within the MAC budget, the node that makes the peak once the
// first segment is patched, the segments around it, and a segment on a grid
// with a lower bound on the arena while it runs (patch_plan.cc pairs them).
// docs/patching.md, "The second segment".
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_SECOND_SEGMENT_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_SECOND_SEGMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/segment.h"

namespace footprint::patching {

// `dims` as float32 bytes rounded up to `alignment`: a bound only (float32,
// the dtype of the CNNs patched).
int64_t AlignedBytes(const std::vector<int64_t>& dims, int64_t alignment);

// The grids tried for an output of height x width: up to `most` x `most`
// patches, square ones and ones whose patches are about square; coarsest first.
std::vector<Grid> GridsFor(int64_t height, int64_t width, int64_t most);

// A lower bound on the arena while `planned` runs: T assembled (its pieces
// and itself; not when T is kept in pieces), and in each patch each copy's
// larger side (its inputs or its output: in-place may share one with the
// other).
int64_t InnerBound(const GraphFacts& facts, const PlannedSegment& planned, int64_t alignment);

// One segment on one grid, as a part of a plan of up to two.
struct Half {
  PlannedSegment planned;
  int64_t inner_bound = 0;             // A lower bound on the arena while it runs (see InnerBound).
  int64_t extra_macs = 0;
  absl::flat_hash_set<int> nodes;      // Its nodes.
  absl::flat_hash_set<std::string> inner;  // Values only it sees (all but T).
};

// `planned` as a Half, its bound and the values only it sees.
Half MakeHalf(const GraphFacts& facts, PlannedSegment planned, int64_t alignment);

// `segment`'s grids within `allowed_extra` MACs, coarsest first until one is
// over; the search.grids_per_segment finest of them.
std::vector<PatchGeometry> AdmissibleGrids(const GraphFacts& facts, const Segment& segment, double allowed_extra,
                                           const PatchSearchOptions& search);

// The node of the original graph whose output is the largest original value
// live at `analysis`'s peak (the first peak step that has one), outside the
// segments `taken`.
std::optional<int> PeakNode(const Analysis& analysis, const GraphFacts& facts, const absl::flat_hash_set<int>& taken);

// The producers of the original values live at `analysis`'s first peak step,
// outside the segments `taken`, largest value first, at most `count` (equal
// sizes keep the analysis' order: the first is PeakNode's).
std::vector<int> PeakNodes(const Analysis& analysis, const GraphFacts& facts, const absl::flat_hash_set<int>& taken,
                           size_t count);

// As PeakNodes, at the worst step of the runtime's own planner (--runtime:
// MemoryFigures::runtime_peak_values). Its names are the runtime's rewritten
// graph's: a name the graph does not produce is cut at its last "." or "__"
// until it does ("conv_25__nchw.nchwc" is conv_25's), else skipped.
std::vector<int> RuntimePeakNodes(const Analysis& analysis, const GraphFacts& facts,
                                  const absl::flat_hash_set<int>& taken, size_t count);

// Segments around `peak`: read from a 4-D tensor that dominates it (the
// first segment's T, a backbone's feature), nearest first, not inside
// `avoid`; T at the peak node or at a patchable node after it.
std::vector<Segment> SegmentsAround(const GraphFacts& facts, int peak, const absl::flat_hash_set<int>& avoid,
                                    const absl::flat_hash_set<std::string>& avoid_values);

// Segments around `peak` that read several activations (a neck's stage: the
// Concat of an upsampled branch and a backbone skip, up to the next stride-2
// Conv or the tensor its heads read). For T at `peak` or a patchable node
// after it, the nodes are T's ancestors taken back from T while each is
// patchable, not in `avoid`, and read only by nodes already taken (so no
// value but T is read outside); a value read by a taken node and produced by
// one not taken is an input. Per T: the whole such closure, and the one
// kept to T's rows and columns (the stage, where an upsampling or a strided
// Conv reading another resolution starts); an N x C x 1 x 1 value (an SE
// gate) is always an input. Each also with recomputation (segment.h): an
// input whose producer is also read outside and reads fewer elements than
// it writes is recomputed by the patches from those. Only segments with two
// or more 4-D inputs that hold `peak` and a window op; nearest T first.
std::vector<Segment> MultiInputSegmentsAround(const GraphFacts& facts, int peak, const absl::flat_hash_set<int>& avoid);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_SECOND_SEGMENT_H_
