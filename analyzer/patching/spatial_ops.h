// How one node maps a region of its output to the region of its inputs it
// reads, over the two spatial axes (H, W) of NCHW tensors: the receptive
// field rules of patch-based inference (docs/patching.md).
//
// Usage:
//   absl::StatusOr<SpatialOp> op = SpatialOpOf(node, shapes, is_static);
//   Span rows = InputSpanOf(op->h, {.begin = 8, .end = 16});  // unclipped
//
// Two kinds, each exact:
// - window (Conv, MaxPool, AveragePool, LpPool): output row r reads input rows
//   [r*s - pad_begin, r*s - pad_begin + (k-1)*d + 1);
// - pointwise (activations, BatchNormalization, LRN, elementwise ops,
//   Concat along channels): output pixel (y, x) reads the same pixel of
//   every activation input.
// Anything else (Resize, ConvTranspose, global pools, reshapes, 1-D or 3-D
// windows, a weight with a spatial extent) is not patchable: the error says
// why, and the segment ends before it.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_SPATIAL_OPS_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_SPATIAL_OPS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

// A half-open range [begin, end) of rows or columns.
struct Span {
  int64_t begin = 0;  // First index.
  int64_t end = 0;    // One past the last.
  int64_t size() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

// The smallest span holding both; an empty span holds nothing.
Span Hull(const Span& a, const Span& b);

// One spatial axis of a sliding window.
struct Window {
  int64_t kernel = 1;     // Kernel extent before dilation.
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;  // Effective padding (auto_pad resolved from the shapes).
  int64_t pad_end = 0;
};

enum class SpatialKind { kPointwise, kWindow };

struct SpatialOp {
  SpatialKind kind = SpatialKind::kPointwise;
  Window h;                       // kWindow: the H axis.
  Window w;                       // kWindow: the W axis.
  int64_t macs_per_output = 0;    // Conv: (C_in / groups) x kh x kw per output element; 0 otherwise.
};

// Input rows read by output rows `out` (may reach into the padding: below 0
// or past the input's size).
Span InputSpanOf(const Window& window, const Span& out);

// Static dims of a value, nullopt when unknown.
using ShapeLookup = std::function<std::optional<std::vector<int64_t>>(const std::string&)>;
// True for values that do not depend on any graph input (weights, folded values).
using StaticLookup = std::function<bool(const std::string&)>;

// The node's spatial rule, or FailedPrecondition saying why it is not
// patchable (one phrase: "Resize changes the spatial grid").
absl::StatusOr<SpatialOp> SpatialOpOf(const onnx::NodeProto& node, const ShapeLookup& shape_of,
                                      const StaticLookup& is_static);

// Multiply-accumulates of a node at its full output size (Conv,
// ConvTranspose, Gemm, MatMul; 0 for other ops or unknown shapes).
int64_t NodeMacs(const onnx::NodeProto& node, const ShapeLookup& shape_of);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_SPATIAL_OPS_H_
