// Internal to analyzer/runtimes/onnxruntime/: what the rules of this folder
// ask of the graph (first written for the quantized rules, qdq_fusion.h,
// nhwc_layout.h and quantized_workspaces.h). The domain test is
// loader/onnx_domain.h's, as everywhere.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_GRAPH_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_GRAPH_H_

#include <memory>
#include <optional>
#include <string>

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/runtime_model.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

// A QuantizeLinear / DequantizeLinear as ORT's QDQ rules match them
// (qdq_util.cc, MatchQNode / MatchDQNode): ONNX's, or com.microsoft's
// version 1, which ORT's quantizer writes for 16-bit types below opset 21
// and with UseQDQContribOps.
bool IsQuantizeLinear(const onnx::NodeProto& node);
bool IsDequantizeLinear(const onnx::NodeProto& node);

// The value of that name; nullopt for "" or a name the graph does not have.
std::optional<ValueId> ValueNamed(const IrGraph& graph, const std::string& name);

// The constant tensor behind a value (an initializer or a Constant's value);
// nullptr for any other value.
const onnx::TensorProto* ConstantTensor(const IrGraph& graph, ValueId id);

// `id` removed by a fusion: no producer, no readers, listed in the summary.
void MarkFusedAway(IrGraph& graph, FusionSummary& summary, ValueId id);

// `node` now runs as `proto`, a node this folder's rules made (ORT's
// Graph::AddNode: execution_order.h numbers it after the file's nodes); the
// graph keeps it alive (runtime_protos). Returns it for further edits.
onnx::NodeProto& UseRuntimeProto(IrGraph& graph, IrNode& node, std::shared_ptr<onnx::NodeProto> proto);

// `node` no longer reads `value`.
void EraseConsumer(IrValue& value, NodeId node);

// CSE of two equal nodes: `duplicate`'s readers read `first`'s outputs
// instead, its outputs become kFusedAway, it reads nothing and is marked
// in `removed` (summary.fused_nodes counts it). False, and nothing changed,
// when one of its outputs is a graph output (ORT never eliminates those) or
// the two differ in outputs.
bool MergeIntoFirst(NodeId duplicate, NodeId first, IrGraph& graph, FusionSummary& summary,
                    std::vector<bool>& removed);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_QUANTIZED_GRAPH_H_
