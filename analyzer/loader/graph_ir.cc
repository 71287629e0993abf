#include "analyzer/loader/graph_ir.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint {
namespace {

std::string DescribeNode(const onnx::NodeProto& node, int index) {
  const std::string name = node.name().empty() ? absl::StrCat("#", index) : absl::StrCat("'", node.name(), "'");
  return absl::StrCat("node ", name, " (", node.domain().empty() ? "" : node.domain() + ".", node.op_type(), ")");
}

}  // namespace

bool IsConstantNode(const onnx::NodeProto& node) {
  return node.op_type() == "Constant" && IsDefaultDomain(node);
}

absl::flat_hash_set<absl::string_view> FreeNames(const onnx::GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& initializer : graph.initializer()) defined.insert(initializer.name());
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) defined.insert(output);
  }
  absl::flat_hash_set<absl::string_view> free;
  auto read = [&](absl::string_view name) {
    if (!name.empty() && !defined.contains(name)) free.insert(name);
  };
  for (const auto& node : graph.node()) {
    for (const auto& input : node.input()) read(input);
    for (const onnx::GraphProto* body : BodiesOf(node)) {
      for (absl::string_view name : FreeNames(*body)) read(name);
    }
  }
  for (const auto& output : graph.output()) read(output.name());
  return free;
}

namespace {

// BuildIrGraph's steps, in order: weights and inputs, every node's outputs,
// the nodes (their inputs resolved, bodies' captures found), consumers, and
// the graph outputs.
class IrGraphBuilder {
 public:
  IrGraphBuilder(const onnx::GraphProto& graph, const absl::flat_hash_set<std::string>& outer_names)
      : graph_(graph), outer_names_(outer_names) {
    ir_.proto = &graph;
    size_t value_count = graph.initializer_size() + graph.input_size() + graph.output_size();
    for (const onnx::NodeProto& node : graph.node()) value_count += node.output_size();
    ir_.values.reserve(value_count);
    ir_.value_by_name.reserve(value_count);
    ir_.nodes.reserve(graph.node_size());
  }

  absl::Status AddWeightsAndInputs() {
    for (const onnx::TensorProto& initializer : graph_.initializer()) {
      if (ir_.value_by_name.contains(initializer.name())) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", initializer.name(), "' is defined twice"));
      }
      const ValueId id = AddValue(initializer.name(), ValueOrigin::kInitializer);
      ir_.values[id].initializer = &initializer;
    }
    for (const onnx::ValueInfoProto& input : graph_.input()) {
      auto it = ir_.value_by_name.find(input.name());
      if (it != ir_.value_by_name.end()) {
        if (ir_.values[it->second].origin == ValueOrigin::kInitializer) continue;  // IR < 4 lists weights as inputs.
        return absl::InvalidArgumentError(absl::StrCat("graph input '", input.name(), "' is listed twice"));
      }
      AddValue(input.name(), ValueOrigin::kGraphInput);
    }
    return absl::OkStatus();
  }

  // Outputs first, so that every node can find the values it reads whatever
  // the order of the file (the schedule checks the order later).
  absl::Status AddNodeOutputs() {
    for (int index = 0; index < graph_.node_size(); ++index) {
      const onnx::NodeProto& node = graph_.node(index);
      for (const std::string& output : node.output()) {
        if (output.empty()) continue;
        auto it = ir_.value_by_name.find(output);
        if (it != ir_.value_by_name.end()) {
          const IrValue& existing = ir_.values[it->second];
          std::string what = "a graph input";
          if (existing.origin == ValueOrigin::kInitializer) what = "an initializer";
          if (existing.origin == ValueOrigin::kNodeOutput || existing.origin == ValueOrigin::kConstant) {
            what = "the output of another node";
          }
          return absl::InvalidArgumentError(
              absl::StrCat(DescribeNode(node, index), " writes '", output, "', which is already ", what));
        }
        const ValueId id =
            AddValue(output, IsConstantNode(node) ? ValueOrigin::kConstant : ValueOrigin::kNodeOutput);
        if (IsConstantNode(node)) ir_.values[id].constant = &node;
      }
    }
    return absl::OkStatus();
  }

  absl::Status AddNodes() {
    for (int index = 0; index < graph_.node_size(); ++index) {
      const onnx::NodeProto& node = graph_.node(index);
      if (IsConstantNode(node)) continue;
      if (absl::Status status = AddNode(node, index); !status.ok()) return status;
    }
    for (NodeId node_id = 0; node_id < static_cast<NodeId>(ir_.nodes.size()); ++node_id) {
      for (ValueId id : ir_.nodes[node_id].inputs) ir_.values[id].consumers.push_back(node_id);
      for (ValueId id : ir_.nodes[node_id].implicit_inputs) ir_.values[id].consumers.push_back(node_id);
    }
    return absl::OkStatus();
  }

  absl::Status MarkGraphOutputs() {
    for (const onnx::ValueInfoProto& output : graph_.output()) {
      auto it = ir_.value_by_name.find(output.name());
      if (it == ir_.value_by_name.end()) {
        if (!outer_names_.contains(output.name())) {
          return absl::InvalidArgumentError(
              absl::StrCat("graph output '", output.name(), "' is not defined by any input, initializer or node"));
        }
        const ValueId id = AddValue(output.name(), ValueOrigin::kOuterScope);
        ir_.values[id].is_graph_output = true;
        continue;
      }
      ir_.values[it->second].is_graph_output = true;
    }
    return absl::OkStatus();
  }

  IrGraph Take() { return std::move(ir_); }

 private:
  // `name` must be the model's own string: the map keeps a view of it.
  ValueId AddValue(absl::string_view name, ValueOrigin origin) {
    const ValueId id = static_cast<ValueId>(ir_.values.size());
    ir_.values.push_back(IrValue{.name = std::string(name), .origin = origin});
    ir_.value_by_name.emplace(name, id);
    return id;
  }

  absl::StatusOr<ValueId> Resolve(absl::string_view name, const onnx::NodeProto& node, int index) {
    auto it = ir_.value_by_name.find(name);
    if (it != ir_.value_by_name.end()) return it->second;
    if (outer_names_.contains(name)) return AddValue(name, ValueOrigin::kOuterScope);
    return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node, index), " reads '", name,
                                                   "', which no graph input, initializer or node defines"));
  }

  absl::Status AddNode(const onnx::NodeProto& node, int index) {
    IrNode ir_node;
    ir_node.proto = &node;
    ir_node.proto_index = index;
    ir_node.display_name = node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
    const NodeId node_id = static_cast<NodeId>(ir_.nodes.size());
    ir_node.inputs.reserve(node.input_size());
    ir_node.outputs.reserve(node.output_size());
    for (const std::string& input : node.input()) {
      if (input.empty()) continue;  // An omitted optional input.
      absl::StatusOr<ValueId> id = Resolve(input, node, index);
      if (!id.ok()) return id.status();
      ir_node.inputs.push_back(*id);
    }
    for (const std::string& output : node.output()) {
      if (output.empty()) continue;
      const ValueId id = ir_.value_by_name.at(output);
      ir_.values[id].producer = node_id;
      ir_node.outputs.push_back(id);
    }
    ir_node.bodies = BodiesOf(node);
    if (absl::Status status = AddCaptures(node, index, ir_node); !status.ok()) return status;
    ir_.nodes.push_back(std::move(ir_node));
    return absl::OkStatus();
  }

  // The outer values `ir_node`'s bodies read, as its implicit inputs.
  absl::Status AddCaptures(const onnx::NodeProto& node, int index, IrNode& ir_node) {
    if (ir_node.bodies.empty()) return absl::OkStatus();
    if (!visible_to_bodies_built_) {
      visible_to_bodies_ = outer_names_;
      for (const IrValue& value : ir_.values) visible_to_bodies_.insert(value.name);
      visible_to_bodies_built_ = true;
    }
    absl::flat_hash_set<absl::string_view> captured;  // Views of the bodies' own strings.
    for (const onnx::GraphProto* body : ir_node.bodies) {
      for (absl::string_view name : FreeNames(*body)) {
        if (!visible_to_bodies_.contains(name)) {
          return absl::InvalidArgumentError(
              absl::StrCat(DescribeNode(node, index), " has a body that reads '", name, "', which nothing defines"));
        }
        captured.insert(name);
      }
    }
    std::vector<absl::string_view> sorted_captures(captured.begin(), captured.end());
    std::sort(sorted_captures.begin(), sorted_captures.end());  // Deterministic value order.
    for (absl::string_view name : sorted_captures) {
      absl::StatusOr<ValueId> id = Resolve(name, node, index);
      if (!id.ok()) return id.status();
      ir_node.implicit_inputs.push_back(*id);
    }
    return absl::OkStatus();
  }

  const onnx::GraphProto& graph_;
  const absl::flat_hash_set<std::string>& outer_names_;
  IrGraph ir_;
  // Built at the first node with a body: most graphs have none.
  absl::flat_hash_set<std::string> visible_to_bodies_;
  bool visible_to_bodies_built_ = false;
};

}  // namespace

absl::StatusOr<IrGraph> BuildIrGraph(const onnx::GraphProto& graph,
                                     const absl::flat_hash_set<std::string>& outer_names) {
  if (graph.node_size() > kMaxNodesPerGraph) {
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' has ", graph.node_size(),
                                                   " nodes, more than the limit of ", kMaxNodesPerGraph));
  }
  IrGraphBuilder builder(graph, outer_names);
  for (absl::Status (IrGraphBuilder::*step)() : {&IrGraphBuilder::AddWeightsAndInputs, &IrGraphBuilder::AddNodeOutputs,
                                                 &IrGraphBuilder::AddNodes, &IrGraphBuilder::MarkGraphOutputs}) {
    if (absl::Status status = (builder.*step)(); !status.ok()) return status;
  }
  return builder.Take();
}

void RemoveNodes(const std::vector<bool>& removed, IrGraph& graph) {
  std::vector<NodeId> new_id(graph.nodes.size(), -1);
  std::vector<IrNode> kept;
  kept.reserve(graph.nodes.size());
  for (size_t node_id = 0; node_id < graph.nodes.size(); ++node_id) {
    if (removed[node_id]) continue;
    new_id[node_id] = static_cast<NodeId>(kept.size());
    kept.push_back(std::move(graph.nodes[node_id]));
  }
  graph.nodes = std::move(kept);
  for (IrValue& value : graph.values) {
    if (value.producer >= 0) value.producer = new_id[value.producer];
    std::vector<NodeId> consumers;
    consumers.reserve(value.consumers.size());
    for (NodeId consumer : value.consumers) {
      if (new_id[consumer] >= 0) consumers.push_back(new_id[consumer]);
    }
    value.consumers = std::move(consumers);
  }
}

void RelinkValues(IrGraph& graph) {
  for (IrValue& value : graph.values) {
    value.consumers.clear();
    if (value.origin == ValueOrigin::kNodeOutput || value.origin == ValueOrigin::kFusedAway) value.producer = -1;
  }
  for (size_t node_id = 0; node_id < graph.nodes.size(); ++node_id) {
    const IrNode& node = graph.nodes[node_id];
    for (ValueId input : node.inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(node_id));
    for (ValueId input : node.implicit_inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(node_id));
    for (ValueId output : node.outputs) graph.values[output].producer = static_cast<NodeId>(node_id);
  }
}

bool IsViewOp(const onnx::NodeProto& node) {
  static const auto* const kOps =
      new absl::flat_hash_set<std::string>{"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return IsDefaultDomain(node) && kOps->contains(node.op_type());
}

}  // namespace footprint
