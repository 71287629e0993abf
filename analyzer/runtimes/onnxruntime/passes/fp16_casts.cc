// ORT's float16 Casts on the CPU provider (fp16_casts.h). Paths cited are
// in github.com/microsoft/onnxruntime; "measured" means an optimized-model
// dump of ORT 1.30 (onnxruntime-node) on an AVX-512 host.
#include "analyzer/runtimes/onnxruntime/passes/fp16_casts.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;     // TensorProto.FLOAT.
constexpr int32_t kFloat16 = 10;  // TensorProto.FLOAT16.

bool IsMicrosoftDomain(const onnx::NodeProto& node) { return node.domain() == "com.microsoft"; }

// A default-domain Cast and the type it casts to (0: not such a Cast).
int64_t CastTarget(const IrNode& node) {
  if (!IsDefaultDomain(*node.proto) || node.proto->op_type() != "Cast" || node.inputs.size() != 1 ||
      node.outputs.size() != 1) {
    return 0;
  }
  const onnx::AttributeProto* to = FindAttribute(*node.proto, "to");
  return to == nullptr ? 0 : to->i();
}

class Float16Casts {
 public:
  Float16Casts(PassContext& context, IrGraph& graph) : context_(context), graph_(graph) {}

  // What it did, for the table's later rows (PassContext::float16).
  CastsInserted Run() {
    const size_t value_count = graph_.values.size();
    model_type_.assign(value_count, 0);
    for (size_t id = 0; id < value_count; ++id) {
      const std::optional<ValueShape> shape = ShapeOfValue(graph_, context_, static_cast<ValueId>(id));
      if (shape.has_value()) model_type_[id] = shape->data_type;
    }
    const size_t node_count = graph_.nodes.size();
    took_in_weights_.assign(node_count, false);
    for (size_t node = 0; node < node_count; ++node) took_in_weights_[node] = TookInWeights(graph_.nodes[node]);
    in_float_.assign(node_count, false);
    for (size_t node = 0; node < node_count; ++node) in_float_[node] = LacksFloat16Kernel(graph_.nodes[node]);
    // ForceSingleNodeCPUFloat16ToFloat32, over the nodes in order: a node
    // turned to float32 counts as such for the nodes after it.
    for (size_t node = 0; node < node_count; ++node) {
      if (!in_float_[node] && IsIsolated(static_cast<NodeId>(node))) in_float_[node] = true;
    }
    bool any = false;
    for (bool in_float : in_float_) any = any || in_float;
    if (!any) return {};
    NumberCasts();
    removed_.assign(node_count, false);
    cast_before_.resize(node_count);
    cast_after_.resize(node_count);
    for (size_t id = 0; id < value_count; ++id) {
      if (model_type_[id] == kFloat16) Convert(static_cast<ValueId>(id));
    }
    DropCastsToFloat();
    // Every Cast ORT numbered but does not run was inserted, then taken out
    // (met its Cast back, or fused into a weight converted at load).
    int64_t kept = 0;
    for (const auto& made : made_casts_) kept += made.first < cast_count_ ? 1 : 0;
    cancelled_ = cast_count_ - kept;
    Rebuild();
    return {.casts = true, .converted_at_load = converted_at_load_};
  }

 private:
  // The NodeIndex ORT gives each Cast it inserts: InsertCastTransformer::
  // ApplyImpl walks the nodes in GraphViewer's order (execution_order.h) and,
  // at each node it runs in float32, adds a Cast (Graph::AddNode, the next
  // index) for each float16 input not cast yet (one Cast per value), in input
  // order, then one for each float16 output. The Casts that stay
  // (RemoveDuplicateCastTransformer drops the pairs) keep these indices,
  // which decide where ORT runs them (execution_order.h): a Cast of a graph
  // input or of a weight runs as soon as the walk reaches it; the Casts of
  // a float32 node's outputs that are graph outputs, made before the Cast
  // of the last output, run after everything that one needs.
  void NumberCasts() {
    const size_t value_count = graph_.values.size();
    cast_in_index_.assign(value_count, -1);
    cast_out_index_.assign(value_count, -1);
    std::optional<std::vector<NodeId>> walk = OrtExecutionOrder(graph_, OrtNodeIndices(graph_, context_.rewrite));
    if (!walk.has_value()) {  // A cycle: the schedule reports it; graph order here.
      walk.emplace(graph_.nodes.size());
      for (size_t id = 0; id < walk->size(); ++id) (*walk)[id] = static_cast<NodeId>(id);
    }
    int64_t made = 0;
    for (NodeId node : *walk) {
      if (!in_float_[node]) continue;
      for (ValueId input : graph_.nodes[node].inputs) {
        if (IsFloat16(input) && cast_in_index_[input] < 0) cast_in_index_[input] = made++;
      }
      for (ValueId output : graph_.nodes[node].outputs) {
        if (IsFloat16(output)) cast_out_index_[output] = made++;
      }
    }
    cast_count_ = made;
  }

  bool IsFloat16(ValueId id) const { return model_type_[id] == kFloat16; }

  // InsertCastTransformer::NeedInsertCast: no float16 kernel was assigned
  // (the CPU provider's registry, core/providers/cpu/cpu_execution_provider.cc,
  // for the default domain, and the com.microsoft ops measured to run in
  // float32; other ops of other domains are left as they are), no
  // subgraph, a float16 input.
  bool LacksFloat16Kernel(const IrNode& node) const {
    if (!node.bodies.empty()) return false;
    if (IsMicrosoftDomain(*node.proto)) {
      if (!ContribRunsInFloat32(node.proto->op_type())) return false;
    } else if (!IsDefaultDomain(*node.proto) || HasFloat16CpuKernel(node.proto->op_type())) {
      return false;
    }
    for (ValueId input : node.inputs) {
      if (IsFloat16(input)) return true;
    }
    return false;
  }

  // IsIsolatedFp16NodeOnCpu: a float16 node with an input from another node,
  // no subgraph, no graph output, whose float16 inputs from nodes all come
  // from float32 ones and whose float16 outputs only float32 ones read.
  bool IsIsolated(NodeId node_id) const {
    const IrNode& node = graph_.nodes[node_id];
    const bool known_kernel = IsDefaultDomain(*node.proto) ||
                              (IsMicrosoftDomain(*node.proto) && HasFloat16ContribKernel(node.proto->op_type()));
    if (!known_kernel || !node.bodies.empty() || !node.implicit_inputs.empty()) return false;
    bool has_input_edge = false;
    bool has_float16_input = false;
    for (ValueId input : node.inputs) {
      const IrValue& value = graph_.values[input];
      const bool from_node = value.origin == ValueOrigin::kNodeOutput && value.producer >= 0;
      has_input_edge = has_input_edge || from_node;
      if (!IsFloat16(input)) continue;
      has_float16_input = true;
      if (from_node && !in_float_[value.producer]) return false;
    }
    if (!has_input_edge || !has_float16_input) return false;
    bool has_float16_output = false;
    for (ValueId output : node.outputs) {
      const IrValue& value = graph_.values[output];
      if (value.is_graph_output) return false;
      if (!IsFloat16(output)) continue;
      has_float16_output = true;
      for (NodeId reader : value.consumers) {
        if (!in_float_[reader]) return false;
      }
    }
    return has_float16_output;
  }

  // A value held in `data_type` with the dims of `sized_as`.
  ValueId AddHeldValue(const std::string& name, ValueOrigin origin, ValueId sized_as, int32_t data_type) {
    return AddValue(graph_, context_.rewrite, IrValue{.name = name, .origin = origin},
                    HeldValue{.sized_as = sized_as, .data_type = data_type});
  }

  // Value `id` is held in float32.
  void HoldInFloat(ValueId id) { MutableHeld(graph_, context_.rewrite, id).data_type = kFloat; }

  // A Cast that ORT runs (InsertedPrecisionFreeCast_*), placed before node
  // `before` or, with before < 0, after node `after`. A Cast of a graph
  // input (an initializer the caller may override too) ORT runs first, its
  // output live from the start of the run (measured: eight MatMuls reading
  // overridable float16 weights peak with all eight float32 copies live;
  // version-slim-320's optimized model lists those Casts first). A Cast of
  // a constant weight runs before its first reader (light_vgg19's merged
  // filters: its peak, at the first layers, holds none of their copies).
  void AddCast(ValueId input, ValueId output, int32_t to, NodeId before, NodeId after) {
    const std::string name = "InsertedPrecisionFreeCast_" + graph_.values[output].name;
    auto proto = NewNodeProto("Cast", "", name, {graph_.values[input].name}, {graph_.values[output].name});
    onnx::AttributeProto* attribute = proto->add_attribute();
    attribute->set_name("to");
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(to);
    IrNode node = NodeRunning(*proto, {input}, {output});
    int64_t index = to == kFloat16 ? cast_out_index_[output] : cast_in_index_[input];
    if (index < 0) index = cast_count_ + static_cast<int64_t>(made_casts_.size());
    made_casts_.emplace_back(index, std::move(proto));
    const ValueOrigin origin = graph_.values[input].origin;
    const bool caller_may_set = origin == ValueOrigin::kGraphInput ||
                                (origin == ValueOrigin::kInitializer && !IsConstantWeight(graph_, context_.rewrite, input));
    if (caller_may_set) {
      cast_first_.push_back(std::move(node));
    } else {
      (before >= 0 ? cast_before_[before] : cast_after_[after]).push_back(std::move(node));
    }
  }

  // The float32 readers of float16 value `id` (node, input slot), and
  // whether anything else reads it (a float16 node, a body, the caller).
  struct Readers {
    std::vector<std::pair<NodeId, size_t>> in_float;  // Inputs of nodes run in float32.
    std::vector<std::pair<NodeId, size_t>> casts;     // The model's Casts to float32 (input 0).
    bool float16 = false;                             // A float16 kernel or a body reads it, or it is a graph output.
    NodeId first_float = -1;                          // The first node of in_float.
    NodeId first_float16 = -1;                        // The first float16 reader node.
  };

  Readers ReadersOf(ValueId id) const {
    Readers readers;
    const IrValue& value = graph_.values[id];
    readers.float16 = value.is_graph_output;
    absl::flat_hash_set<NodeId> seen;
    for (NodeId reader : value.consumers) {
      if (!seen.insert(reader).second) continue;
      const IrNode& node = graph_.nodes[reader];
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (node.inputs[slot] != id) continue;
        if (in_float_[reader]) {
          readers.in_float.emplace_back(reader, slot);
          if (readers.first_float < 0 || reader < readers.first_float) readers.first_float = reader;
        } else if (CastTarget(node) == kFloat) {
          readers.casts.emplace_back(reader, slot);
        } else {
          readers.float16 = true;
          if (readers.first_float16 < 0 || reader < readers.first_float16) readers.first_float16 = reader;
        }
      }
      for (ValueId implicit : node.implicit_inputs) {
        if (implicit != id) continue;
        readers.float16 = true;
        if (readers.first_float16 < 0 || reader < readers.first_float16) readers.first_float16 = reader;
      }
    }
    return readers;
  }

  // Whether `node` is a Conv whose level-1 fusion took in constant weights
  // (a BatchNormalization's, a per-channel Mul's or Add's: the inputs past
  // its own, conv_fusions.cc; loaded_weights.cc reads the same).
  bool TookInWeights(const IrNode& node) const {
    const onnx::NodeProto& proto = *node.proto;
    if (!IsDefaultDomain(proto) || proto.op_type() != "Conv") return false;
    for (size_t taken = static_cast<size_t>(proto.input_size()); taken < node.inputs.size(); ++taken) {
      if (IsConstantWeight(graph_, context_.rewrite, node.inputs[taken])) return true;
    }
    return false;
  }

  // Whether ORT rewrote input `slot` of `node` at level 1, before the Casts:
  // the weights of a Conv that took some in (its filter and bias become new
  // weights of its own, the ones taken in are folded into them).
  bool RewrittenAtLoad(NodeId node, size_t slot) const { return took_in_weights_[node] && slot > 0; }

  void Repoint(const std::vector<std::pair<NodeId, size_t>>& inputs, ValueId to) {
    for (const auto& [node, slot] : inputs) graph_.nodes[node].inputs[slot] = to;
  }

  void Convert(ValueId id) {
    Readers readers = ReadersOf(id);
    IrValue& value = graph_.values[id];
    const NodeId producer = value.origin == ValueOrigin::kNodeOutput ? value.producer : -1;
    if (producer >= 0 && in_float_[producer]) {
      // Written in float32. The model's Casts to float32 read that (their
      // pairs with the Cast back cancel; DropCastsToFloat removes them).
      if (!readers.float16) {
        HoldInFloat(id);
        return;
      }
      // Both: the float32 value, and a Cast to float16 for the others.
      const ValueId in_float = AddHeldValue(value.name + ".float32", ValueOrigin::kNodeOutput, id, kFloat);
      for (ValueId& output : graph_.nodes[producer].outputs) {
        if (output == id) output = in_float;
      }
      Repoint(readers.in_float, in_float);
      Repoint(readers.casts, in_float);
      if (readers.first_float16 >= 0) {
        AddCast(in_float, id, kFloat16, readers.first_float16, -1);
      } else {
        AddCast(in_float, id, kFloat16, -1, producer);  // Only the caller reads it.
      }
      return;
    }
    if (readers.in_float.empty()) return;
    const bool only_float = !readers.float16 && readers.casts.empty();
    if (producer >= 0 && CastTarget(graph_.nodes[producer]) == kFloat16) {
      const ValueId source = graph_.nodes[producer].inputs[0];
      if (model_type_[source] == kFloat) {
        // The model's Cast to float16 and ORT's Cast back cancel: the
        // float32 readers read its source.
        Repoint(readers.in_float, source);
        if (only_float) {
          removed_[producer] = true;
          Drop(id);
        }
        return;
      }
      if (only_float) {  // The Cast writes float32 straight away (RemoveDuplicateCastTransformer keeps one Cast).
        HoldInFloat(id);
        return;
      }
    }
    if (IsConstantWeight(graph_, context_.rewrite, id) && ConvertWeight(id, only_float, readers)) return;
    // A Cast to float32 at every run: of a graph input, a float16 node's
    // output, a weight read by more than one float32 input.
    const ValueId in_float = AddHeldValue(value.name + ".float32", ValueOrigin::kNodeOutput, id, kFloat);
    Repoint(readers.in_float, in_float);
    AddCast(id, in_float, kFloat, readers.first_float, -1);
  }

  // A float16 weight `id` read in float32 by `readers` (the float32 ones
  // left after it: those ORT does not rewrite at load); true when that is
  // all it takes.
  //  - A Conv that took in a BatchNormalization (or a per-channel Mul or
  //    Add) at level 1, before the Casts, has new weights of its own
  //    (core/optimizer/conv_bn_fusion.cc): its reads of this one are gone,
  //    its own are converted at load.
  //  - A weight read by one float32 input is converted at load
  //    (FuseInitializersTransformer: a Cast with no input edge and one
  //    output edge).
  bool ConvertWeight(ValueId id, bool only_float, Readers& readers) {
    std::vector<std::pair<NodeId, size_t>> others;
    bool rewritten = false;
    for (const auto& [node, slot] : readers.in_float) {
      if (RewrittenAtLoad(node, slot)) {
        rewritten = true;
      } else {
        others.emplace_back(node, slot);
      }
    }
    converted_at_load_ = converted_at_load_ || rewritten;
    if (rewritten && others.empty() && only_float) {
      HoldInFloat(id);
      return true;
    }
    readers.in_float = std::move(others);
    if (readers.in_float.empty()) return true;
    readers.first_float = readers.in_float.front().first;
    for (const auto& [node, slot] : readers.in_float) readers.first_float = std::min(readers.first_float, node);
    if (readers.in_float.size() != 1 || graph_.values[id].is_graph_output) return false;
    converted_at_load_ = true;
    if (only_float) {
      HoldInFloat(id);
      return true;
    }
    const std::string name = graph_.values[id].name + ".float32";
    const ValueId converted = AddHeldValue(name, ValueOrigin::kFolded, id, kFloat);
    Repoint(readers.in_float, converted);
    return true;
  }

  // The Cast writing `id` goes, and `id` with it.
  void Drop(ValueId id) {
    MarkFusedAway(graph_, context_.rewrite, id);
    ++dropped_;
  }

  // The model's Casts to float32 that now read a float32 value: ORT removes
  // them with the Cast to float16 they paired with, unless they give a graph
  // output (then they copy).
  void DropCastsToFloat() {
    std::vector<ValueId> replaced_by(graph_.values.size(), -1);
    bool any = false;
    for (size_t node_id = 0; node_id < graph_.nodes.size(); ++node_id) {
      const IrNode& node = graph_.nodes[node_id];
      if (removed_[node_id] || CastTarget(node) != kFloat) continue;
      const ValueId source = node.inputs[0];
      const ValueId output = node.outputs[0];
      if (HeldAs(context_.rewrite, source).data_type != kFloat || graph_.values[output].is_graph_output) continue;
      replaced_by[output] = source;
      removed_[node_id] = true;
      Drop(output);
      any = true;
    }
    if (!any) return;
    auto replace = [&](IrNode& node) {
      for (ValueId& input : node.inputs) {
        if (replaced_by[input] >= 0) input = replaced_by[input];
      }
      for (ValueId& input : node.implicit_inputs) {
        if (replaced_by[input] >= 0) input = replaced_by[input];
      }
    };
    for (IrNode& node : graph_.nodes) replace(node);
    for (IrNode& cast : cast_first_) replace(cast);
    for (std::vector<IrNode>& casts : cast_before_) {
      for (IrNode& cast : casts) replace(cast);
    }
    for (std::vector<IrNode>& casts : cast_after_) {
      for (IrNode& cast : casts) replace(cast);
    }
  }

  // graph.nodes with the Casts in place and the removed nodes gone; every
  // producer and consumer recomputed.
  void Rebuild() {
    std::stable_sort(made_casts_.begin(), made_casts_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [index, proto] : made_casts_) RecordMadeNode(context_.rewrite, std::move(proto));
    std::vector<IrNode> nodes = std::move(cast_first_);
    for (size_t node_id = 0; node_id < graph_.nodes.size(); ++node_id) {
      for (IrNode& cast : cast_before_[node_id]) nodes.push_back(std::move(cast));
      if (!removed_[node_id]) nodes.push_back(std::move(graph_.nodes[node_id]));
      for (IrNode& cast : cast_after_[node_id]) nodes.push_back(std::move(cast));
    }
    graph_.nodes = std::move(nodes);
    RelinkValues(graph_);
  }

 public:
  int64_t dropped() const { return dropped_; }
  int64_t cancelled() const { return cancelled_; }

 private:
  PassContext& context_;
  IrGraph& graph_;
  int64_t dropped_ = 0;                           // Casts of the model's ORT removes.
  int64_t cancelled_ = 0;                         // Casts ORT inserted and took out again.
  std::vector<int32_t> model_type_;               // Per value: its element type in the model (0: unknown).
  std::vector<bool> in_float_;                    // Per original node: runs in float32.
  std::vector<bool> took_in_weights_;             // Per original node: a Conv whose weights ORT rewrote at level 1.
  std::vector<bool> removed_;                     // Per original node: a Cast ORT removes.
  std::vector<int64_t> cast_in_index_;            // Per value: the order ORT makes its Cast to float32 in (-1: none).
  std::vector<int64_t> cast_out_index_;           // Per value: the order ORT makes the Cast of it back to float16 in.
  int64_t cast_count_ = 0;                        // Casts numbered.
  bool converted_at_load_ = false;                // A float16 weight is converted at load.
  std::vector<std::pair<int64_t, std::shared_ptr<onnx::NodeProto>>> made_casts_;  // Casts made, by that order.
  std::vector<IrNode> cast_first_;                // Casts ORT runs first (of graph inputs and weights).
  std::vector<std::vector<IrNode>> cast_before_;  // Per original node: Casts ORT runs just before it.
  std::vector<std::vector<IrNode>> cast_after_;   // Per original node: Casts ORT runs just after it.
};

}  // namespace

// Measured: single-op float16 models at opset 17 (bench/ground_truth/
// fp16_probes.py); an op is listed when ORT 1.30's optimized model keeps it
// with no Cast around it (Shrink: at opsets 12 to 23). Shape and Size take
// any type.
bool HasFloat16CpuKernel(const std::string& op) {
  static const auto* const kFloat16Kernels = new absl::flat_hash_set<std::string>{
      "Cast",   "Clip",   "Concat",     "Expand", "Flatten", "Gather",  "GatherElements", "Identity",
      "IsNaN",  "LayerNormalization",   "Max",    "Min",     "Reshape", "Round",          "ScatterND",
      "SimplifiedLayerNormalization",  // ORT's own op, registered in the default domain.
      "Shape",  "Shrink", "Sign",       "Size",   "Slice",   "Split",   "Squeeze",        "Transpose",
      "Unsqueeze"};
  return kFloat16Kernels->contains(op);
}

// Measured: single com.microsoft ops on float16 inputs (the fp16 tiny
// Llama's optimized model shows the same). Gelu and FastGelu are inlined as
// their function bodies (fp16_function_bodies.h); BiasAdd and GemmFastGelu
// have no CPU kernel at all.
bool HasFloat16ContribKernel(const std::string& op) {
  static const auto* const kKernels = new absl::flat_hash_set<std::string>{
      "GroupQueryAttention", "MatMulNBits", "RotaryEmbedding", "SkipLayerNormalization",
      "SkipSimplifiedLayerNormalization"};
  return kKernels->contains(op);
}

// EmbedLayerNormalization registers a float kernel only
// (contrib_ops/cpu/bert/embed_layer_norm.cc); measured: with float16
// embeddings of 4096 x 256 ORT holds 4,809,984 bytes after creation, with
// float32 ones 4,797,392 (arena off, this AVX-512 host): float32 either way.
bool ContribRunsInFloat32(const std::string& op) {
  static const auto* const kInFloat = new absl::flat_hash_set<std::string>{
      "Attention", "BiasGelu", "EmbedLayerNormalization", "FusedMatMul", "MultiHeadAttention", "QuickGelu"};
  return kInFloat->contains(op);
}

// Measured: the ops with a bfloat16 kernel on ORT 1.30's CPU provider
// (single bfloat16 ops at opset 17; ops ORT inlines, LeakyRelu, PRelu,
// Softmax, fail on a body node).
bool HasBfloat16CpuKernel(const std::string& op) {
  static const auto* const kKernels = new absl::flat_hash_set<std::string>{
      "Cast",     "Concat", "ConstantOfShape", "Flatten", "Gather",  "Identity",  "LayerNormalization",
      "Reshape",  "Shape",  "Sign",            "Slice",   "Split",   "Squeeze",   "Transpose",
      "Unsqueeze"};
  return kKernels->contains(op);
}

namespace {

// "" when ORT 1.30's CPU provider can run every bfloat16 node of `graph`;
// else one line naming the first default-domain node that reads or writes a
// bfloat16 tensor and whose op has no bfloat16 kernel there (measured:
// single bfloat16 ops, "Could not find an implementation for Relu(14)").
// ORT refuses such a model (it inserts Casts for float16 only): no figure.
std::string RefusedBfloat16Node(const PassContext& context, const IrGraph& graph) {
  constexpr int32_t kBfloat16 = 16;  // TensorProto.BFLOAT16.
  for (const IrNode& node : graph.nodes) {
    if (!IsDefaultDomain(*node.proto) || !node.bodies.empty() || HasBfloat16CpuKernel(node.proto->op_type())) continue;
    bool bfloat16 = false;
    for (const std::vector<ValueId>* values : {&node.inputs, &node.outputs}) {
      for (ValueId id : *values) {
        const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
        bfloat16 = bfloat16 || (shape.has_value() && shape->data_type == kBfloat16);
      }
    }
    if (bfloat16) {
      return "ONNX Runtime 1.30's CPU provider cannot run this model: no bfloat16 kernel for " +
             node.proto->op_type() + " (node '" + node.display_name + "')";
    }
  }
  return "";
}

PassChange RefuseBfloat16WithoutKernel(IrGraph& graph, PassContext& context) {
  context.rewrite.refused = RefusedBfloat16Node(context, graph);
  return {};
}

// Float16 ops without a float16 kernel run in float32 behind Casts: values
// held in float32 get HeldValue::data_type, float32 copies ORT adds are new
// values sized as the float16 one (HeldValue::sized_as), the Casts it runs
// are new nodes numbered as ORT numbers them (execution_order.h), the Casts
// it removes leave graph.nodes (their outputs kFusedAway). Runs after the
// level-1 fusions (a Conv that took in a BatchNormalization has weights of
// its own). Tells the rows after it what it did (PassContext::float16).
PassChange InsertCasts(IrGraph& graph, PassContext& context) {
  Float16Casts casts(context, graph);
  context.float16 = casts.Run();
  context.rewrite.cancelled_casts += casts.cancelled();
  return {.fused_nodes = casts.dropped()};
}

}  // namespace

const Pass kBfloat16WithoutKernel = {.name = "no bfloat16 kernel (session creation fails)",
                                     .stage = OrtStage::kPartitioning,
                                     .source = "core/framework/graph_partitioner.cc",
                                     .apply = &RefuseBfloat16WithoutKernel};

const Pass kInsertCastTransformer = {.name = "InsertCastTransformer, RemoveDuplicateCastTransformer",
                                     .stage = OrtStage::kInsertCast,
                                     .source = "core/optimizer/insert_cast_transformer.cc",
                                     .apply = &InsertCasts};

}  // namespace footprint::ort
