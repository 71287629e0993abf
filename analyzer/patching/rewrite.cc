#include "analyzer/patching/rewrite.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/patching/batch_norm_folding.h"
#include "analyzer/patching/patch_writer.h"
#include "onnx/checker.h"

namespace footprint::patching {
namespace {

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
    AddIntsAttribute(first, "starts", {0});
    AddIntsAttribute(first, "ends", {4});
    AddIntsAttribute(first, "axes", {0});
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

// Whether ONNX Runtime's NCHWc layout (x86) would leave T and every node
// after it in NCHW: T is assembled by a Concat over H or W, which has no
// NCHWc kernel, so a reader of T other than a Conv (an activation, an Add of
// a residual) runs in NCHW, and so does each node after it, with a reorder
// copy around every Conv (measured, generated ResNet-50: 4.85 MB vs 3.25 MB
// at the first residual block after the segment). A MaxPool 1x1 over T is
// an identity that ORT runs in NCHWc, so T's readers see NCHWc again: the
// same T-sized copy as ORT's reorder of T, no arithmetic. Only for float T
// (the segment convolves float weights) of a channel count the target's
// NCHWc pools take: whole blocks (nchwc_transformer.cc, TransformPool; a
// target with no NCHWc, ARM64's, takes none). Measured: generated ResNet-50
// 4,852,840 -> 3,247,016 (original 5,227,144).
bool NeedsBlockedLayoutAfter(const GraphFacts& facts, const Segment& segment, const std::vector<int64_t>& dims) {
  const int64_t block = facts.layout_channel_block;
  if (block <= 1 || dims.size() != 4 || dims[1] % block != 0) return false;
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
  AddIntsAttribute(identity, "kernel_shape", {1, 1});
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
void WriteSegment(const GraphFacts& facts, const PlannedSegment& planned,
                  const absl::flat_hash_map<int, FoldedBatchNorm>& folded, Writer& writer,
                  std::vector<onnx::NodeProto>& out) {
  const onnx::GraphProto& graph = *facts.graph;
  absl::flat_hash_map<int, int> folded_into;  // A BatchNormalization folded -> its Conv.
  for (int node : planned.segment.nodes) {
    auto pair = folded.find(node);
    if (pair == folded.end()) continue;
    folded_into.emplace(pair->second.batch_norm, node);
    WriteFolding(facts, pair->second, writer, out);  // Once, before the copies read it.
  }
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
      if (auto conv = folded_into.find(segment.nodes[i]); conv != folded_into.end()) {
        // Its Conv's copy writes what it would (pointwise: the same region).
        std::string conv_output = renamed.at(graph.node(conv->second).output(0));  // A copy: the insert may rehash.
        renamed[graph.node(segment.nodes[i]).output(0)] = std::move(conv_output);
        continue;
      }
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
      if (auto pair = folded.find(segment.nodes[i]); pair != folded.end()) {
        node.set_input(1, pair->second.filter);
        if (node.input_size() < 3) node.add_input(pair->second.bias);
        node.set_input(2, pair->second.bias);
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
  absl::flat_hash_set<int> kept_whole;       // Recomputed nodes: their copies and themselves.
  absl::flat_hash_set<std::string> inner_values;
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& segment = segments[s].segment;
    if (segment.nodes.empty() || segments[s].geometry.patches.empty()) {
      return absl::InvalidArgumentError("a patch plan with an empty segment");
    }
    kept_whole.insert(segment.recomputed.begin(), segment.recomputed.end());
    for (int node : segment.nodes) {
      if (!segment_of.emplace(node, static_cast<int>(s)).second) {
        return absl::InvalidArgumentError("patch segments share a node");
      }
      if (kept_whole.contains(node)) continue;
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
          if (!segment_of.contains(reader) || kept_whole.contains(reader)) {
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
  const absl::flat_hash_map<int, FoldedBatchNorm> folded = FoldableBatchNorms(facts, segments, opset, writer);
  std::vector<onnx::NodeProto> nodes;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    auto it = segment_of.find(i);
    if (it == segment_of.end() || kept_whole.contains(i)) {
      nodes.push_back(model.graph().node(i));
    } else if (segments[it->second].segment.nodes.back() == i) {
      WriteSegment(facts, segments[it->second], folded, writer, nodes);
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
