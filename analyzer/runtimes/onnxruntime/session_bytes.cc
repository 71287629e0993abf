// The heap of ORT's session structures (session_bytes.h).
#include "analyzer/runtimes/onnxruntime/session_bytes.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "onnx/defs/schema.h"

namespace footprint::ort {
namespace {

constexpr char kNchwcDomain[] = "com.microsoft.nchwc";
constexpr int kLatestOpset = 1 << 30;  // The newest schema of an op (the model's opset is not at hand).
// The session's own structures: a graph, kernels and plans whose heap grows
// with what the graph holds. Measured (ORT 1.30, AVX-512 host, create from a
// path, arena off; probes of bench/ground_truth/arena_probes.py, chains of 10
// and 80 and the slope between them, rounded to 10 bytes; printed by
// bench/ground_truth/fit_constants.py from constants_probes.results.jsonl,
// which ctest onnxruntime_constants holds these to):
// - a fixed part: 1 Relu on 16 floats holds 66,400 with its node;
constexpr int64_t kSessionFixedBytes = 63'720;
// - per node with its output, and per dim of that output (a Relu chain on
//   [16]: 2,650; on [1, 18, 4, 4]: 2,866);
constexpr int64_t kSessionBytesPerNode = 2'580;
constexpr int64_t kSessionBytesPerOutputDim = 70;
// - per attribute the node carries once ORT gives it its schema's defaults
//   (LeakyRelu's alpha: +670; a Conv's 5 written attributes, 4 more than
//   the auto_pad and group defaults it holds anyway: +3,427; pooled);
constexpr int64_t kSessionBytesPerAttribute = 820;
// - per initializer held, beyond its data (an Add's 18-float addend: 1,432;
//   a Conv's 18-float bias: 1,503);
constexpr int64_t kSessionBytesPerInitializer = 1'470;
// - per node a rewrite took out, with its output (an Identity before each
//   Relu: 1,135), and per attribute it had (BatchNormalization's epsilon and
//   momentum, fused into its Conv: 635 for the two): ORT does not give all
//   of it back;
constexpr int64_t kSessionBytesPerRemovedNode = 1'140;
constexpr int64_t kSessionBytesPerRemovedAttribute = 320;
// - per initializer a rewrite took out (the four of a BatchNormalization
//   fused into its Conv and the Conv's old filter: 750 each);
constexpr int64_t kSessionBytesPerRemovedInitializer = 750;
// - per Cast ORT inserted for a float16 node it runs in float32 and took
//   out again (RemoveDuplicateCastTransformer: met its Cast back;
//   FuseInitializersTransformer: a weight converted at load): a chain of
//   float16 Sigmoids holds 1,700 more per node than a float32 one, two such
//   Casts each (RemoveNode leaves part behind, as for the file's nodes);
constexpr int64_t kSessionBytesPerCancelledCast = 850;
// - per value_info entry of the file (a Relu chain with one per
//   intermediate value: 609 more each);
constexpr int64_t kSessionBytesPerValueInfo = 610;
// - per character of a name too long for the string's own storage (over 15,
//   libstdc++): a Relu chain with 71-character node names holds 279 more per
//   node, with 67-character value names 579 more per value.
constexpr int64_t kShortStringChars = 15;
constexpr double kSessionBytesPerNodeNameChar = 279.0 / 71;
constexpr double kSessionBytesPerValueNameChar = 579.0 / 67;

// The attributes `node` carries in ORT's graph: its own, and every attribute
// of its op's schema that has a default (Graph::Resolve fills them in; ORT's
// optimized FastestDet shows MaxPool with auto_pad and storage_order added).
// NCHWc ops take the schema of the ONNX op they run; ORT's ReorderInput
// carries channels_last, ReorderOutput channels and channels_last.
int64_t AttributesInOrt(const onnx::NodeProto& node) {
  const bool nchwc = node.domain() == kNchwcDomain;
  if (nchwc && node.op_type() == "ReorderInput") return 1;
  if (nchwc && node.op_type() == "ReorderOutput") return 2;
  int64_t count = node.attribute_size();
  const std::string domain = nchwc ? "" : OpsetKey(node.domain());
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), kLatestOpset, domain);
  if (schema == nullptr) return count;
  for (const auto& [name, attribute] : schema->attributes()) {
    if (attribute.default_value.type() == onnx::AttributeProto::UNDEFINED) continue;  // No default.
    if (FindAttribute(node, name) == nullptr) ++count;
  }
  return count;
}


// An Identity, or a Dropout whose mask nobody reads, that ORT's level-1
// passes take out (identity_elimination.cc, dropout_elimination.cc) when its
// output is not a graph output.
bool EliminatedAtLevel1(const IrGraph& graph, const IrNode& node) {
  const onnx::NodeProto& proto = *node.proto;
  if (!IsDefaultDomain(proto)) return false;
  if (proto.op_type() != "Identity" && proto.op_type() != "Dropout") return false;
  if (node.outputs.empty() || graph.values[node.outputs[0]].is_graph_output) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (!graph.values[node.outputs[i]].consumers.empty() || graph.values[node.outputs[i]].is_graph_output) return false;
  }
  return true;
}

}  // namespace

// The session's own structures (the constants above) for `graph` as the
// rewrites left it: its nodes with their attributes, the initializers held,
// and what the rewrites took out of the file's graph (a node rewritten into
// another op, as NCHWc's, is ORT's new node beside the old one taken out).
int64_t SessionBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                     const std::vector<ValueId>& held_weights, int64_t new_initializers, int64_t removed_initializers) {
  auto name_bytes = [](const std::string& name, double per_char) {
    return name.size() > kShortStringChars ? static_cast<int64_t>(per_char * static_cast<double>(name.size())) : 0;
  };
  int64_t bytes = kSessionFixedBytes +
                  kSessionBytesPerInitializer * (new_initializers + static_cast<int64_t>(held_weights.size())) +
                  kSessionBytesPerRemovedInitializer * removed_initializers +
                  kSessionBytesPerCancelledCast * rewrite.cancelled_casts;
  // A float16 body's constant: its float32 initializer held (4 bytes), the
  // float16 one and the Cast between taken out.
  bytes += rewrite.float16_body_constants * (kSessionBytesPerInitializer + 4 + kSessionBytesPerRemovedInitializer +
                                             kSessionBytesPerCancelledCast);
  for (ValueId id : held_weights) bytes += name_bytes(graph.values[id].name, kSessionBytesPerValueNameChar);
  std::set<const onnx::NodeProto*> kept;
  for (const IrNode& node : graph.nodes) {
    if (EliminatedAtLevel1(graph, node)) continue;
    bytes += kSessionBytesPerNode + kSessionBytesPerAttribute * AttributesInOrt(*node.proto) +
             name_bytes(node.proto->name(), kSessionBytesPerNodeNameChar);
    for (ValueId output : node.outputs) {
      bytes += name_bytes(graph.values[output].name, kSessionBytesPerValueNameChar);
      const std::optional<ValueShape> shape = ShapeOfValue(graph, rewrite, shape_of, output);
      if (shape.has_value()) bytes += kSessionBytesPerOutputDim * static_cast<int64_t>(shape->dims.size());
    }
    kept.insert(node.proto);
  }
  if (graph.proto == nullptr) return bytes;
  for (const onnx::NodeProto& node : graph.proto->node()) {
    if (IsConstantNode(node) || kept.count(&node) > 0) continue;  // A Constant is an initializer in ORT.
    bytes += kSessionBytesPerRemovedNode + kSessionBytesPerRemovedAttribute * node.attribute_size();
  }
  // The file's value_info (an entry the analysis adds for an output the file
  // left untyped is not ORT's).
  for (const onnx::ValueInfoProto& info : graph.proto->value_info()) {
    const auto found = graph.value_by_name.find(info.name());
    if (found == graph.value_by_name.end() || !graph.values[found->second].is_graph_output) {
      bytes += kSessionBytesPerValueInfo;
    }
  }
  return bytes;
}

}  // namespace footprint::ort
