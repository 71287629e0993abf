#include "analyzer/patching/spatial_ops.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint::patching {
namespace {

absl::Status NotPatchable(const std::string& why) { return absl::FailedPreconditionError(why); }

// Ops whose output pixel (y, x) depends on the same pixel of their inputs only.
const absl::flat_hash_set<std::string>& PointwiseOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "HardSigmoid", "HardSwish", "Elu", "Selu",
      "Softplus", "Softsign", "Identity", "Dropout", "BatchNormalization", "LRN", "Add", "Sub", "Mul", "Div",
      "Sum", "Max", "Min", "Mean", "Pow", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil",
      "Erf", "Gelu", "Mish", "Concat"};
  return *ops;
}

// Per-channel parameters (not broadcast): their dims need no check.
bool ChannelParameters(const std::string& op) { return op == "BatchNormalization"; }

// A static input broadcast against an NCHW output must have no spatial extent.
bool HasSpatialExtent(const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  if (rank >= 1 && dims[rank - 1] != 1) return true;
  if (rank >= 2 && dims[rank - 2] != 1) return true;
  return false;
}

absl::StatusOr<SpatialOp> PointwiseOf(const onnx::NodeProto& node, const std::vector<int64_t>& out,
                                      const ShapeLookup& shape_of, const StaticLookup& is_static) {
  if (node.op_type() == "Concat") {
    const int64_t axis = IntAttribute(node, "axis", 1);
    if (axis != 1 && axis != -3) return NotPatchable("Concat not along channels");
  }
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string& input = node.input(i);
    if (input.empty()) continue;
    const std::optional<std::vector<int64_t>> dims = shape_of(input);
    if (is_static(input)) {
      if (ChannelParameters(node.op_type())) continue;
      if (!dims.has_value()) return NotPatchable(absl::StrCat("weight '", input, "' has no known shape"));
      if (HasSpatialExtent(*dims)) return NotPatchable(absl::StrCat("weight '", input, "' varies over H or W"));
      continue;
    }
    if (dims.has_value() && IsImageGate(*dims)) continue;  // An SE gate, broadcast: every patch reads all of it.
    if (!dims.has_value() || dims->size() != 4 || (*dims)[2] != out[2] || (*dims)[3] != out[3]) {
      return NotPatchable(absl::StrCat("input '", input, "' is not an NCHW tensor of the output's H x W"));
    }
  }
  return SpatialOp{.kind = SpatialKind::kPointwise};
}

// One axis of a window op: attributes for spatial axis `axis` (0 = H, 1 = W).
absl::StatusOr<Window> AxisWindow(const onnx::NodeProto& node, const std::vector<int64_t>& kernel, int axis,
                                  int64_t in_size, int64_t out_size) {
  const std::vector<int64_t> strides = IntsAttribute(node, "strides");
  const std::vector<int64_t> dilations = IntsAttribute(node, "dilations");
  const std::vector<int64_t> pads = IntsAttribute(node, "pads");
  Window window{.kernel = kernel[axis]};
  if (!strides.empty()) window.stride = strides[axis];
  if (!dilations.empty()) window.dilation = dilations[axis];
  if (window.stride < 1 || window.dilation < 1 || window.kernel < 1) return NotPatchable("a stride, dilation or kernel below 1");
  const int64_t extent = (window.kernel - 1) * window.dilation + 1;
  const std::string auto_pad = StringAttribute(node, "auto_pad");
  if (auto_pad.empty() || auto_pad == "NOTSET") {
    if (!pads.empty()) {
      window.pad_begin = pads[axis];
      window.pad_end = pads[axis + 2];
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t total = std::max<int64_t>(0, (out_size - 1) * window.stride + extent - in_size);
    window.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    window.pad_end = total - window.pad_begin;
  } else if (auto_pad != "VALID") {
    return NotPatchable(absl::StrCat("auto_pad ", auto_pad));
  }
  // The last output's window must end inside the padded input (ceil_mode may
  // reach past it: allowed for MaxPool, where padding never wins).
  const int64_t last_end = (out_size - 1) * window.stride - window.pad_begin + extent;
  if (last_end > in_size + window.pad_end && node.op_type() != "MaxPool") {
    return NotPatchable("ceil_mode reads past the padding");
  }
  if (window.pad_begin < 0 || window.pad_end < 0) return NotPatchable("negative padding");
  return window;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The float values of a stored tensor, nullopt when they are not in the model.
std::optional<std::vector<float>> FloatValues(const onnx::TensorProto* tensor) {
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  if (tensor->float_data_size() > 0) return std::vector<float>(tensor->float_data().begin(), tensor->float_data().end());
  if (!tensor->has_raw_data() || tensor->raw_data().size() % sizeof(float) != 0) return std::nullopt;
  std::vector<float> values(tensor->raw_data().size() / sizeof(float));
  std::memcpy(values.data(), tensor->raw_data().data(), tensor->raw_data().size());  // Little-endian hosts only, as ONNX stores.
  return values;
}

// How a Resize turns the input coordinate of an output row into the rows it reads.
enum class Rounding { kLinear, kFloorAndCeil, kFloor, kCeil, kRoundPreferFloor, kRoundPreferCeil };

// The rounding of a Resize's node: linear reads floor and floor + 1;
// nearest rounds as nearest_mode says (round_prefer_floor when absent);
// opset 10's Resize has no nearest_mode: both neighbours, whichever it picks.
absl::StatusOr<Rounding> RoundingOf(const onnx::NodeProto& node, const std::string& mode, bool opset10) {
  if (mode == "linear") return Rounding::kLinear;
  if (opset10) return Rounding::kFloorAndCeil;
  const std::string nearest_mode =
      StringAttribute(node, "nearest_mode").empty() ? "round_prefer_floor" : StringAttribute(node, "nearest_mode");
  if (nearest_mode == "floor") return Rounding::kFloor;
  if (nearest_mode == "ceil") return Rounding::kCeil;
  if (nearest_mode == "round_prefer_floor") return Rounding::kRoundPreferFloor;
  if (nearest_mode == "round_prefer_ceil") return Rounding::kRoundPreferCeil;
  return NotPatchable(absl::StrCat("Resize with nearest_mode ", nearest_mode));
}

// The first and last input row read at coordinate num / den (den > 0).
std::pair<int64_t, int64_t> RowsAt(int64_t num, int64_t den, Rounding rounding) {
  const int64_t floor = FloorDiv(num, den);
  const int64_t ceil = CeilDiv(num, den);
  switch (rounding) {
    case Rounding::kLinear:
      return {floor, floor + 1};
    case Rounding::kFloorAndCeil:
      return {floor, ceil};
    case Rounding::kFloor:
      return {floor, floor};
    case Rounding::kCeil:
      return {ceil, ceil};
    case Rounding::kRoundPreferFloor: {
      const int64_t row = CeilDiv(2 * num - den, 2 * den);  // Nearest, a tie (k + 0.5) down.
      return {row, row};
    }
    case Rounding::kRoundPreferCeil: {
      const int64_t row = FloorDiv(2 * num + den, 2 * den);  // Nearest, a tie up.
      return {row, row};
    }
  }
  return {floor, ceil};
}

// One axis of a Resize by the integer factor `factor`: output row k*f + r maps
// to input coordinate k + num/den (exact rationals: the integer factors are
// the scales) and reads the rows `rounding` gives there.
absl::StatusOr<Upsample> UpsampleAxis(int64_t factor, const std::string& transform, Rounding rounding) {
  Upsample axis{.factor = factor};
  int64_t low = 0, high = 0;
  for (int64_t r = 0; r < factor; ++r) {
    int64_t num = 0, den = 0;
    if (transform == "asymmetric") {
      num = r, den = factor;
    } else if (transform == "half_pixel" || transform == "pytorch_half_pixel") {
      num = 2 * r + 1 - factor, den = 2 * factor;  // (r + 0.5) / f - 0.5
    } else if (transform == "tf_half_pixel_for_nn") {
      num = 2 * r + 1, den = 2 * factor;  // (r + 0.5) / f
    } else {
      return NotPatchable(absl::StrCat("Resize with coordinate_transformation_mode ", transform));
    }
    const auto [first, last] = RowsAt(num, den, rounding);
    axis.first_read.push_back(first);
    axis.last_read.push_back(last);
    low = std::min(low, first);
    high = std::max(high, last);
  }
  axis.halo_begin = -low;
  axis.halo_end = high;
  return axis;
}

absl::StatusOr<SpatialOp> ResizeOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                   const std::vector<int64_t>& out, const StaticLookup& is_static,
                                   const ValueLookup& value_of) {
  const std::string mode = StringAttribute(node, "mode").empty() ? "nearest" : StringAttribute(node, "mode");
  if (mode != "nearest" && mode != "linear") return NotPatchable(absl::StrCat("Resize in mode ", mode));
  if (IntAttribute(node, "antialias", 0) != 0) return NotPatchable("Resize with antialias");
  if (FindAttribute(node, "axes") != nullptr) return NotPatchable("Resize with axes");
  // Opset 10 has (X, scales) and no attribute for the transform: asymmetric.
  const bool opset10 = node.input_size() == 2;
  const std::string transform = opset10 || StringAttribute(node, "coordinate_transformation_mode").empty()
                                    ? (opset10 ? "asymmetric" : "half_pixel")
                                    : StringAttribute(node, "coordinate_transformation_mode");
  const int scales_index = opset10 ? 1 : 2;
  for (int i = 1; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && !is_static(node.input(i))) return NotPatchable("Resize with computed scales or sizes");
  }
  if (in[0] != out[0] || in[1] != out[1]) return NotPatchable("Resize over N or C");
  SpatialOp result{.kind = SpatialKind::kUpsample};
  std::vector<int64_t> factors;
  for (int axis : {2, 3}) {
    if (in[axis] < 1 || out[axis] % in[axis] != 0) return NotPatchable("Resize by a non-integer factor");
    factors.push_back(out[axis] / in[axis]);
  }
  const bool has_sizes = node.input_size() > 3 && !node.input(3).empty();
  if (!has_sizes) {
    // The mapping uses the scales as given: they must be the integer factors exactly.
    if (node.input_size() <= scales_index || node.input(scales_index).empty()) return NotPatchable("Resize without scales or sizes");
    const std::optional<std::vector<float>> scales =
        value_of == nullptr ? std::nullopt : FloatValues(value_of(node.input(scales_index)));
    if (!scales.has_value()) return NotPatchable("Resize scales of unknown value");
    if (scales->size() != 4 || (*scales)[0] != 1.0f || (*scales)[1] != 1.0f ||
        (*scales)[2] != static_cast<float>(factors[0]) || (*scales)[3] != static_cast<float>(factors[1])) {
      return NotPatchable("Resize scales are not integer factors over H and W");
    }
  }
  absl::StatusOr<Rounding> rounding = RoundingOf(node, mode, opset10);
  if (!rounding.ok()) return rounding.status();
  absl::StatusOr<Upsample> h = UpsampleAxis(factors[0], transform, *rounding);
  if (!h.ok()) return h.status();
  absl::StatusOr<Upsample> w = UpsampleAxis(factors[1], transform, *rounding);
  if (!w.ok()) return w.status();
  result.up_h = *h;
  result.up_w = *w;
  return result;
}

absl::StatusOr<SpatialOp> ConvTransposeOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                          const std::vector<int64_t>& out, const ShapeLookup& shape_of,
                                          const StaticLookup& is_static) {
  if (node.input_size() < 2 || !is_static(node.input(1))) return NotPatchable("ConvTranspose with a computed filter");
  if (node.input_size() > 2 && !node.input(2).empty() && !is_static(node.input(2))) {
    return NotPatchable("ConvTranspose with a computed bias");
  }
  const std::optional<std::vector<int64_t>> filter = shape_of(node.input(1));
  if (!filter.has_value() || filter->size() != 4) return NotPatchable("ConvTranspose filter of unknown shape");
  if (FindAttribute(node, "output_shape") != nullptr) return NotPatchable("ConvTranspose with output_shape");
  const std::string auto_pad = StringAttribute(node, "auto_pad");
  if (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "VALID") {
    return NotPatchable(absl::StrCat("ConvTranspose with auto_pad ", auto_pad));
  }
  std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape");
  if (kernel.empty()) kernel = {(*filter)[2], (*filter)[3]};
  if (kernel.size() != 2) return NotPatchable("ConvTranspose is not 2-D");
  const std::vector<int64_t> strides = IntsAttribute(node, "strides");
  const std::vector<int64_t> dilations = IntsAttribute(node, "dilations");
  const std::vector<int64_t> pads = auto_pad == "VALID" ? std::vector<int64_t>{} : IntsAttribute(node, "pads");
  const std::vector<int64_t> output_padding = IntsAttribute(node, "output_padding");
  SpatialOp result{.kind = SpatialKind::kTransposedWindow, .macs_per_input = (*filter)[1] * (*filter)[2] * (*filter)[3]};
  for (int axis : {0, 1}) {
    Window window{.kernel = kernel[axis]};
    if (!strides.empty()) window.stride = strides[axis];
    if (!dilations.empty()) window.dilation = dilations[axis];
    if (pads.size() == 4) window.pad_begin = pads[axis], window.pad_end = pads[axis + 2];
    if (output_padding.size() == 2) window.output_padding = output_padding[axis];
    if (window.stride < 1 || window.dilation < 1 || window.kernel < 1) return NotPatchable("a stride, dilation or kernel below 1");
    if (window.pad_begin < 0 || window.pad_end < 0 || window.output_padding < 0) return NotPatchable("negative padding");
    const int64_t extent = (window.kernel - 1) * window.dilation + 1;
    // Every output row must have an input row scattering into it: a patch's
    // copy then ends where its rows end.
    if (extent < window.stride) return NotPatchable("ConvTranspose with rows no input reaches (kernel shorter than stride)");
    const int64_t in_size = in[2 + axis], out_size = out[2 + axis];
    if (out_size != (in_size - 1) * window.stride + extent + window.output_padding - window.pad_begin - window.pad_end) {
      return NotPatchable("ConvTranspose output size does not follow from its window");
    }
    (axis == 0 ? result.h : result.w) = window;
  }
  return result;
}

}  // namespace

std::optional<std::vector<int64_t>> IntValues(const onnx::TensorProto* tensor) {
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::INT64) return std::nullopt;
  if (tensor->int64_data_size() > 0) return std::vector<int64_t>(tensor->int64_data().begin(), tensor->int64_data().end());
  if (!tensor->has_raw_data() || tensor->raw_data().size() % sizeof(int64_t) != 0) return std::nullopt;
  std::vector<int64_t> values(tensor->raw_data().size() / sizeof(int64_t));
  std::memcpy(values.data(), tensor->raw_data().data(), tensor->raw_data().size());  // Little-endian, as ONNX stores.
  return values;
}

absl::StatusOr<SliceBounds> SliceBoundsOf(const onnx::NodeProto& node, const StaticLookup& is_static,
                                          const ValueLookup& value_of) {
  SliceBounds bounds;
  if (node.input_size() == 1) {  // Opset < 10: attributes, step 1.
    bounds.starts = IntsAttribute(node, "starts");
    bounds.ends = IntsAttribute(node, "ends");
    bounds.axes = IntsAttribute(node, "axes");
  } else {
    for (int i = 1; i < node.input_size(); ++i) {
      if (!node.input(i).empty() && !is_static(node.input(i))) return NotPatchable("Slice with computed bounds");
    }
    std::vector<int64_t>* fields[] = {&bounds.starts, &bounds.ends, &bounds.axes, &bounds.steps};
    for (int i = 1; i < node.input_size() && i <= 4; ++i) {
      if (node.input(i).empty()) continue;
      const std::optional<std::vector<int64_t>> values =
          value_of == nullptr ? std::nullopt : IntValues(value_of(node.input(i)));
      if (!values.has_value()) return NotPatchable("Slice bounds of unknown value");
      *fields[i - 1] = *values;
    }
  }
  if (bounds.axes.empty()) {
    for (size_t i = 0; i < bounds.starts.size(); ++i) bounds.axes.push_back(static_cast<int64_t>(i));
  }
  if (bounds.steps.empty()) bounds.steps.assign(bounds.starts.size(), 1);
  if (bounds.ends.size() != bounds.starts.size() || bounds.axes.size() != bounds.starts.size() ||
      bounds.steps.size() != bounds.starts.size()) {
    return NotPatchable("Slice bounds of different lengths");
  }
  return bounds;
}

namespace {

// Every activation input and output of `node` is NCHW with `in`'s H x W.
absl::Status SameImage(const onnx::NodeProto& node, const std::vector<int64_t>& in, const ShapeLookup& shape_of) {
  for (const std::string& output : node.output()) {
    if (output.empty()) continue;
    const std::optional<std::vector<int64_t>> dims = shape_of(output);
    if (!dims.has_value() || dims->size() != 4 || (*dims)[0] != in[0] || (*dims)[2] != in[2] || (*dims)[3] != in[3]) {
      return NotPatchable(absl::StrCat(node.op_type(), " output '", output, "' is not an NCHW tensor of its input's N x H x W"));
    }
  }
  return absl::OkStatus();
}

// Split along channels (any split sizes, given or even): each output pixel
// is the same pixel of the input, a range of its channels.
absl::StatusOr<SpatialOp> SplitOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                  const ShapeLookup& shape_of, const StaticLookup& is_static) {
  const int64_t axis = IntAttribute(node, "axis", 0);
  if (axis != 1 && axis != -3) return NotPatchable("Split not along channels");
  if (node.input_size() > 1 && !node.input(1).empty() && !is_static(node.input(1))) {
    return NotPatchable("Split with computed sizes");
  }
  if (absl::Status same = SameImage(node, in, shape_of); !same.ok()) return same;
  return SpatialOp{.kind = SpatialKind::kPointwise};
}

// Slice: over N or C only it is pointwise. Over H or W, with a step s >= 1
// and a start st (negative ones counted from the end, clamped as ONNX
// does), output row r is input row st + r*s: a window of one row, stride s,
// that starts st rows in (pad_begin = -st; YOLOv5's Focus). Bounds stored in
// the model (or attributes before opset 10).
absl::StatusOr<SpatialOp> SliceOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                  const std::vector<int64_t>& out, const ShapeLookup& shape_of,
                                  const StaticLookup& is_static, const ValueLookup& value_of) {
  absl::StatusOr<SliceBounds> bounds = SliceBoundsOf(node, is_static, value_of);
  if (!bounds.ok()) return bounds.status();
  SpatialOp result{.kind = SpatialKind::kPointwise};
  for (size_t i = 0; i < bounds->axes.size(); ++i) {
    const int64_t axis = bounds->axes[i] < 0 ? bounds->axes[i] + 4 : bounds->axes[i];
    if (axis < 0 || axis > 3) return NotPatchable("Slice axis out of range");
    if (axis < 2) continue;
    const int64_t step = bounds->steps[i];
    if (step < 1) return NotPatchable("Slice over H or W with a step below 1");
    const int64_t size = in[axis];
    const auto resolve = [size](int64_t index) { return std::clamp<int64_t>(index < 0 ? index + size : index, 0, size); };
    const int64_t first = resolve(bounds->starts[i]), last = resolve(bounds->ends[i]);
    const int64_t count = last > first ? (last - first + step - 1) / step : 0;
    if (count < 1 || count != out[axis]) return NotPatchable("Slice output size does not follow from its bounds");
    result.kind = SpatialKind::kWindow;
    (axis == 2 ? result.h : result.w) = {.kernel = 1, .stride = step, .pad_begin = -first};
  }
  if (result.kind == SpatialKind::kPointwise) {
    if (absl::Status same = SameImage(node, in, shape_of); !same.ok()) return same;
  }
  return result;
}

// Pad in constant mode over H and W only: a window of one row and column,
// stride 1, padded as the Pad pads (a patch's copy pads only at the border).
absl::StatusOr<SpatialOp> PadOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& out, const StaticLookup& is_static,
                                const ValueLookup& value_of) {
  const std::string mode = StringAttribute(node, "mode");
  if (!mode.empty() && mode != "constant") return NotPatchable(absl::StrCat("Pad in mode ", mode));
  std::vector<int64_t> pads;
  if (node.input_size() == 1) {  // Opset < 11: attribute.
    pads = IntsAttribute(node, "pads");
  } else {
    for (int i = 1; i < node.input_size(); ++i) {
      if (!node.input(i).empty() && !is_static(node.input(i))) return NotPatchable("Pad with computed pads or value");
    }
    if (node.input_size() > 3 && !node.input(3).empty()) return NotPatchable("Pad with axes");
    const std::optional<std::vector<int64_t>> given =
        value_of == nullptr ? std::nullopt : IntValues(value_of(node.input(1)));
    if (!given.has_value()) return NotPatchable("Pad pads of unknown value");
    pads = *given;
  }
  if (pads.size() != 8) return NotPatchable("Pad of a tensor that is not 4-D");
  if (pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0) return NotPatchable("Pad over N or C");
  SpatialOp result{.kind = SpatialKind::kWindow};
  result.h = {.pad_begin = pads[2], .pad_end = pads[6]};
  result.w = {.pad_begin = pads[3], .pad_end = pads[7]};
  if (pads[2] < 0 || pads[3] < 0 || pads[6] < 0 || pads[7] < 0) return NotPatchable("Pad with negative pads (a crop)");
  if (out[2] != in[2] + pads[2] + pads[6] || out[3] != in[3] + pads[3] + pads[7] || out[1] != in[1]) {
    return NotPatchable("Pad output size does not follow from its pads");
  }
  return result;
}

// DepthToSpace by block b: output row r is row floor(r/b) of the input (its
// channels rearranged), an upsampling by b without halo. SpaceToDepth by b:
// output row r reads input rows [r*b, r*b + b), a window of b with stride b.
absl::StatusOr<SpatialOp> BlockOf(const onnx::NodeProto& node, const std::vector<int64_t>& in,
                                  const std::vector<int64_t>& out) {
  const int64_t block = IntAttribute(node, "blocksize", 0);
  if (block < 1) return NotPatchable(absl::StrCat(node.op_type(), " without a blocksize"));
  if (node.op_type() == "DepthToSpace") {
    if (out[2] != in[2] * block || out[3] != in[3] * block) return NotPatchable("DepthToSpace output size does not follow");
    SpatialOp result{.kind = SpatialKind::kUpsample};
    result.up_h = {.factor = block};
    result.up_w = {.factor = block};
    return result;
  }
  if (in[2] != out[2] * block || in[3] != out[3] * block) return NotPatchable("SpaceToDepth of a size its block does not divide");
  SpatialOp result{.kind = SpatialKind::kWindow};
  result.h = {.kernel = block, .stride = block};
  result.w = {.kernel = block, .stride = block};
  return result;
}

}  // namespace

Span TransposedInputSpanOf(const Window& window, const Span& out) {
  const int64_t reach = (window.kernel - 1) * window.dilation;
  return {.begin = CeilDiv(out.begin + window.pad_begin - reach, window.stride),
          .end = FloorDiv(out.end - 1 + window.pad_begin, window.stride) + 1};
}

Span UpsampledInputSpanOf(const Upsample& upsample, const Span& out) {
  const int64_t f = upsample.factor;
  if (upsample.first_read.size() == static_cast<size_t>(f) && upsample.last_read.size() == static_cast<size_t>(f)) {
    // The rows read never go back as the output row grows: the first row's first to the last row's last.
    const int64_t last = out.end - 1;
    return {.begin = FloorDiv(out.begin, f) + upsample.first_read[out.begin - FloorDiv(out.begin, f) * f],
            .end = FloorDiv(last, f) + upsample.last_read[last - FloorDiv(last, f) * f] + 1};
  }
  return {.begin = FloorDiv(out.begin, f) - upsample.halo_begin, .end = FloorDiv(out.end - 1, f) + 1 + upsample.halo_end};
}

bool IsImageGate(const std::vector<int64_t>& dims) { return dims.size() == 4 && dims[2] == 1 && dims[3] == 1; }

Span Hull(const Span& a, const Span& b) {
  if (a.size() <= 0) return b;
  if (b.size() <= 0) return a;
  return {.begin = std::min(a.begin, b.begin), .end = std::max(a.end, b.end)};
}

Span InputSpanOf(const Window& window, const Span& out) {
  const int64_t extent = (window.kernel - 1) * window.dilation + 1;
  return {.begin = out.begin * window.stride - window.pad_begin,
          .end = (out.end - 1) * window.stride - window.pad_begin + extent};
}

absl::StatusOr<SpatialOp> SpatialOpOf(const onnx::NodeProto& node, const ShapeLookup& shape_of,
                                      const StaticLookup& is_static, const ValueLookup& value_of) {
  const std::string& op = node.op_type();
  if (!IsDefaultDomain(node)) return NotPatchable(absl::StrCat("op of domain ", node.domain()));
  if (node.output_size() < 1 || node.output(0).empty() || (node.output_size() != 1 && op != "Split")) {
    return NotPatchable(absl::StrCat(op, " with several outputs"));
  }
  const std::optional<std::vector<int64_t>> out = shape_of(node.output(0));
  if (!out.has_value() || out->size() != 4) return NotPatchable(absl::StrCat(op, " output is not a 4-D NCHW tensor"));
  if (PointwiseOps().contains(op)) return PointwiseOf(node, *out, shape_of, is_static);
  const bool conv = op == "Conv";
  static const auto* kRuled = new absl::flat_hash_set<std::string>{
      "MaxPool", "AveragePool", "LpPool", "Resize", "ConvTranspose", "Split", "Slice", "Pad", "DepthToSpace", "SpaceToDepth"};
  if (!conv && !kRuled->contains(op)) {
    return NotPatchable(absl::StrCat(op, " has no patch rule (Conv, ConvTranspose, pooling, Resize, Pad, Split, Slice over "
                                     "channels, DepthToSpace, SpaceToDepth and pointwise ops only)"));
  }
  if (node.input_size() < 1 || is_static(node.input(0))) return NotPatchable(absl::StrCat(op, " of a weight"));
  const std::optional<std::vector<int64_t>> in = shape_of(node.input(0));
  if (!in.has_value() || in->size() != 4) return NotPatchable(absl::StrCat(op, " input is not a 4-D NCHW tensor"));
  if (op == "Resize") return ResizeOf(node, *in, *out, is_static, value_of);
  if (op == "Split") return SplitOf(node, *in, shape_of, is_static);
  if (op == "Slice") return SliceOf(node, *in, *out, shape_of, is_static, value_of);
  if (op == "Pad") return PadOf(node, *in, *out, is_static, value_of);
  if (op == "DepthToSpace" || op == "SpaceToDepth") return BlockOf(node, *in, *out);
  if (op == "ConvTranspose") return ConvTransposeOf(node, *in, *out, shape_of, is_static);
  std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape");
  int64_t macs_per_output = 0;
  if (conv) {
    if (node.input_size() < 2 || !is_static(node.input(1))) return NotPatchable("Conv with a computed filter");
    const std::optional<std::vector<int64_t>> filter = shape_of(node.input(1));
    if (!filter.has_value() || filter->size() != 4) return NotPatchable("Conv filter of unknown shape");
    if (node.input_size() > 2 && !node.input(2).empty() && !is_static(node.input(2))) {
      return NotPatchable("Conv with a computed bias");
    }
    if (kernel.empty()) kernel = {(*filter)[2], (*filter)[3]};
    macs_per_output = (*filter)[1] * (*filter)[2] * (*filter)[3];
  }
  if (kernel.size() != 2) return NotPatchable(absl::StrCat(op, " is not 2-D"));
  SpatialOp result{.kind = SpatialKind::kWindow, .macs_per_output = macs_per_output};
  absl::StatusOr<Window> h = AxisWindow(node, kernel, 0, (*in)[2], (*out)[2]);
  if (!h.ok()) return h.status();
  absl::StatusOr<Window> w = AxisWindow(node, kernel, 1, (*in)[3], (*out)[3]);
  if (!w.ok()) return w.status();
  result.h = *h;
  result.w = *w;
  // The output's size must follow from the window (else the shapes disagree with our rule).
  for (const auto& [window, in_size, out_size] :
       {std::tuple{result.h, (*in)[2], (*out)[2]}, std::tuple{result.w, (*in)[3], (*out)[3]}}) {
    const int64_t extent = (window.kernel - 1) * window.dilation + 1;
    const int64_t span = in_size + window.pad_begin + window.pad_end - extent;
    if (span < 0) return NotPatchable(absl::StrCat(op, " window larger than its padded input"));
    const int64_t floor_size = span / window.stride + 1;
    const int64_t ceil_size = (span + window.stride - 1) / window.stride + 1;
    if (out_size != floor_size && out_size != ceil_size) {
      return NotPatchable(absl::StrCat(op, " output size does not follow from its window"));
    }
  }
  return result;
}

int64_t NodeMacs(const onnx::NodeProto& node, const ShapeLookup& shape_of) {
  const std::string& op = node.op_type();
  if (node.output_size() < 1) return 0;
  const std::optional<std::vector<int64_t>> out = shape_of(node.output(0));
  if (!out.has_value()) return 0;
  int64_t out_elements = 1;
  for (int64_t dim : *out) out_elements *= dim;
  if (op == "Conv" && node.input_size() >= 2) {
    const std::optional<std::vector<int64_t>> filter = shape_of(node.input(1));
    if (!filter.has_value() || filter->size() < 2) return 0;
    int64_t per_output = 1;
    for (size_t i = 1; i < filter->size(); ++i) per_output *= (*filter)[i];
    return out_elements * per_output;
  }
  if (op == "ConvTranspose" && node.input_size() >= 2) {
    // Each input element scatters into C_out/groups x kernel outputs.
    const std::optional<std::vector<int64_t>> in = shape_of(node.input(0));
    const std::optional<std::vector<int64_t>> filter = shape_of(node.input(1));
    if (!in.has_value() || !filter.has_value() || filter->size() < 2) return 0;
    int64_t in_elements = 1;
    for (int64_t dim : *in) in_elements *= dim;
    int64_t per_input = 1;
    for (size_t i = 1; i < filter->size(); ++i) per_input *= (*filter)[i];
    return in_elements * per_input;
  }
  if ((op == "MatMul" || op == "Gemm") && node.input_size() >= 2) {
    const std::optional<std::vector<int64_t>> a = shape_of(node.input(0));
    if (!a.has_value() || a->empty()) return 0;
    int64_t inner = a->back();
    if (op == "Gemm" && IntAttribute(node, "transA", 0) != 0 && a->size() == 2) inner = (*a)[0];
    return out_elements * inner;
  }
  return 0;
}

}  // namespace footprint::patching
