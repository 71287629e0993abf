// How one node maps a region of its output to the region of its inputs it
// reads, over the two spatial axes (H, W) of NCHW tensors: the receptive
// field rules of patch-based inference (docs/patching.md).
//
// Usage:
//   absl::StatusOr<SpatialOp> op = SpatialOpOf(node, shapes, is_static);
//   Span rows = InputSpanOf(op->h, {.begin = 8, .end = 16});  // unclipped
//
// Four kinds, each exact:
// - window (Conv, MaxPool, AveragePool, LpPool): output row r reads input rows
//   [r*s - pad_begin, r*s - pad_begin + (k-1)*d + 1);
// - pointwise (activations, BatchNormalization, LRN, elementwise ops,
//   Concat along channels, Split along channels, Slice over channels):
//   output pixel (y, x) reads the same pixel of every activation input
//   (all of an N x C x 1 x 1 one broadcast over the image: an SE gate);
// - Pad (constant mode, over H and W), SpaceToDepth and a Slice over H or
//   W are windows too: one row, stride 1, padded as the Pad pads; b rows,
//   stride b; one row, stride `step`, starting `start` rows in;
// - transposed window (ConvTranspose without output_shape, no holes:
//   (k-1)*d + 1 >= s): output rows [a, b) read input rows
//   [ceil((a + pad_begin - (k-1)*d) / s), floor((b - 1 + pad_begin) / s) + 1);
// - upsample (Resize nearest or linear by an integer factor f, coordinate
//   transforms asymmetric, half_pixel, pytorch_half_pixel,
//   tf_half_pixel_for_nn): output row x = k*f + r reads input rows
//   k + first_read[r] to k + last_read[r] (nearest: the one row its
//   nearest_mode rounds to; linear: floor and floor + 1), so output rows
//   [a, b) read [a's first, (b-1)'s last + 1); the patch computes f x its
//   input rows, and its readers crop. DepthToSpace by b is an upsample by b
//   without halo.
// Anything else (align_corners, cubic, global pools, reshapes, 1-D or 3-D
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
  int64_t output_padding = 0;  // ConvTranspose only: rows added after the last one.
};

// One spatial axis of an upsampling by an integer factor (Resize).
struct Upsample {
  int64_t factor = 1;      // Output rows per input row.
  int64_t halo_begin = 0;  // Input rows before floor(r/f) that output row r may read (linear: 1).
  int64_t halo_end = 0;    // Input rows after it.
  // Per output row r mod factor, the first and last input row it reads,
  // relative to floor(r/f) (a nearest Resize rounds one way: rows 2k and
  // 2k + 1 of an asymmetric x2 with nearest_mode floor both read row k).
  // Empty: halo_begin and halo_end for every row.
  std::vector<int64_t> first_read;
  std::vector<int64_t> last_read;
};

enum class SpatialKind { kPointwise, kWindow, kTransposedWindow, kUpsample };

struct SpatialOp {
  SpatialKind kind = SpatialKind::kPointwise;
  Window h;                       // kWindow, kTransposedWindow: the H axis.
  Window w;                       // kWindow, kTransposedWindow: the W axis.
  Upsample up_h;                  // kUpsample: the H axis.
  Upsample up_w;                  // kUpsample: the W axis.
  int64_t macs_per_output = 0;    // Conv: (C_in / groups) x kh x kw per output element; 0 otherwise.
  int64_t macs_per_input = 0;     // ConvTranspose: (C_out / groups) x kh x kw per input element.
};

// An N x C x 1 x 1 activation (a squeeze-and-excitation gate): a pointwise
// op broadcasts it over the image, so every patch reads all of it.
bool IsImageGate(const std::vector<int64_t>& dims);

// Input rows read by output rows `out` (may reach into the padding: below 0
// or past the input's size).
Span InputSpanOf(const Window& window, const Span& out);
// The same for a transposed window (ConvTranspose): every input row that
// scatters into `out` (may reach below 0 or past the input's size).
Span TransposedInputSpanOf(const Window& window, const Span& out);
// The same for an upsampling (Resize), its halo included.
Span UpsampledInputSpanOf(const Upsample& upsample, const Span& out);

// Static dims of a value, nullopt when unknown.
using ShapeLookup = std::function<std::optional<std::vector<int64_t>>(const std::string&)>;
// True for values that do not depend on any graph input (weights, folded values).
using StaticLookup = std::function<bool(const std::string&)>;
// The stored value of a weight (initializer or Constant), nullptr when unknown.
using ValueLookup = std::function<const onnx::TensorProto*(const std::string&)>;

// The node's spatial rule, or FailedPrecondition saying why it is not
// patchable (one phrase: "Resize by a non-integer factor"). `value_of` reads
// Resize's scales (without it, a Resize given scales is not patchable).
absl::StatusOr<SpatialOp> SpatialOpOf(const onnx::NodeProto& node, const ShapeLookup& shape_of,
                                      const StaticLookup& is_static, const ValueLookup& value_of = nullptr);

// The int64 values of a stored tensor, nullopt when they are not in the model.
std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto* tensor);

// A Slice's bounds, one entry per axis sliced (axes and steps filled in
// when the model leaves them out).
struct SliceBounds {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> axes;
  std::vector<int64_t> steps;
};
// Errors: bounds computed or not stored in the model.
absl::StatusOr<SliceBounds> SliceBoundsOf(const onnx::NodeProto& node, const StaticLookup& is_static,
                                          const ValueLookup& value_of);

// Multiply-accumulates of a node at its full output size (Conv,
// ConvTranspose, Gemm, MatMul; 0 for other ops or unknown shapes).
int64_t NodeMacs(const onnx::NodeProto& node, const ShapeLookup& shape_of);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_SPATIAL_OPS_H_
