// A weight's DequantizeLinear under ORT's CPU provider: not folded at load,
// run at every run, in ORT's order.
//
// ConstantFolding runs with skip_dequantize_linear while the QDQ rules are on
// (core/optimizer/graph_transformer_utils.cc, Level1; constant_folding.cc):
// a DequantizeLinear of a weight is never folded. Probe: a Conv whose weight
// is DequantizeLinear(int8 initializer) keeps the DequantizeLinear in ORT's
// optimized model, and its float output is allocated at every run. The
// analysis folded it: it becomes a node again, and the graph's nodes take
// ORT's order (GraphViewer's default: Graph::ReverseDFSFrom the leaves with
// NodeCompare, each node emitted after its inputs' producers, the producer of
// highest index explored first; the runtime figures replay the nodes in this
// order), so that each float weight is live from where ORT runs its
// DequantizeLinear: just before its reader when the reader's data input comes
// from a node of higher index, well before it (with the upstream of that
// input still to run) when the DequantizeLinear's index is the higher one.
// Probes: a chain of 1, 4 and 8 Convs 1x1 256 -> 256 on 1x256x4x4, each
// after its weight's DequantizeLinear in the file, peaks at 297,440,
// 1,084,760 and 2,134,856 bytes: every float weight (262,144 bytes) is live
// at the first Conv. The int8 QDQ copy of light_inception_v1, whose float
// Gemm's weight (4.1 MB) is dequantized after its input's producer in the
// file, peaks at 14.6 MB (10.5 MB in this order before this rule); ORT's
// level-2 dumps of the int8 copies (renumbered, each weight's
// DequantizeLinear just before its Conv): light_resnet50 31.3 MB against
// 13.6 MB for the copy itself (weights dequantized first in the file).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// Each folded DequantizeLinear output a node still reads becomes that node's
// output again (a new node in graph.nodes), and the graph takes ORT's order.
PassChange UnfoldDequantizedWeights(IrGraph& graph, PassContext& context) {
  if (!HasDequantizeLinear(graph)) return {};
  const size_t node_count = graph.nodes.size();
  absl::flat_hash_map<const onnx::NodeProto*, int> index_of;
  for (int i = 0; i < graph.proto->node_size(); ++i) index_of[&graph.proto->node(i)] = i;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    IrValue& value = graph.values[id];
    if (value.origin != ValueOrigin::kFolded || value.consumers.empty() || value.is_graph_output) continue;
    const onnx::NodeProto* proto = value.folded_from;
    if (proto == nullptr || !IsDequantizeLinear(*proto) || proto->output_size() != 1) {
      continue;
    }
    IrNode node;
    node.proto = proto;
    node.display_name = proto->name().empty() ? "DequantizeLinear_" + value.name : proto->name();
    auto it = index_of.find(proto);
    node.proto_index = it != index_of.end() ? it->second : -1;
    bool inputs_known = true;
    for (const std::string& name : proto->input()) {
      if (name.empty()) continue;
      std::optional<ValueId> input = ValueNamed(graph, name);
      if (!input.has_value()) {
        inputs_known = false;
        break;
      }
      node.inputs.push_back(*input);
    }
    if (!inputs_known) continue;
    const NodeId node_id = static_cast<NodeId>(graph.nodes.size());
    for (ValueId input : node.inputs) graph.values[input].consumers.push_back(node_id);
    node.outputs = {static_cast<ValueId>(id)};
    value.origin = ValueOrigin::kNodeOutput;
    value.producer = node_id;
    value.folded_from = nullptr;
    graph.nodes.push_back(std::move(node));
  }
  // A weight's DequantizeLinear the analysis never folded (com.microsoft's)
  // runs in ORT's order too.
  bool weight_dequantizers = graph.nodes.size() != node_count;
  for (size_t id = 0; id < node_count && !weight_dequantizers; ++id) {
    const IrNode& node = graph.nodes[id];
    weight_dequantizers = IsDequantizeLinear(*node.proto) && !node.inputs.empty() &&
                          ConstantTensor(graph, node.inputs[0]) != nullptr;
  }
  if (!weight_dequantizers) return {};
  // ORT's node indices: a node of the file keeps its position; a node ORT's
  // rules made comes after all of them, in the order made.
  std::vector<int64_t> ort_index(graph.nodes.size());
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    auto it = index_of.find(graph.nodes[id].proto);
    ort_index[id] = it != index_of.end() ? it->second : graph.proto->node_size() + static_cast<int64_t>(id);
  }
  // ORT's walk with those indices; on a cycle the file's order stays.
  ApplyOrtExecutionOrder(graph, ort_index);
  return {};
}

}  // namespace

const Pass kUnfoldedDequantizeLinear = {.name = "ConstantFolding (skip_dequantize_linear)",
                                        .stage = OrtStage::kLevel1,
                                        .source = "core/optimizer/constant_folding.cc",
                                        .apply = &UnfoldDequantizedWeights};

}  // namespace footprint::ort
