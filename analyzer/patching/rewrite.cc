#include "analyzer/patching/rewrite.h"

#include <limits>
#include <map>
#include <string>
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
  absl::flat_hash_map<std::string, std::string> streamed;  // Graph input -> its stand-in (RewriteWithStreamedInput).
  absl::flat_hash_set<std::string> names;     // Values, nodes, initializers: new names avoid them.
  std::map<std::vector<int64_t>, std::string> index_tensors;  // Shared Slice starts/ends/axes.
  std::map<std::vector<float>, std::string> float_tensors;    // Shared Resize scales.

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

  // `source`'s rows and columns [begin, end) of `region`, relative to `source`.
  onnx::NodeProto Slice(const std::string& source, const Region& region, const std::string& output) {
    onnx::NodeProto node;
    node.set_op_type("Slice");
    node.set_name(Unique(absl::StrCat(output, "_slice")));
    node.add_input(source);
    const std::vector<int64_t> starts{region.h.begin, region.w.begin};
    const std::vector<int64_t> ends{region.h.end, region.w.end};
    const std::vector<int64_t> axes{2, 3};
    if (slice_takes_inputs) {
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

// One segment, patch by patch, appended to `out`.
void WriteSegment(const GraphFacts& facts, const PlannedSegment& planned, Writer& writer,
                  std::vector<onnx::NodeProto>& out) {
  const onnx::GraphProto& graph = *facts.graph;
  const Segment& segment = planned.segment;
  const PatchGeometry& geometry = planned.geometry;
  const std::vector<std::string> inputs = InputsOf(segment);
  std::vector<std::string> rows;
  std::vector<std::string> row_pieces;
  for (const PatchGeometry::Patch& patch : geometry.patches) {
    const std::string suffix = absl::StrCat("__patch", patch.row, "_", patch.col);
    absl::flat_hash_map<std::string, std::string> renamed;
    for (const std::string& input : inputs) {
      // Each input cut to its own region (its halo included; nothing where it is all of it).
      const std::vector<int64_t>& input_dims = facts.shapes.at(input);
      const Region& input_region = patch.produced.at(input);
      if (auto stand_in = writer.streamed.find(input); stand_in != writer.streamed.end()) {
        // The patch as it arrives: the stand-in expanded to the patch's shape.
        const std::string name = writer.Unique(absl::StrCat(input, suffix));
        onnx::NodeProto expand;
        expand.set_op_type("Expand");
        expand.set_name(writer.Unique(absl::StrCat(name, "_arrives")));
        expand.add_input(stand_in->second);
        expand.add_input(writer.IndexTensor({input_dims[0], input_dims[1], input_region.h.size(), input_region.w.size()}));
        expand.add_output(name);
        out.push_back(std::move(expand));
        renamed[input] = name;
      } else if (input_region == Region{.h = {0, input_dims[2]}, .w = {0, input_dims[3]}}) {
        renamed[input] = input;
      } else {
        const std::string name = writer.Unique(absl::StrCat(input, suffix));
        out.push_back(writer.Slice(input, input_region, name));
        renamed[input] = name;
      }
    }
    for (size_t i = 0; i < segment.nodes.size(); ++i) {
      onnx::NodeProto node = graph.node(segment.nodes[i]);
      if (!node.name().empty()) node.set_name(writer.Unique(node.name() + suffix));
      for (int j = 0; j < node.input_size(); ++j) {
        const std::string& value = node.input(j);
        if (value.empty() || facts.IsStatic(value)) continue;
        const Region& read = patch.reads[i][j];
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
      if (node.op_type() == "Pad") {
        SetPadPads(node, patch.pads[i], writer);
      } else if (node.op_type() == "Slice") {
        if (segment.ops[i].kind == SpatialKind::kWindow) SetSliceBounds(node, facts, writer);
      } else if (segment.ops[i].kind == SpatialKind::kWindow && node.op_type() != "SpaceToDepth") {
        SetPads(node, patch.pads[i]);  // SpaceToDepth's windows never reach past the tensor: no pads.
      }
      if (segment.ops[i].kind == SpatialKind::kTransposedWindow) SetTransposedPads(node, patch.pads[i]);
      if (node.op_type() == "Resize") SetScales(node, segment.ops[i], writer);
      out.push_back(std::move(node));
    }
    std::string piece = renamed.at(segment.output);
    if (const Region& computed = patch.produced.at(segment.output); !(computed == patch.output)) {
      // A Resize ending the segment computed more rows than its tile.
      const std::string cropped = writer.Unique(absl::StrCat(piece, "_tile"));
      out.push_back(writer.Slice(piece, Relative(patch.output, computed), cropped));
      piece = cropped;
    }
    row_pieces.push_back(piece);
    if (patch.col + 1 == geometry.cols) {
      if (geometry.cols == 1) {
        rows.push_back(row_pieces.front());
      } else if (geometry.rows == 1) {
        out.push_back(writer.Concat(row_pieces, 3, segment.output));
      } else {
        const std::string row = writer.Unique(absl::StrCat(segment.output, "__row", patch.row));
        out.push_back(writer.Concat(row_pieces, 3, row));
        rows.push_back(row);
      }
      row_pieces.clear();
    }
  }
  if (geometry.rows > 1) out.push_back(writer.Concat(rows, 2, segment.output));
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
        if (output != segment.output) inner_values.insert(output);
      }
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
