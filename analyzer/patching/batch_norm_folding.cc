#include "analyzer/patching/batch_norm_folding.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/loader/onnx_ops.h"
#include "analyzer/patching/spatial_ops.h"

namespace footprint::patching {
namespace {

// A float32 constant of `dims`: an initializer in the file (not a graph
// input, not external) or a ConstantOfShape's output of a float value.
bool FloatConstant(const GraphFacts& facts, const absl::flat_hash_set<std::string>& graph_inputs,
                   const std::string& name, const std::vector<int64_t>& dims) {
  if (name.empty() || graph_inputs.contains(name) || !facts.IsStatic(name) || facts.ShapeOf(name) != dims) {
    return false;
  }
  if (auto stored = facts.stored.find(name); stored != facts.stored.end()) {
    return stored->second->data_type() == onnx::TensorProto::FLOAT &&
           stored->second->data_location() != onnx::TensorProto::EXTERNAL;
  }
  auto producer = facts.producer.find(name);
  if (producer == facts.producer.end()) return false;
  const onnx::NodeProto& node = facts.graph->node(producer->second);
  if (node.op_type() != "ConstantOfShape" || !IsDefaultDomain(node)) return false;
  const onnx::AttributeProto* value = FindAttribute(node, "value");
  return value == nullptr || value->t().data_type() == onnx::TensorProto::FLOAT;  // No value: float32 zeros.
}

float Epsilon(const onnx::NodeProto& node) { return FloatAttribute(node, "epsilon", 1e-5f); }

onnx::NodeProto Node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                     Writer& writer) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(writer.Unique(absl::StrCat(output, "_", op)));
  for (const std::string& input : inputs) node.add_input(input);
  node.add_output(output);
  return node;
}

}  // namespace

absl::flat_hash_map<int, FoldedBatchNorm> FoldableBatchNorms(const GraphFacts& facts,
                                                           const std::vector<PlannedSegment>& segments, int64_t opset,
                                                           Writer& writer) {
  absl::flat_hash_map<int, FoldedBatchNorm> folded;
  if (opset < 7) return folded;
  const onnx::GraphProto& graph = *facts.graph;
  absl::flat_hash_set<std::string> graph_inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) graph_inputs.insert(input.name());
  for (const PlannedSegment& planned : segments) {
    const absl::flat_hash_set<int> in_segment(planned.segment.nodes.begin(), planned.segment.nodes.end());
    for (int conv_index : planned.segment.nodes) {
      const onnx::NodeProto& conv = graph.node(conv_index);
      if (conv.op_type() != "Conv" || !IsDefaultDomain(conv) || conv.input_size() < 2 || conv.output_size() != 1 ||
          facts.graph_outputs.contains(conv.output(0))) {
        continue;
      }
      auto readers = facts.consumers.find(conv.output(0));
      if (readers == facts.consumers.end() || readers->second.size() != 1 ||
          !in_segment.contains(readers->second.front())) {
        continue;
      }
      const int norm_index = readers->second.front();
      const onnx::NodeProto& norm = graph.node(norm_index);
      bool extra_outputs = false;
      for (int k = 1; k < norm.output_size(); ++k) extra_outputs |= !norm.output(k).empty();
      if (!IsInferenceBatchNorm(norm) || norm.input_size() != 5 || norm.input(0) != conv.output(0) || extra_outputs) {
        continue;
      }
      const std::optional<std::vector<int64_t>> filter_dims = facts.ShapeOf(conv.input(1));
      if (!filter_dims.has_value() || filter_dims->size() != 4 ||
          !FloatConstant(facts, graph_inputs, conv.input(1), *filter_dims)) {
        continue;
      }
      const std::vector<int64_t> channels = {(*filter_dims)[0]};
      bool constants = conv.input_size() < 3 || conv.input(2).empty() ||
                       FloatConstant(facts, graph_inputs, conv.input(2), channels);
      for (int k = 1; k <= 4; ++k) constants &= FloatConstant(facts, graph_inputs, norm.input(k), channels);
      if (!constants) continue;
      folded[conv_index] = {.conv = conv_index,
                            .batch_norm = norm_index,
                            .filter = writer.Unique(absl::StrCat(conv.input(1), "__folded_", norm.output(0))),
                            .bias = writer.Unique(absl::StrCat(norm.output(0), "__folded_bias"))};
    }
  }
  return folded;
}

void WriteFolding(const GraphFacts& facts, const FoldedBatchNorm& pair, Writer& writer,
                  std::vector<onnx::NodeProto>& out) {
  const onnx::NodeProto& conv = facts.graph->node(pair.conv);
  const onnx::NodeProto& norm = facts.graph->node(pair.batch_norm);
  const std::string& scale = norm.input(1);
  const std::string& shift = norm.input(2);
  const std::string& mean = norm.input(3);
  const std::string& variance = norm.input(4);
  const std::string base = absl::StrCat(norm.output(0), "__fold");
  const std::string shifted_variance = writer.Unique(absl::StrCat(base, "_variance"));
  out.push_back(Node("Add", {variance, writer.FloatTensor({Epsilon(norm)}, "patch_epsilon")}, shifted_variance, writer));
  const std::string deviation = writer.Unique(absl::StrCat(base, "_deviation"));
  out.push_back(Node("Sqrt", {shifted_variance}, deviation, writer));
  const std::string factor = writer.Unique(absl::StrCat(base, "_factor"));
  out.push_back(Node("Div", {scale, deviation}, factor, writer));
  const std::string per_filter = writer.Unique(absl::StrCat(base, "_factor_per_filter"));
  out.push_back(Node("Reshape", {factor, writer.IndexTensor({-1, 1, 1, 1})}, per_filter, writer));
  out.push_back(Node("Mul", {conv.input(1), per_filter}, pair.filter, writer));
  const std::string centered = writer.Unique(absl::StrCat(base, "_centered"));
  if (conv.input_size() >= 3 && !conv.input(2).empty()) {
    out.push_back(Node("Sub", {conv.input(2), mean}, centered, writer));
  } else {
    out.push_back(Node("Neg", {mean}, centered, writer));
  }
  const std::string scaled = writer.Unique(absl::StrCat(base, "_scaled"));
  out.push_back(Node("Mul", {centered, factor}, scaled, writer));
  out.push_back(Node("Add", {shift, scaled}, pair.bias, writer));
}

}  // namespace footprint::patching
