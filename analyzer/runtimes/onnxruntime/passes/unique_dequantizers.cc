// ORT's EnsureUniqueDQForNodeUnit (core/optimizer/qdq_transformer/
// ensure_unique_dq_for_node_unit.cc): before its level-1 passes
// (InferenceSession::TransformGraph runs it first whenever the QDQ rules are
// on, graph_transformer_utils.cc registers it again at level 1), ORT gives
// every reader of a DequantizeLinear its own copy of it, so that each QDQ
// group has DequantizeLinear nodes of its own. Each copy is a new node
// (Graph::AddNode: a higher NodeIndex, which decides where ORT's order runs
// it, execution_order.h), reads the original's inputs and writes a new
// tensor of the original's type and dims. A copy the QDQ rules do not fuse
// (qdq_fusion.cc) makes its own float tensor at every run.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// One reader edge of a value: the reading node and its explicit input slot.
struct ReaderEdge {
  NodeId reader = -1;  // Index into graph.nodes.
  size_t slot = 0;     // Into the reader's inputs.
};

// A copy of a DequantizeLinear for one reader edge.
struct Copy {
  IrNode node;       // Reads the original's inputs, writes `output`.
  ReaderEdge edge;   // The reader it serves.
};

// For each DequantizeLinear node of `graph` (either domain), in ORT's order:
// its output's reader edges in the order ORT keeps them (reader NodeIndex,
// then input slot); readers inside a subgraph (implicit inputs) keep the
// original. When the output is also a graph output or read from a subgraph,
// every explicit reader edge gets a copy; otherwise the first keeps the
// original and every further one gets a copy. A copy is placed just before
// its reader in graph.nodes (which stays topological), its proto made
// before any other rule's nodes, as in ORT, and its output sized as the
// original's (HeldValue::sized_as). Weights'
// DequantizeLinear the analysis folded are not copied (ORT copies them too,
// when shared: not modelled). Copies of a com.microsoft DequantizeLinear are
// merged again by the CSE of quantizer_merging.cc (ORT's level-1 CSE merges
// them, and its second EnsureUniqueDQForNodeUnit at the end of level 1
// copies them again: not modelled).
PassChange EnsureUniqueDequantizers(IrGraph& graph, PassContext& context) {
  if (!HasDequantizeLinear(graph)) return {};
  const std::vector<int64_t> index = OrtNodeIndices(graph, context.rewrite);
  // ApplyImpl walks GraphViewer's topological order (ORT's order, before any
  // copy exists); the copies take new indices in the order they are made.
  const std::optional<std::vector<NodeId>> order = OrtExecutionOrder(graph, index);
  if (!order.has_value()) return {};
  std::vector<Copy> copies;
  std::vector<ReaderEdge> edges;
  std::vector<NodeId> readers;
  for (const NodeId id : *order) {
    const IrNode& dq = graph.nodes[id];
    if (!IsDequantizeLinear(*dq.proto) || dq.outputs.size() != 1 || dq.proto->output_size() != 1) continue;
    const ValueId output = dq.outputs[0];
    const IrValue& value = graph.values[output];
    // Output edges in Node::EdgeEndCompare's order: reader NodeIndex, then
    // the input slot (an implicit input's slot comes after the explicit ones).
    readers = value.consumers;
    std::sort(readers.begin(), readers.end(), [&](NodeId a, NodeId b) { return index[a] < index[b]; });
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    edges.clear();
    bool subgraph_reader = false;
    int64_t edge_count = 0;
    for (const NodeId reader : readers) {
      const IrNode& node = graph.nodes[reader];
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (node.inputs[slot] == output) edges.push_back(ReaderEdge{.reader = reader, .slot = slot});
      }
      if (std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), output) != node.implicit_inputs.end()) {
        subgraph_reader = true;
        ++edge_count;
      }
    }
    edge_count += static_cast<int64_t>(edges.size());
    // Nothing to do with no reader edge, or with one and no graph output.
    if (edge_count == 0 || (edge_count == 1 && !value.is_graph_output)) continue;
    // The original stays with the graph output and the subgraph readers;
    // without those, with the first explicit reader.
    const size_t first_copied = (subgraph_reader || value.is_graph_output) ? 0 : 1;
    const std::string copy_name = value.name + "/duplicated";  // `value` moves as graph.values grows.
    for (size_t e = first_copied; e < edges.size(); ++e) {
      Copy copy{.edge = edges[e]};
      copy.node.proto_index = -1;
      copy.node.display_name = dq.display_name + "/duplicated";
      copy.node.inputs = dq.inputs;
      // DuplicateDQForOutputEdge's names (GenerateNodeName /
      // GenerateNodeArgName make them unique in ORT's graph).
      onnx::NodeProto& proto =
          UseRuntimeProto(context.rewrite, copy.node, std::make_shared<onnx::NodeProto>(*dq.proto));
      proto.set_name(dq.proto->name() + "/duplicated");
      proto.set_output(0, copy_name);
      copy.node.outputs = {AddValue(graph, context.rewrite,
                                    IrValue{.name = proto.output(0), .origin = ValueOrigin::kNodeOutput},
                                    HeldValue{.sized_as = output})};
      copies.push_back(std::move(copy));
    }
  }
  if (copies.empty()) return {};
  // Each reader reads its copy; each copy goes just before its reader, so
  // that graph.nodes stays topological for the rules after this one.
  std::vector<std::vector<size_t>> copies_before(graph.nodes.size());
  for (size_t c = 0; c < copies.size(); ++c) {
    const ReaderEdge& edge = copies[c].edge;
    graph.nodes[edge.reader].inputs[edge.slot] = copies[c].node.outputs[0];
    copies_before[edge.reader].push_back(c);
  }
  std::vector<IrNode> nodes;
  nodes.reserve(graph.nodes.size() + copies.size());
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    for (size_t c : copies_before[id]) nodes.push_back(std::move(copies[c].node));
    nodes.push_back(std::move(graph.nodes[id]));
  }
  graph.nodes = std::move(nodes);
  RelinkValues(graph);
  return {};
}

}  // namespace

const Pass kEnsureUniqueDQForNodeUnit = {
    .name = "EnsureUniqueDQForNodeUnit",
    .stage = OrtStage::kBeforeLevel1,
    .source = "core/optimizer/qdq_transformer/ensure_unique_dq_for_node_unit.cc",
    .apply = &EnsureUniqueDequantizers};

}  // namespace footprint::ort
