// Patchable segments of a graph and the geometry of one cut into patches.
//
// Usage:
//   absl::StatusOr<GraphFacts> facts = MakeGraphFacts(model.graph(), shapes);
//   SegmentSearch found = SegmentsFrom(*facts, "input");
//   PatchGeometry geometry = GeometryOf(*facts, found.segments[0], {.rows = 4, .cols = 4});
//
// A segment reads one NCHW activation X (a graph input, or any tensor) and
// gives one tensor T: its nodes are every node between them (the ancestors
// of T's producer that depend on X), all patchable (spatial_ops.h), reading
// only X, each other and weights, and no value but T is read outside it.
// A segment found around a node (second_segment.h) may read several such
// activations (a neck's stage: the upsampled branch and the skip), each
// held whole and cut by its own receptive field, and an SE gate
// (N x C x 1 x 1) that every patch reads whole.
// T's rows and columns are cut into a grid; each patch's regions follow
// backwards from T's through every node (its receptive field, clipped to the
// tensor: what falls outside is the original padding).
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_SEGMENT_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_SEGMENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "analyzer/patching/spatial_ops.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

using TensorShapes = std::map<std::string, std::vector<int64_t>>;  // Value name -> static dims.

// Without --runtime, a patched model is written for ONNX Runtime on any
// x86-64 CPU: the block of its smallest NCHWc kernels (AVX2's; AVX-512's 16
// is a multiple of it).
inline constexpr int64_t kDefaultLayoutChannelBlock = 8;

// What the patching stages read of the main graph.
struct GraphFacts {
  const onnx::GraphProto* graph = nullptr;                          // Not owned.
  std::vector<int> order;                                           // Node indices, topologically sorted.
  absl::flat_hash_map<std::string, int> producer;                   // Value -> the node writing it.
  absl::flat_hash_map<std::string, std::vector<int>> consumers;     // Value -> nodes reading it.
  absl::flat_hash_set<std::string> dynamic;                         // Values that depend on a graph input.
  absl::flat_hash_set<std::string> graph_outputs;
  TensorShapes shapes;                                              // Every value of known static shape.
  absl::flat_hash_map<std::string, const onnx::TensorProto*> stored;  // Initializers and Constant values (not owned).
  // The channels of one NCHWc block of the runtime the patched model is
  // written for (RuntimeModel::LayoutChannelBlock; 0: it has no blocked
  // layout): which T a MaxPool 1x1 puts back in that layout (rewrite.h).
  int64_t layout_channel_block = kDefaultLayoutChannelBlock;

  std::optional<std::vector<int64_t>> ShapeOf(const std::string& value) const;
  bool IsStatic(const std::string& value) const { return !dynamic.contains(value); }
};

// The facts of `graph`, written for a runtime whose NCHWc block is
// `layout_channel_block`. Errors: a graph that is not a DAG.
absl::StatusOr<GraphFacts> MakeGraphFacts(const onnx::GraphProto& graph, TensorShapes shapes,
                                          int64_t layout_channel_block = kDefaultLayoutChannelBlock);

// The rule of a node of the graph (SpatialOpOf with the facts' lookups).
absl::StatusOr<SpatialOp> SpatialOpIn(const GraphFacts& facts, const onnx::NodeProto& node);

struct Segment {
  std::string input;              // X: held whole, sliced per patch.
  std::vector<std::string> other_inputs;  // More activations it reads, each held whole and sliced per patch by its
                                          // own receptive field (a neck's upsampled branch beside its skip).
  std::string output;             // T: assembled at full size from the patches.
  std::vector<int> nodes;         // Its nodes, in topological order (T's producer last).
  std::vector<SpatialOp> ops;     // Each node's rule, in the same order.
  // Nodes of `nodes` that also stay in the graph, whole: their output is read
  // outside too (an SE block's pool of the tensor the patches gate). Each
  // patch recomputes them from their own inputs, smaller than that output,
  // which then lives only until its outside readers ran.
  std::vector<int> recomputed;
};

// X, then the other inputs: every activation the segment reads from outside.
std::vector<std::string> InputsOf(const Segment& segment);

struct SegmentSearch {
  std::vector<Segment> segments;  // Every segment reading `input`, shortest first.
  std::string reason;             // Why there is none ("" when there are some).
};

// `lasts`, when given, limits T's producer to those nodes (a segment around
// a given node, read from an inner tensor).
SegmentSearch SegmentsFrom(const GraphFacts& facts, const std::string& input,
                           const absl::flat_hash_set<int>* lasts = nullptr);

struct Region {
  Span h;  // Rows.
  Span w;  // Columns.
  bool operator==(const Region&) const = default;
};

struct Pads {
  int64_t h_begin = 0, w_begin = 0, h_end = 0, w_end = 0;  // As ONNX orders them: begins, then ends.
  int64_t h_output_padding = 0, w_output_padding = 0;       // ConvTranspose: rows and columns added at the end.
};

struct PatchGeometry {
  struct Patch {
    int64_t row = 0, col = 0;                             // Its place in the grid.
    Region output;                                        // Its tile of T.
    absl::flat_hash_map<std::string, Region> produced;    // Each input and every value of the segment: rows and columns computed
                                                          // (a Resize computes factor x its input rows; readers crop).
    std::vector<std::vector<Region>> reads;               // Per segment node, per input: what it reads (empty size: a weight).
    std::vector<Pads> pads;                               // Per segment node: window ops' padding in this patch.
  };
  int64_t rows = 1;                 // Patches along H.
  int64_t cols = 1;                 // Patches along W.
  std::vector<Patch> patches;       // Row-major: the order they run.
  int64_t macs_before = 0;          // The segment's multiply-accumulates unpatched.
  int64_t macs_after = 0;           // Over all patches (the overlaps recomputed).
  bool empty_read = false;          // Some copy would read no row or column (a Pad's patch all padding): not usable.
};

struct Grid {
  int64_t rows = 1;
  int64_t cols = 1;
};

// Requires grid.rows <= T's H and grid.cols <= T's W.
PatchGeometry GeometryOf(const GraphFacts& facts, const Segment& segment, const Grid& grid);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_SEGMENT_H_
