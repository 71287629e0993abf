// The patched model: each segment's nodes replaced by one copy per patch.
//
// Usage:
//   absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(model, facts, {{segment, geometry}});
//
// Per segment, in the segment's place in the node list, patch by patch
// (row-major, the order a sequential runtime then follows):
// - a Slice of X to the patch's input region (its halo included; nothing
//   where the region is all of X);
// - a copy of every node of the segment, reading the original initializers
//   by name (no weight is duplicated), with the patch's padding: the
//   original's where the patch touches the border, none inside;
// - a Slice where a node reads less of a value than the patch computed of
//   it (a branch with a smaller receptive field);
// then Concat along W of each row's patches and along H of the rows, into
// T under its own name: the rest of the graph is unchanged. value_info of
// the segment's inner values is dropped (they no longer exist).
// A segment whose T is kept in pieces (a chain over a stage) writes no
// Concat: the next segment, whose input T is, reads in each patch each
// region it needs from the pieces (a piece itself where the region is one,
// else Slices of the pieces it overlaps joined by Concat), so T is never
// whole and each piece lives until the last patch that reads it.
// Slice takes inputs from opset 10 on, attributes before (both written).
// For ONNX Runtime, which plans buffers by known shapes and runs a graph in
// a reverse depth-first order (docs/patching.md): a patch's input Slice reads
// its bounds from overridable initializers (graph inputs with the bounds as
// defaults; before opset 10 a Reshape to the patch's dims from one; an IR 3
// model is written as IR 4), so ORT frees each patch's tensors at their last
// use; T is a Reshape of the Concat to T's dims (a view), then a MaxPool 1x1
// (an identity ORT runs in NCHWc) where a reader of T is no Conv; a chain
// link's patches read the pieces through a barrier (zeros from the Shapes
// of every piece of the link before), so ORT runs link after link (and so
// does the analysis's schedule). Outputs are those of the model without them.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_REWRITE_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_REWRITE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/patching/segment.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

struct PlannedSegment {
  Segment segment;          // Its nodes.
  PatchGeometry geometry;   // Its grid and each patch's regions.
  bool output_in_pieces = false;  // T left as its patches' tiles, read by the next segment only (never assembled).
};

// `facts` describe `model.graph()`. Segments must not share nodes; a T kept
// in pieces must be no graph output and be read only by the one segment
// whose input it is.
absl::StatusOr<onnx::ModelProto> RewriteWithPatches(const onnx::ModelProto& model, const GraphFacts& facts,
                                                    const std::vector<PlannedSegment>& segments);

// For --stream-input's figure only (never written out): the same rewrite,
// but a segment's graph input X is delivered patch by patch. X is replaced
// by a stand-in input of one element per image (Nx1x1x1), and each Slice by an Expand of it to
// the patch's shape: the input patch then exists from its patch's first
// step to its last, as a camera delivering rows would make it, and X never
// whole (the stand-in's 64 aligned bytes stay in the arena). Errors:
// FailedPrecondition when X is read outside its segment (it must be whole).
absl::StatusOr<onnx::ModelProto> RewriteWithStreamedInput(const onnx::ModelProto& model, const GraphFacts& facts,
                                                          const std::vector<PlannedSegment>& segments);

// onnx's checker on `model`: the one place its
// exceptions are caught; the error names the node and op it stopped at.
absl::Status CheckModel(const onnx::ModelProto& model);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_REWRITE_H_
