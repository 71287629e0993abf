// The graph-editing toolkit of ONNX Runtime's passes (pass.h): what a pass
// asks of the graph (constants, shapes as ORT holds them; attributes are
// read with the loader's onnx_attributes.h, as everywhere) and
// how it changes it (values and nodes added, nodes fused away, merged or
// run as another op), keeping the rewrite's side tables (GraphRewrite:
// held values, writes_over, overridable initializers, the nodes made) in
// step with the graph. Every pass edits the graph through these, so that an
// added value or node is the same thing whichever pass adds it.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_GRAPH_EDITING_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_GRAPH_EDITING_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/pass.h"
#include "analyzer/runtimes/runtime_model.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// ---- Reading the graph.

// The nodes in a topological order, the smallest index first among the ready
// ones (file order where it is valid); implicit inputs count. nullopt on a
// cycle. For a pass that added nodes out of order (NCHWc's Sum input).
std::optional<std::vector<NodeId>> NodeTopologicalOrder(const IrGraph& graph);

// A float tensor's values stored in the file (float_data or raw_data,
// little-endian as ONNX stores it); nullopt for another type or external data.
std::optional<std::vector<float>> InlineFloats(const onnx::TensorProto& tensor);


// A QuantizeLinear / DequantizeLinear as ORT's QDQ rules match them
// (qdq_util.cc, MatchQNode / MatchDQNode): ONNX's, or com.microsoft's
// version 1, which ORT's quantizer writes for 16-bit types below opset 21
// and with UseQDQContribOps.
bool IsQuantizeLinear(const onnx::NodeProto& node);
bool IsDequantizeLinear(const onnx::NodeProto& node);

// The value of that name; nullopt for "" or a name the graph does not have
// (the values a pass added have no entry).
std::optional<ValueId> ValueNamed(const IrGraph& graph, const std::string& name);

// Whether `node` is ONNX's op `op` (the default domain, however spelled).
bool IsOp(const IrNode& node, std::string_view op);

// Whether a DequantizeLinear runs in `graph` or made one of its weights (a
// folded value): the QDQ passes have nothing to do otherwise, and skip the
// walk.
bool HasDequantizeLinear(const IrGraph& graph);

// The node that alone reads `value`, or -1 (a graph output, no reader or
// several): ORT's CheckOutputEdges(node, 1).
NodeId SoleReader(const IrGraph& graph, ValueId value);

// The constant tensor behind a value (an initializer or a Constant's value);
// nullptr for any other value.
const onnx::TensorProto* ConstantTensor(const IrGraph& graph, ValueId id);

// Whether the caller may override `id` (an initializer also listed as a
// graph input: GraphRewrite::overridable).
bool IsOverridable(const GraphRewrite& rewrite, ValueId id);

// A weight ORT treats as constant: an initializer, a Constant's value or a
// folded value, unless the caller may override it (GraphRewrite::overridable).
bool IsConstantWeight(const IrGraph& graph, const GraphRewrite& rewrite, ValueId id);

// A value's element type and dims as ORT holds them: a weight's from the
// model, others' from `shape_of`, a value a pass added as the value it
// stands for (HeldValue::sized_as) in its held element type; nullopt when
// unknown.
std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                       ValueId id);
// The same within a pass: the context's rewrite and shapes.
inline std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const PassContext& context, ValueId id) {
  return ShapeOfValue(graph, context.rewrite, context.model.shape_of, id);
}

// The product of dims[from], dims[from + 1], ...: elements per slice (what
// the workspace rules read of a shape).
int64_t Product(const std::vector<int64_t>& dims, size_t from);

// ---- Changing it.

// How the rewrite holds `id`, to be changed: the side table grows to the
// graph's values first.
HeldValue& MutableHeld(const IrGraph& graph, GraphRewrite& rewrite, ValueId id);

// Adds `value` to graph.values (not to value_by_name: it has no name in the
// model), held as `held`; every side table of the rewrite indexed like the
// values grows with it. Returns its id.
ValueId AddValue(IrGraph& graph, GraphRewrite& rewrite, IrValue value, HeldValue held = {});

// A node proto a pass makes: op and domain, `name`, inputs and outputs by name.
std::shared_ptr<onnx::NodeProto> NewNodeProto(const std::string& op, const std::string& domain,
                                              const std::string& name, const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& outputs);

// `proto`, a node the pass made, handed to the rewrite, which owns it
// (GraphRewrite::made_nodes). The order protos are handed over is the order
// ORT's Graph::AddNode numbers the nodes in (execution_order.h).
void RecordMadeNode(GraphRewrite& rewrite, std::shared_ptr<onnx::NodeProto> proto);

// A node running `proto`, a node the pass made, that reads `inputs` and
// writes `outputs`; named as the proto. The pass puts it into graph.nodes
// where ORT runs it and relinks the values; it hands the proto over
// (RecordMadeNode) when ORT would number it, or MadeNode does both at once.
IrNode NodeRunning(const onnx::NodeProto& proto, std::vector<ValueId> inputs, std::vector<ValueId> outputs);
IrNode MadeNode(GraphRewrite& rewrite, std::shared_ptr<onnx::NodeProto> proto, std::vector<ValueId> inputs,
                std::vector<ValueId> outputs);

// The rewrite's writes_over table (GraphRewrite::writes_over), made the
// size of the graph's values (-1: no input written over) to be changed.
std::vector<ValueId>& MutableWritesOver(const IrGraph& graph, GraphRewrite& rewrite);

// `node` now runs as `proto`, a node the pass made (ORT's Graph::AddNode:
// execution_order.h numbers it after the file's nodes); the rewrite keeps it
// alive (GraphRewrite::made_nodes). Returns it for further edits.
onnx::NodeProto& UseRuntimeProto(GraphRewrite& rewrite, IrNode& node, std::shared_ptr<onnx::NodeProto> proto);

// The attribute `name` of `node` set to `values` (added when absent).
void SetIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);

// `id` removed by a fusion: no producer, no readers, listed in the rewrite's
// fused tensors.
void MarkFusedAway(IrGraph& graph, GraphRewrite& rewrite, ValueId id);

// `node` no longer reads `value`.
void EraseConsumer(IrValue& value, NodeId node);

// CSE of two equal nodes: `duplicate`'s readers read `first`'s outputs
// instead, its outputs become kFusedAway, it reads nothing and is marked
// in `removed` (the caller counts it as fused). False, and nothing changed,
// when one of its outputs is a graph output (ORT never eliminates those) or
// the two differ in outputs.
bool MergeIntoFirst(NodeId duplicate, NodeId first, IrGraph& graph, GraphRewrite& rewrite,
                    std::vector<bool>& removed);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_GRAPH_EDITING_H_
