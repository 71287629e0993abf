// ORT's level-1 CommonSubexpressionElimination on the quantizers of QDQ
// graphs: equal QuantizeLinear nodes (and com.microsoft DequantizeLinear
// ones) on the same inputs become one, before the QDQ selectors
// (qdq_fusion.cc).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"

namespace footprint::ort {
namespace {

// CommonSubexpressionElimination (core/optimizer/common_subexpression_elimination.cc,
// IsNodeSupported; optimizer_utils.cc IsOperationDeterministic): it merges
// nodes of one op, domain and attributes on the same inputs, for every
// deterministic ONNX op and, of com.microsoft's, QuantizeLinear and
// DequantizeLinear only; but never ONNX's DequantizeLinear, so that each
// DQ stays in one QDQ group. Only the quantizers are modelled here:
// quantize_static with DedicatedQDQPair=True writes a Q -> DQ pair per
// reader of a tensor, and ORT keeps one Q (with UseQDQContribOps, one
// com.microsoft DQ too).
bool Mergeable(const IrNode& node) {
  const onnx::NodeProto& proto = *node.proto;
  if (!node.bodies.empty()) return false;
  return IsQuantizeLinear(proto) || (IsDequantizeLinear(proto) && proto.domain() == "com.microsoft");
}

// Op, domain, inputs (by value) and attributes (by name, as ORT's
// NodeAttributes map orders them).
std::string KeyOf(const IrNode& node) {
  const onnx::NodeProto& proto = *node.proto;
  std::string key = absl::StrCat(proto.domain(), "/", proto.op_type(), "(");
  for (ValueId input : node.inputs) absl::StrAppend(&key, input, ",");
  std::vector<std::string> attributes;
  for (const onnx::AttributeProto& attribute : proto.attribute()) attributes.push_back(attribute.SerializeAsString());
  std::sort(attributes.begin(), attributes.end());
  for (const std::string& attribute : attributes) absl::StrAppend(&key, ")", attribute.size(), ":", attribute);
  return key;
}

// A QuantizeLinear (either domain) or a com.microsoft DequantizeLinear with
// the same inputs and attributes as an earlier one: its readers read the
// earlier one's output, and it goes.
PassChange MergeEqualQuantizers(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  absl::flat_hash_map<std::string, NodeId> first_of;
  // Graph order is topological: a DQ reading a merged Q sees the kept one.
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (removed[id] || !Mergeable(node)) continue;
    auto [it, inserted] = first_of.try_emplace(KeyOf(node), static_cast<NodeId>(id));
    if (inserted) continue;
    if (MergeIntoFirst(static_cast<NodeId>(id), it->second, graph, context.rewrite, removed)) ++change.fused_nodes;
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

}  // namespace

const Pass kQuantizerCse = {.name = "CommonSubexpressionElimination (QuantizeLinear)",
                            .stage = OrtStage::kLevel1,
                            .source = "core/optimizer/common_subexpression_elimination.cc",
                            .apply = &MergeEqualQuantizers};

}  // namespace footprint::ort
