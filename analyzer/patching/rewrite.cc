#include "analyzer/patching/rewrite.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_domain.h"
#include "onnx/checker.h"

namespace footprint::patching {
namespace {

struct Writer {
  onnx::GraphProto* graph = nullptr;          // The new graph (its nodes rebuilt).
  bool slice_takes_inputs = true;             // Opset >= 10.
  bool patch_dims_overridable = true;         // Opset >= 5 (Reshape takes its shape as an input).
  bool batch_named = false;                   // A graph input's batch dim is a name (--dim binds it for the analysis only).

  // The dims a written Reshape gives a patch or T: the batch as its input's
  // (0) where the model leaves it to the caller, so the written model runs at
  // any batch as the original does.
  std::vector<int64_t> ReshapeDims(std::vector<int64_t> dims) const {
    if (batch_named && !dims.empty()) dims[0] = 0;
    return dims;
  }
  absl::flat_hash_map<std::string, std::string> streamed;  // Graph input -> its stand-in (RewriteWithStreamedInput).
  absl::flat_hash_set<std::string> names;     // Values, nodes, initializers: new names avoid them.
  std::map<std::vector<int64_t>, std::string> index_tensors;  // Shared Slice starts/ends/axes.
  std::map<std::vector<float>, std::string> float_tensors;    // Shared Resize scales.
  std::map<std::vector<int64_t>, std::string> bounds_inputs;  // Overridable bounds of the patches' input Slices.
  struct Tile {
    Region region;     // Its rows and columns of T.
    std::string name;  // The piece.
  };
  absl::flat_hash_map<std::string, std::vector<Tile>> pieces;  // A T kept in pieces -> its tiles, row-major.

  std::string Unique(const std::string& base) {
    std::string name = base;
    for (int k = 1; names.contains(name); ++k) name = absl::StrCat(base, "_", k);
    names.insert(name);
    return name;
  }

  std::string IndexTensor(const std::vector<int64_t>& values) {
    auto it = index_tensors.find(values);
    if (it != index_tensors.end()) return it->second;
    const std::string name = Unique(absl::StrCat("patch_index_", absl::StrJoin(values, "_")));
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    tensor->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t value : values) tensor->add_int64_data(value);
    index_tensors.emplace(values, name);
    return name;
  }

  // An int64 initializer also listed as a graph input (IR >= 4: an
  // overridable initializer). Its value is the default, but ONNX Runtime may
  // not take it as a constant: its shape inference leaves the patch's
  // spatial dims unknown, and its allocation planner only hands a freed
  // buffer to a later tensor of the same known shape, keeping the buffer
  // allocated in between. Patches of equal shapes would otherwise keep every
  // buffer of one patch allocated until the next patch takes it again
  // (measured, generated ResNet-50: 8.6 MB written vs 5.2 MB original).
  std::string OverridableIndexTensor(const std::vector<int64_t>& values) {
    auto it = bounds_inputs.find(values);
    if (it != bounds_inputs.end()) return it->second;
    const std::string name = Unique(absl::StrCat("patch_bounds_", absl::StrJoin(values, "_")));
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    tensor->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t value : values) tensor->add_int64_data(value);
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(name);
    input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(
        static_cast<int64_t>(values.size()));
    bounds_inputs.emplace(values, name);
    return name;
  }

  std::string FloatTensor(const std::vector<float>& values) {
    auto it = float_tensors.find(values);
    if (it != float_tensors.end()) return it->second;
    const std::string name = Unique("patch_scales");
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_dims(static_cast<int64_t>(values.size()));
    for (float value : values) tensor->add_float_data(value);
    float_tensors.emplace(values, name);
    return name;
  }

  // `source`'s rows and columns [begin, end) of `region`, relative to `source`;
  // `overridable`: its bounds are overridable initializers (a patch's input).
  onnx::NodeProto Slice(const std::string& source, const Region& region, const std::string& output,
                        bool overridable = false) {
    onnx::NodeProto node;
    node.set_op_type("Slice");
    node.set_name(Unique(absl::StrCat(output, "_slice")));
    node.add_input(source);
    const std::vector<int64_t> starts{region.h.begin, region.w.begin};
    const std::vector<int64_t> ends{region.h.end, region.w.end};
    const std::vector<int64_t> axes{2, 3};
    if (slice_takes_inputs && overridable && patch_dims_overridable) {
      node.add_input(OverridableIndexTensor(starts));
      node.add_input(OverridableIndexTensor(ends));
      node.add_input(OverridableIndexTensor(axes));
    } else if (slice_takes_inputs) {
      node.add_input(IndexTensor(starts));
      node.add_input(IndexTensor(ends));
      node.add_input(IndexTensor(axes));
    } else {
      for (const auto& [name, values] : {std::pair{"starts", starts}, std::pair{"ends", ends}, std::pair{"axes", axes}}) {
        onnx::AttributeProto* attribute = node.add_attribute();
        attribute->set_name(name);
        attribute->set_type(onnx::AttributeProto::INTS);
        for (int64_t value : values) attribute->add_ints(value);
      }
    }
    node.add_output(output);
    return node;
  }

  onnx::NodeProto Concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output) {
    onnx::NodeProto node;
    node.set_op_type("Concat");
    node.set_name(Unique(absl::StrCat(output, "_assemble")));
    for (const std::string& input : inputs) node.add_input(input);
    node.add_output(output);
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name("axis");
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(axis);
    return node;
  }
};

Region Relative(const Region& region, const Region& within) {
  return {.h = {region.h.begin - within.h.begin, region.h.end - within.h.begin},
          .w = {region.w.begin - within.w.begin, region.w.end - within.w.begin}};
}

Span Overlap(const Span& a, const Span& b) { return {.begin = std::max(a.begin, b.begin), .end = std::min(a.end, b.end)}; }

// `region` of a tensor kept in pieces, appended to `out`: the piece itself
// where the region is one, else a Slice of each piece it overlaps (the
// piece whole where it lies inside), joined along W per row of pieces and
// then along H.
std::string FromPieces(const std::vector<Writer::Tile>& tiles, const Region& region, const std::string& base,
                       Writer& writer, std::vector<onnx::NodeProto>& out) {
  std::vector<std::vector<std::string>> rows;
  std::vector<Span> row_spans;
  for (const Writer::Tile& tile : tiles) {
    const Region part{.h = Overlap(tile.region.h, region.h), .w = Overlap(tile.region.w, region.w)};
    if (part.h.size() <= 0 || part.w.size() <= 0) continue;
    std::string name = tile.name;
    if (!(part == tile.region)) {
      name = writer.Unique(absl::StrCat(base, "_part"));
      out.push_back(writer.Slice(tile.name, Relative(part, tile.region), name));
    }
    if (row_spans.empty() || !(row_spans.back() == tile.region.h)) {
      rows.emplace_back();
      row_spans.push_back(tile.region.h);
    }
    rows.back().push_back(std::move(name));
  }
  std::vector<std::string> joined;
  for (std::vector<std::string>& row : rows) {
    if (row.size() == 1) {
      joined.push_back(std::move(row.front()));
      continue;
    }
    const std::string name = writer.Unique(absl::StrCat(base, "_row"));
    out.push_back(writer.Concat(row, 3, name));
    joined.push_back(name);
  }
  if (joined.size() == 1) return joined.front();
  const std::string name = writer.Unique(base);
  out.push_back(writer.Concat(joined, 2, name));
  return name;
}

// ONNX Runtime runs a graph in a reverse depth-first order from its outputs
// (graph.cc ReverseDFSFrom): a chain's last link would pull each of its
// patches' pieces of the link before, and those theirs, a wavefront across
// every link at once with many links' pieces live (measured, generated
// ResNet-50 with a chain of 10: 3.64 MB vs 3.25 MB unchained). A barrier
// makes it run link after link: four zeros computed from the shapes of
// every piece of X (ORT cannot fold them: the pieces' dims are hidden), which
// each patch's region of X takes through a Reshape to its own dims plus
// them (a view). Returns the zeros' name, appended to `out` after the pieces.
std::string PiecesBarrier(const std::vector<Writer::Tile>& tiles, const std::string& base, Writer& writer,
                          std::vector<onnx::NodeProto>& out) {
  onnx::NodeProto shapes;
  shapes.set_op_type("Concat");
  shapes.set_name(writer.Unique(absl::StrCat(base, "_pieces_done")));
  for (const Writer::Tile& tile : tiles) {
    onnx::NodeProto shape;
    shape.set_op_type("Shape");
    shape.set_name(writer.Unique(absl::StrCat(tile.name, "_done")));
    shape.add_input(tile.name);
    shape.add_output(shape.name());
    shapes.add_input(shape.name());
    out.push_back(std::move(shape));
  }
  shapes.add_output(shapes.name());
  onnx::AttributeProto* axis = shapes.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  out.push_back(shapes);
  onnx::NodeProto first;
  first.set_op_type("Slice");
  first.set_name(writer.Unique(absl::StrCat(base, "_pieces_first")));
  first.add_input(shapes.name());
  if (writer.slice_takes_inputs) {
    first.add_input(writer.IndexTensor({0}));
    first.add_input(writer.IndexTensor({4}));
  } else {
    for (const auto& [name, value] : {std::pair{"starts", 0}, std::pair{"ends", 4}, std::pair{"axes", 0}}) {
      onnx::AttributeProto* attribute = first.add_attribute();
      attribute->set_name(name);
      attribute->set_type(onnx::AttributeProto::INTS);
      attribute->add_ints(value);
    }
  }
  first.add_output(first.name());
  out.push_back(first);
  onnx::NodeProto zeros;
  zeros.set_op_type("Sub");
  zeros.set_name(writer.Unique(absl::StrCat(base, "_pieces_zeros")));
  zeros.add_input(first.name());
  zeros.add_input(first.name());
  zeros.add_output(zeros.name());
  out.push_back(zeros);
  return zeros.name();
}

// `value` (dims `dims`) after the barrier `zeros`: a Reshape to its own dims.
std::string AfterBarrier(const std::string& value, const std::vector<int64_t>& dims, const std::string& zeros,
                         Writer& writer, std::vector<onnx::NodeProto>& out) {
  onnx::NodeProto target;
  target.set_op_type("Add");
  target.set_name(writer.Unique(absl::StrCat(value, "_dims_after")));
  target.add_input(writer.IndexTensor(dims));
  target.add_input(zeros);
  target.add_output(target.name());
  out.push_back(target);
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.set_name(writer.Unique(absl::StrCat(value, "_after_barrier")));
  reshape.add_input(value);
  reshape.add_input(target.name());
  reshape.add_output(reshape.name());
  out.push_back(reshape);
  return reshape.name();
}

void SetPads(onnx::NodeProto& node, const Pads& pads) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() != "pads" && attribute.name() != "auto_pad") *kept.Add() = attribute;
  }
  node.mutable_attribute()->Swap(&kept);
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name("pads");
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t pad : {pads.h_begin, pads.w_begin, pads.h_end, pads.w_end}) attribute->add_ints(pad);
}

// A ConvTranspose copy: pads trim its scattered rows to the patch's, and
// output_padding extends them where the original's did at the border.
void SetTransposedPads(onnx::NodeProto& node, const Pads& pads) {
  SetPads(node, pads);
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() != "output_padding") *kept.Add() = attribute;
  }
  node.mutable_attribute()->Swap(&kept);
  if (pads.h_output_padding == 0 && pads.w_output_padding == 0) return;
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name("output_padding");
  attribute->set_type(onnx::AttributeProto::INTS);
  attribute->add_ints(pads.h_output_padding);
  attribute->add_ints(pads.w_output_padding);
}

// A Resize copy given `sizes` (the whole tensor's) takes its factors as scales.
void SetScales(onnx::NodeProto& node, const SpatialOp& op, Writer& writer) {
  if (node.input_size() < 4 || node.input(3).empty()) return;
  node.set_input(2, writer.FloatTensor({1.0f, 1.0f, static_cast<float>(op.up_h.factor), static_cast<float>(op.up_w.factor)}));
  node.mutable_input()->RemoveLast();
}

// A Pad copy pads only where the patch touches the border: its pads input
// (opset >= 11) or attribute, N and C unpadded.
void SetPadPads(onnx::NodeProto& node, const Pads& pads, Writer& writer) {
  const std::vector<int64_t> values{0, 0, pads.h_begin, pads.w_begin, 0, 0, pads.h_end, pads.w_end};
  if (node.input_size() > 1) {
    node.set_input(1, writer.IndexTensor(values));
    return;
  }
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() != "pads") continue;
    attribute.clear_ints();
    for (int64_t value : values) attribute.add_ints(value);
  }
}

// A Slice copy over H or W reads exactly the rows its patch needs: it starts
// at row 0 of its input region and runs to its end on those axes; its
// bounds over N and C are the original's. (Its rule was checked: the
// bounds are stored.)
void SetSliceBounds(onnx::NodeProto& node, const GraphFacts& facts, Writer& writer) {
  const auto value_of = [&](const std::string& value) -> const onnx::TensorProto* {
    auto it = facts.stored.find(value);
    return it == facts.stored.end() ? nullptr : it->second;
  };
  absl::StatusOr<SliceBounds> bounds = SliceBoundsOf(node, [&](const std::string& v) { return facts.IsStatic(v); }, value_of);
  if (!bounds.ok()) return;
  for (size_t i = 0; i < bounds->axes.size(); ++i) {
    const int64_t axis = bounds->axes[i] < 0 ? bounds->axes[i] + 4 : bounds->axes[i];
    if (axis < 2) continue;
    bounds->starts[i] = 0;
    bounds->ends[i] = std::numeric_limits<int64_t>::max();
  }
  if (node.input_size() > 1) {
    node.set_input(1, writer.IndexTensor(bounds->starts));
    node.set_input(2, writer.IndexTensor(bounds->ends));
    return;
  }
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    const std::vector<int64_t>* values = attribute.name() == "starts" ? &bounds->starts
                                         : attribute.name() == "ends" ? &bounds->ends
                                                                      : nullptr;
    if (values == nullptr) continue;
    attribute.clear_ints();
    for (int64_t value : *values) attribute.add_ints(value);
  }
}

// Whether ONNX Runtime's NCHWc layout (x86) would leave T and every node
// after it in NCHW: T is assembled by a Concat over H or W, which has no
// NCHWc kernel, so a reader of T other than a Conv (an activation, an Add of
// a residual) runs in NCHW, and so does each node after it, with a reorder
// copy around every Conv (measured, generated ResNet-50: 4.85 MB vs 3.25 MB
// at the first residual block after the segment). A MaxPool 1x1 over T is
// an identity that ORT runs in NCHWc, so T's readers see NCHWc again: the
// same T-sized copy as ORT's reorder of T, no arithmetic. Only for float T
// (the segment convolves float weights) of a channel count ORT can block.
// Measured: generated ResNet-50 4,852,840 -> 3,247,016 (original 5,227,144).
bool NeedsBlockedLayoutAfter(const GraphFacts& facts, const Segment& segment, const std::vector<int64_t>& dims) {
  if (dims.size() != 4 || dims[1] % 8 != 0) return false;
  bool float_conv = false;
  for (int node : segment.nodes) {
    const onnx::NodeProto& proto = facts.graph->node(node);
    if (proto.op_type() != "Conv" || proto.input_size() < 2) continue;
    // Conv is float16, float or double: a weight made at run (ConstantOfShape) is taken as float.
    auto weight = facts.stored.find(proto.input(1));
    float_conv |= weight == facts.stored.end() || weight->second->data_type() == onnx::TensorProto::FLOAT;
  }
  if (!float_conv) return false;
  auto readers = facts.consumers.find(segment.output);
  if (readers == facts.consumers.end()) return false;
  for (int reader : readers->second) {
    if (facts.graph->node(reader).op_type() != "Conv") return true;
  }
  return false;
}

// T under its own name from `assembled` (the Concat of its pieces, whose
// dims ORT cannot infer from the overridable bounds): a Reshape to T's
// static dims, so that ORT knows T's shape again and plans the rest of the
// graph as in the original model (a view: no copy), then the MaxPool 1x1 of
// NeedsBlockedLayoutAfter where it applies.
void WriteAssembledOutput(const GraphFacts& facts, const Segment& segment, const std::string& assembled, Writer& writer,
                          std::vector<onnx::NodeProto>& out) {
  const std::vector<int64_t>& dims = facts.shapes.at(segment.output);
  const bool pool = NeedsBlockedLayoutAfter(facts, segment, dims);
  const bool reshape = writer.patch_dims_overridable;
  std::string whole = assembled;
  if (reshape || !pool) {
    onnx::NodeProto node;
    node.set_op_type(reshape ? "Reshape" : "Identity");
    node.set_name(writer.Unique(absl::StrCat(segment.output, reshape ? "__known_shape" : "__whole")));
    node.add_input(assembled);
    if (reshape) node.add_input(writer.IndexTensor(writer.ReshapeDims(dims)));
    whole = pool ? writer.Unique(absl::StrCat(segment.output, "__nchw")) : segment.output;
    node.add_output(whole);
    out.push_back(std::move(node));
  }
  if (!pool) return;
  onnx::NodeProto identity;
  identity.set_op_type("MaxPool");
  identity.set_name(writer.Unique(absl::StrCat(segment.output, "__blocked")));
  identity.add_input(whole);
  identity.add_output(segment.output);
  onnx::AttributeProto* kernel = identity.add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(1);
  kernel->add_ints(1);
  out.push_back(std::move(identity));
}

// `input` cut to the patch's `region` of it, its halo included (itself
// where that is all of it); the patch's name for it. A streamed input is the
// patch as it arrives.
std::string CutToPatch(const GraphFacts& facts, const std::string& input, const Region& region,
                       const std::string& suffix, Writer& writer, std::vector<onnx::NodeProto>& out) {
  const std::vector<int64_t>& dims = facts.shapes.at(input);
  if (auto stand_in = writer.streamed.find(input); stand_in != writer.streamed.end()) {
    // The patch as it arrives: the stand-in expanded to the patch's shape.
    const std::string name = writer.Unique(absl::StrCat(input, suffix));
    onnx::NodeProto expand;
    expand.set_op_type("Expand");
    expand.set_name(writer.Unique(absl::StrCat(name, "_arrives")));
    expand.add_input(stand_in->second);
    expand.add_input(writer.IndexTensor({dims[0], dims[1], region.h.size(), region.w.size()}));
    expand.add_output(name);
    out.push_back(std::move(expand));
    return name;
  }
  if (region == Region{.h = {0, dims[2]}, .w = {0, dims[3]}}) return input;
  const std::string name = writer.Unique(absl::StrCat(input, suffix));
  if (writer.slice_takes_inputs || !writer.patch_dims_overridable) {
    out.push_back(writer.Slice(input, region, name, /*overridable=*/true));
    return name;
  }
  // Slice before opset 10 takes its bounds as attributes: a Reshape (a
  // view) to the patch's own dims, from an overridable initializer, hides
  // them from ORT instead.
  const std::string sliced = writer.Unique(absl::StrCat(input, suffix, "_sliced"));
  out.push_back(writer.Slice(input, region, sliced));
  onnx::NodeProto reshape;
  reshape.set_op_type("Reshape");
  reshape.set_name(writer.Unique(absl::StrCat(name, "_dims")));
  reshape.add_input(sliced);
  reshape.add_input(
      writer.OverridableIndexTensor(writer.ReshapeDims({dims[0], dims[1], region.h.size(), region.w.size()})));
  reshape.add_output(name);
  out.push_back(std::move(reshape));
  return name;
}

// A copy of a segment's node set for one patch: its pads, a Pad's pads,
// a Slice's bounds, a Resize's scales.
void AdaptToPatch(const GraphFacts& facts, const SpatialOp& op, const Pads& pads, Writer& writer,
                  onnx::NodeProto& node) {
  if (node.op_type() == "Pad") {
    SetPadPads(node, pads, writer);
  } else if (node.op_type() == "Slice") {
    if (op.kind == SpatialKind::kWindow) SetSliceBounds(node, facts, writer);
  } else if (op.kind == SpatialKind::kWindow && node.op_type() != "SpaceToDepth") {
    SetPads(node, pads);  // SpaceToDepth's windows never reach past the tensor: no pads.
  }
  if (op.kind == SpatialKind::kTransposedWindow) SetTransposedPads(node, pads);
  if (node.op_type() == "Resize") SetScales(node, op, writer);
}

// One segment, patch by patch, appended to `out`.
void WriteSegment(const GraphFacts& facts, const PlannedSegment& planned, Writer& writer,
                  std::vector<onnx::NodeProto>& out) {
  const onnx::GraphProto& graph = *facts.graph;
  const Segment& segment = planned.segment;
  const PatchGeometry& geometry = planned.geometry;
  const std::vector<int64_t>& input_dims = facts.shapes.at(segment.input);
  std::vector<std::string> rows;
  std::vector<std::string> row_pieces;
  std::string barrier;  // After every piece of X (PiecesBarrier): a chain's link runs after the one before.
  if (auto tiles = writer.pieces.find(segment.input);
      tiles != writer.pieces.end() && writer.patch_dims_overridable) {
    barrier = PiecesBarrier(tiles->second, segment.input, writer, out);
  }
  for (const PatchGeometry::Patch& patch : geometry.patches) {
    const std::string suffix = absl::StrCat("__patch", patch.row, "_", patch.col);
    absl::flat_hash_map<std::string, std::string> renamed;
    const auto cut = [&](const std::string& input) {
      renamed[input] = CutToPatch(facts, input, patch.produced.at(input), suffix, writer, out);
    };
    const auto in_pieces = writer.pieces.find(segment.input);
    std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::string> from_pieces;  // Region of X -> its value.
    if (in_pieces == writer.pieces.end()) cut(segment.input);  // Else each reader of X takes its region from the pieces (below).
    for (const std::string& input : segment.other_inputs) cut(input);  // Each other input held whole, sliced (a neck's skip).
    for (size_t i = 0; i < segment.nodes.size(); ++i) {
      onnx::NodeProto node = graph.node(segment.nodes[i]);
      if (!node.name().empty()) node.set_name(writer.Unique(node.name() + suffix));
      for (int j = 0; j < node.input_size(); ++j) {
        const std::string& value = node.input(j);
        if (value.empty() || facts.IsStatic(value)) continue;
        const Region& read = patch.reads[i][j];
        if (value == segment.input && in_pieces != writer.pieces.end()) {
          auto [it, inserted] = from_pieces.try_emplace(std::tuple{read.h.begin, read.h.end, read.w.begin, read.w.end});
          if (inserted) {
            it->second = FromPieces(in_pieces->second, read, absl::StrCat(value, suffix), writer, out);
            if (!barrier.empty()) {
              it->second = AfterBarrier(it->second,
                                        writer.ReshapeDims({input_dims[0], input_dims[1], read.h.size(), read.w.size()}),
                                        barrier, writer, out);
            }
          }
          node.set_input(j, it->second);
          continue;
        }
        const Region& produced = patch.produced.at(value);
        std::string source = renamed.at(value);
        if (!(read == produced)) {
          const std::string cropped = writer.Unique(absl::StrCat(source, "_for_", segment.nodes[i]));
          out.push_back(writer.Slice(source, Relative(read, produced), cropped));
          source = cropped;
        }
        node.set_input(j, source);
      }
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& output = graph.node(segment.nodes[i]).output(k);
        if (output.empty()) continue;
        renamed[output] = writer.Unique(output + suffix);
        node.set_output(k, renamed[output]);
      }
      AdaptToPatch(facts, segment.ops[i], patch.pads[i], writer, node);
      out.push_back(std::move(node));
    }
    std::string piece = renamed.at(segment.output);
    if (const Region& computed = patch.produced.at(segment.output); !(computed == patch.output)) {
      // A Resize ending the segment computed more rows than its tile.
      const std::string cropped = writer.Unique(absl::StrCat(piece, "_tile"));
      out.push_back(writer.Slice(piece, Relative(patch.output, computed), cropped));
      piece = cropped;
    }
    if (planned.output_in_pieces) {
      writer.pieces[segment.output].push_back({.region = patch.output, .name = piece});
      continue;
    }
    row_pieces.push_back(piece);
    if (patch.col + 1 == geometry.cols) {
      if (geometry.cols == 1) {
        rows.push_back(row_pieces.front());
      } else {
        const std::string row = writer.Unique(absl::StrCat(segment.output, "__row", patch.row));
        out.push_back(writer.Concat(row_pieces, 3, row));
        rows.push_back(row);
      }
      row_pieces.clear();
    }
  }
  if (planned.output_in_pieces) return;
  std::string assembled = rows.front();
  if (rows.size() > 1) {
    assembled = writer.Unique(absl::StrCat(segment.output, "__assembled"));
    out.push_back(writer.Concat(rows, 2, assembled));
  }
  WriteAssembledOutput(facts, segment, assembled, writer, out);
}

}  // namespace

namespace {

absl::StatusOr<onnx::ModelProto> Rewrite(const onnx::ModelProto& model, const GraphFacts& facts,
                                         const std::vector<PlannedSegment>& segments, bool stream_input) {
  onnx::ModelProto result = model;
  onnx::GraphProto* graph = result.mutable_graph();
  Writer writer{.graph = graph};
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain())) writer.slice_takes_inputs = opset.version() >= 10;
  }
  int64_t opset = 1;
  for (const onnx::OperatorSetIdProto& entry : model.opset_import()) {
    if (IsDefaultDomain(entry.domain())) opset = entry.version();
  }
  writer.patch_dims_overridable = opset >= 5;
  absl::flat_hash_set<std::string> stored_names;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) stored_names.insert(tensor.name());
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (stored_names.contains(input.name()) || !input.type().has_tensor_type()) continue;
    const onnx::TensorShapeProto& shape = input.type().tensor_type().shape();
    writer.batch_named |= shape.dim_size() > 0 && !shape.dim(0).has_dim_value();
  }
  if (writer.patch_dims_overridable && model.ir_version() < 4) {
    // Before IR 4 every initializer is listed as an input, and ORT takes
    // them all as constants; from IR 4 on it would take them all as
    // overridable (no folding, no NCHWc). The written model is IR 4 with
    // only the patches' dims listed as inputs besides the graph's own.
    result.set_ir_version(4);
    absl::flat_hash_set<std::string> stored;
    for (const onnx::TensorProto& tensor : model.graph().initializer()) stored.insert(tensor.name());
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
    for (const onnx::ValueInfoProto& input : graph->input()) {
      if (!stored.contains(input.name())) *inputs.Add() = input;
    }
    graph->mutable_input()->Swap(&inputs);
  }
  for (const onnx::NodeProto& node : model.graph().node()) {
    writer.names.insert(node.name());
    for (const std::string& value : node.input()) writer.names.insert(value);
    for (const std::string& value : node.output()) writer.names.insert(value);
  }
  for (const onnx::TensorProto& tensor : model.graph().initializer()) writer.names.insert(tensor.name());
  for (const onnx::ValueInfoProto& value : model.graph().input()) writer.names.insert(value.name());
  absl::flat_hash_map<int, int> segment_of;  // Node index -> segment.
  absl::flat_hash_set<std::string> inner_values;
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& segment = segments[s].segment;
    if (segment.nodes.empty() || segments[s].geometry.patches.empty()) {
      return absl::InvalidArgumentError("a patch plan with an empty segment");
    }
    for (int node : segment.nodes) {
      if (!segment_of.emplace(node, static_cast<int>(s)).second) {
        return absl::InvalidArgumentError("patch segments share a node");
      }
      for (const std::string& output : model.graph().node(node).output()) {
        if (output != segment.output || segments[s].output_in_pieces) inner_values.insert(output);
      }
    }
  }
  for (const PlannedSegment& planned : segments) {
    if (!planned.output_in_pieces) continue;
    // Its T exists only as pieces: every reader must be the segment reading it.
    const std::string& output = planned.segment.output;
    const auto reader = std::find_if(segments.begin(), segments.end(),
                                     [&](const PlannedSegment& other) { return other.segment.input == output; });
    bool read_inside = reader != segments.end() && !facts.graph_outputs.contains(output);
    if (read_inside) {
      for (int node : facts.consumers.at(output)) {
        auto it = segment_of.find(node);
        read_inside &= it != segment_of.end() && &segments[it->second] == &*reader;
      }
    }
    if (!read_inside) {
      return absl::InvalidArgumentError(absl::StrCat("'", output, "' is kept in pieces but read outside the next segment"));
    }
  }
  if (stream_input) {
    for (const PlannedSegment& planned : segments) {
      for (const std::string& input : InputsOf(planned.segment)) {
        bool graph_input = false;
        for (const onnx::ValueInfoProto& value : model.graph().input()) graph_input |= value.name() == input;
        if (!graph_input || writer.streamed.contains(input)) continue;
        for (int reader : facts.consumers.at(input)) {
          if (!segment_of.contains(reader)) {
            return absl::FailedPreconditionError(absl::StrCat("graph input '", input, "' is also read outside the patched segment, so it is held whole"));
          }
        }
        const std::string stand_in = writer.Unique(absl::StrCat(input, "__arriving"));
        writer.streamed.emplace(input, stand_in);
        for (onnx::ValueInfoProto& value : *graph->mutable_input()) {
          if (value.name() != input) continue;
          value.set_name(stand_in);
          // Batch as given (a --dim may name it), one element per image.
          onnx::TensorShapeProto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
          for (int d = 1; d < shape->dim_size(); ++d) shape->mutable_dim(d)->set_dim_value(1);
        }
      }
    }
  }
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    auto it = segment_of.find(i);
    if (it == segment_of.end()) {
      nodes.push_back(model.graph().node(i));
    } else if (segments[it->second].segment.nodes.back() == i) {
      WriteSegment(facts, segments[it->second], writer, nodes);
    }
  }
  graph->clear_node();
  for (onnx::NodeProto& node : nodes) *graph->add_node() = std::move(node);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const onnx::ValueInfoProto& value : graph->value_info()) {
    if (!inner_values.contains(value.name())) *kept.Add() = value;
  }
  graph->mutable_value_info()->Swap(&kept);
  return result;
}

}  // namespace

absl::StatusOr<onnx::ModelProto> RewriteWithPatches(const onnx::ModelProto& model, const GraphFacts& facts,
                                                    const std::vector<PlannedSegment>& segments) {
  return Rewrite(model, facts, segments, /*stream_input=*/false);
}

absl::StatusOr<onnx::ModelProto> RewriteWithStreamedInput(const onnx::ModelProto& model, const GraphFacts& facts,
                                                          const std::vector<PlannedSegment>& segments) {
  return Rewrite(model, facts, segments, /*stream_input=*/true);
}

absl::Status CheckModel(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("onnx's checker refuses the patched model: ", error.what()));
  }
  return absl::OkStatus();
}

}  // namespace footprint::patching
