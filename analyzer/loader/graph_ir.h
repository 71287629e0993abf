// The dataflow view of one ONNX graph that the analysis works on.
//
// Why our own view: the ModelProto names values by string and leaves
// producers, consumers and subgraph captures implicit. Liveness and
// scheduling need them as indices, checked once: every input defined, every
// value written once, outer-scope values read by If/Loop/Scan bodies turned
// into explicit (implicit) inputs of the node that holds the body.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_GRAPH_IR_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_GRAPH_IR_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace footprint {

using ValueId = int;  // Index into IrGraph::values.
using NodeId = int;   // Index into IrGraph::nodes.

enum class ValueOrigin {
  kGraphInput,   // A graph input that is not an initializer.
  kInitializer,  // A graph initializer (weight).
  kConstant,     // The output of a Constant node (weight).
  kNodeOutput,   // The output of a scheduled node.
  kOuterScope,   // Defined by an enclosing graph (only in subgraphs).
  kFolded,       // The output of a node evaluated at load (set by the analysis's constant folding): a weight.
  kFusedAway,    // Between two nodes a rewrite fuses (a runtime's, or the accumulate and qdq modes'): never exists.
};

struct IrValue {
  std::string name;                // The ONNX value name.
  ValueOrigin origin;              // Where it comes from.
  NodeId producer = -1;            // For kNodeOutput: the node that writes it.
  std::vector<NodeId> consumers;   // Nodes that read it, explicitly or from a body; may repeat.
  bool is_graph_output = false;    // Listed in the graph's outputs.
  const onnx::TensorProto* initializer = nullptr;  // For kInitializer.
  const onnx::NodeProto* constant = nullptr;       // For kConstant: the Constant node.
  const onnx::NodeProto* folded_from = nullptr;    // For kFolded: the node that computed it at load.
};

struct IrNode {
  const onnx::NodeProto* proto = nullptr;        // Owned by the ModelProto, or by the rewrite that made it.
  std::string display_name;                      // proto->name(), or "<op>_<index>" when empty.
  int proto_index = 0;                           // Position in GraphProto.node.
  std::vector<ValueId> inputs;                   // Non-empty explicit inputs.
  std::vector<ValueId> outputs;                  // Non-empty outputs.
  std::vector<ValueId> implicit_inputs;          // Values of this graph read inside its bodies.
  std::vector<const onnx::GraphProto*> bodies;   // Subgraph attributes (If branches, Loop/Scan body).
};

struct IrGraph {
  const onnx::GraphProto* proto = nullptr;             // Owned by the ModelProto.
  std::vector<IrValue> values;                         // Every value named in this graph.
  std::vector<IrNode> nodes;                           // Scheduled nodes, in file order (no Constants).
  // Keys are the model's own strings; values a rewrite adds later are not in it.
  absl::flat_hash_map<absl::string_view, ValueId> value_by_name;
};

// Graphs larger than this are refused with a clear error rather than risking
// the machine's memory: the largest LLM exports have a few 100,000 nodes.
inline constexpr int kMaxNodesPerGraph = 10'000'000;

// True for a Constant node of the default domain (its value is a weight).
bool IsConstantNode(const onnx::NodeProto& node);

// Removes the nodes marked in `removed` (indexed like graph.nodes) from
// graph.nodes, keeping the others' order and renumbering every producer and
// consumer; a removed node's outputs keep producer -1 and lose it as a
// consumer. Shared by constant folding and the runtime profiles' fusions.
void RemoveNodes(const std::vector<bool>& removed, IrGraph& graph);

// After graph.nodes were reordered or added to: every value's consumers and
// producer from the nodes as they are now (inputs and implicit inputs read;
// a node output or fused-away value no node writes any more has producer -1).
void RelinkValues(IrGraph& graph);

// A node of the default domain whose output is a view of its first input
// (Reshape, Flatten, Squeeze, Unsqueeze, Identity): the aliasing mode and
// the runtimes' planners give it the input's bytes.
bool IsViewOp(const onnx::NodeProto& node);

// Builds and checks the view. `outer_names` are the values visible from
// enclosing graphs (empty for the main graph). Errors name the node and op:
// an input nothing defines, a value written twice, an undefined graph output.
absl::StatusOr<IrGraph> BuildIrGraph(const onnx::GraphProto& graph,
                                     const absl::flat_hash_set<std::string>& outer_names);

// The names a graph reads but does not define, including those its nested
// bodies read from it or from further out: views of the graph's own strings.
absl::flat_hash_set<absl::string_view> FreeNames(const onnx::GraphProto& graph);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_GRAPH_IR_H_
