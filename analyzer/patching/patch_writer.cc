#include "analyzer/patching/patch_writer.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_attributes.h"

namespace footprint::patching {
namespace {

// Drops every attribute of `node` named one of `names`, keeping the others' order.
void RemoveAttributes(onnx::NodeProto& node, std::initializer_list<std::string_view> names) {
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (std::find(names.begin(), names.end(), attribute.name()) == names.end()) *kept.Add() = attribute;
  }
  node.mutable_attribute()->Swap(&kept);
}

// Overwrites the ints of `node`'s attribute `name`, when it has one (never adds it).
void OverwriteInts(onnx::NodeProto& node, std::string_view name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr) return;
  attribute->clear_ints();
  for (int64_t value : values) attribute->add_ints(value);
}

}  // namespace

std::vector<int64_t> Writer::ReshapeDims(std::vector<int64_t> dims) const {
  if (batch_named && !dims.empty()) dims[0] = 0;
  return dims;
}

std::string Writer::Unique(const std::string& base) {
  std::string name = base;
  for (int k = 1; names.contains(name); ++k) name = absl::StrCat(base, "_", k);
  names.insert(name);
  return name;
}

onnx::TensorProto& Writer::AddInt64Initializer(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor->add_int64_data(value);
  return *tensor;
}

std::string Writer::IndexTensor(const std::vector<int64_t>& values) {
  auto it = index_tensors.find(values);
  if (it != index_tensors.end()) return it->second;
  const std::string name = Unique(absl::StrCat("patch_index_", absl::StrJoin(values, "_")));
  AddInt64Initializer(name, values);
  index_tensors.emplace(values, name);
  return name;
}

std::string Writer::OverridableIndexTensor(const std::vector<int64_t>& values) {
  auto it = bounds_inputs.find(values);
  if (it != bounds_inputs.end()) return it->second;
  const std::string name = Unique(absl::StrCat("patch_bounds_", absl::StrJoin(values, "_")));
  AddInt64Initializer(name, values);
  onnx::ValueInfoProto* input = graph->add_input();
  input->set_name(name);
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(
      static_cast<int64_t>(values.size()));
  bounds_inputs.emplace(values, name);
  return name;
}

std::string Writer::FloatTensor(const std::vector<float>& values, const std::string& base) {
  auto it = float_tensors.find(values);
  if (it != float_tensors.end()) return it->second;
  const std::string name = Unique(base);
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (float value : values) tensor->add_float_data(value);
  float_tensors.emplace(values, name);
  return name;
}

onnx::NodeProto Writer::Slice(const std::string& source, const Region& region, const std::string& output,
                              bool overridable) {
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
    AddIntsAttribute(node, "starts", starts);
    AddIntsAttribute(node, "ends", ends);
    AddIntsAttribute(node, "axes", axes);
  }
  node.add_output(output);
  return node;
}

onnx::NodeProto Writer::Concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output) {
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

void AddIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

Region Relative(const Region& region, const Region& within) {
  return {.h = {region.h.begin - within.h.begin, region.h.end - within.h.begin},
          .w = {region.w.begin - within.w.begin, region.w.end - within.w.begin}};
}

void SetPads(onnx::NodeProto& node, const Pads& pads) {
  RemoveAttributes(node, {"pads", "auto_pad"});
  AddIntsAttribute(node, "pads", {pads.h_begin, pads.w_begin, pads.h_end, pads.w_end});
}

void SetTransposedPads(onnx::NodeProto& node, const Pads& pads) {
  SetPads(node, pads);
  RemoveAttributes(node, {"output_padding"});
  if (pads.h_output_padding == 0 && pads.w_output_padding == 0) return;
  AddIntsAttribute(node, "output_padding", {pads.h_output_padding, pads.w_output_padding});
}

void SetScales(onnx::NodeProto& node, const SpatialOp& op, Writer& writer) {
  if (node.input_size() < 4 || node.input(3).empty()) return;
  const std::vector<float> scales = {1.0f, 1.0f, static_cast<float>(op.up_h.factor), static_cast<float>(op.up_w.factor)};
  node.set_input(2, writer.FloatTensor(scales, "patch_scales"));
  node.mutable_input()->RemoveLast();
}

void SetPadPads(onnx::NodeProto& node, const Pads& pads, Writer& writer) {
  const std::vector<int64_t> values{0, 0, pads.h_begin, pads.w_begin, 0, 0, pads.h_end, pads.w_end};
  if (node.input_size() > 1) {
    node.set_input(1, writer.IndexTensor(values));
    return;
  }
  OverwriteInts(node, "pads", values);
}

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
  OverwriteInts(node, "starts", bounds->starts);
  OverwriteInts(node, "ends", bounds->ends);
}

}  // namespace footprint::patching
