// ORT's weights after session creation (loaded_weights.h).
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include "analyzer/loader/model_loader.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/shared_constants.h"
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"
#include "analyzer/shapes/tensor_size.h"
#include "onnx/defs/schema.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;                       // TensorProto.FLOAT.
constexpr char kNchwcDomain[] = "com.microsoft.nchwc";
constexpr int64_t kGemmStrideNAlign = 16;           // MLAS_SGEMM_STRIDEN_THREAD_ALIGN.
constexpr int64_t kPackedBufferAlignment = 64;      // MlasGetPreferredBufferAlignment().
constexpr int kLatestOpset = 1 << 30;               // The newest schema of an op (the model's opset is not at hand).
// The session's own structures: a graph, kernels and plans whose heap grows
// with what the graph holds. Measured (ORT 1.30, AVX-512 host, create from a
// path, arena off; probes of bench/ground_truth/arena_probes.py, chains of 10
// and 80 and the slope between them):
// - a fixed part: 1 Relu on 16 floats holds 66,248 with its node (63,650);
constexpr int64_t kSessionFixedBytes = 63'650;
// - per node with its output, and per dim of that output (a Relu chain on
//   [16]: 2,600; on [1, 18, 4, 4]: 2,867);
constexpr int64_t kSessionBytesPerNode = 2'510;
constexpr int64_t kSessionBytesPerOutputDim = 90;
// - per attribute the node carries once ORT gives it its schema's defaults
//   (LeakyRelu's alpha: +675; a Conv's 5 attributes: +3,408, 682 each);
constexpr int64_t kSessionBytesPerAttribute = 680;
// - per initializer held, beyond its data (an Add's 18-float addend: 1,479;
//   a Conv's 18-float bias: 1,514);
constexpr int64_t kSessionBytesPerInitializer = 1'500;
// - per node a rewrite took out, with its output (an Identity before each
//   Relu: 1,137), and per attribute it had (BatchNormalization's epsilon and
//   momentum, fused into its Conv: 645 for the two): ORT does not give all
//   of it back;
constexpr int64_t kSessionBytesPerRemovedNode = 1'130;
constexpr int64_t kSessionBytesPerRemovedAttribute = 320;
// - per initializer a rewrite took out (the four of a BatchNormalization
//   fused into its Conv and the Conv's old filter: 740 each);
constexpr int64_t kSessionBytesPerRemovedInitializer = 740;
// - per value_info entry of the file (FastestDet without them: 654 less each);
constexpr int64_t kSessionBytesPerValueInfo = 650;
// - per character of a name too long for the string's own storage (over 15,
//   libstdc++): a Relu chain with 68-character node names holds 250 more per
//   node, with 62-character value names 553 more per value (both: 823).
constexpr int64_t kShortStringChars = 15;
constexpr double kSessionBytesPerNodeNameChar = 250.0 / 68;
constexpr double kSessionBytesPerValueNameChar = 553.0 / 62;

int64_t RoundUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// A weight's dims and bytes, when known.
struct KnownWeight {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  int64_t bytes = 0;
};

std::optional<KnownWeight> Known(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                 ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, rewrite, shape_of, id);
  if (!shape.has_value()) return std::nullopt;
  const int bits = ElementBits(shape->data_type);
  if (bits <= 0) return std::nullopt;
  KnownWeight weight{.data_type = shape->data_type};
  int64_t elements = 1;
  for (const std::optional<int64_t>& dim : shape->dims) {
    if (!dim.has_value() || *dim < 0) return std::nullopt;
    weight.dims.push_back(*dim);
    elements *= *dim;
  }
  weight.bytes = (elements * bits + 7) / 8;
  return weight;
}

bool IsWeight(const IrValue& value) {
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

// MlasGemmPackBSize (sgemm.cpp): N padded to 16, K rows, floats, the total
// padded to the buffer alignment.
int64_t GemmPackedBytes(int64_t n, int64_t k) {
  return RoundUp(RoundUp(n, kGemmStrideNAlign) * k * 4, kPackedBufferAlignment);
}

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


// Ops ORT's common subexpression elimination never merges (optimizer
// utils IsOperationDeterministic, common_subexpression_elimination.cc
// IsNodeSupported).
bool MergeableOp(const onnx::NodeProto& node) {
  static const std::set<std::string> kNever = {"RandomNormal",     "RandomUniform",     "RandomNormalLike",
                                               "RandomUniformLike", "Multinomial",       "DequantizeLinear"};
  if (!IsDefaultDomain(node)) return false;
  return BodiesOf(node).empty() && kNever.count(node.op_type()) == 0;
}

// Which weights hold one value after ORT's common subexpression elimination
// (common_subexpression_elimination.cc), which runs before constant folding:
// small constants of equal value are one, and nodes of one op, equal
// attributes and the same inputs are one node, so two ConstantOfShape of
// equal shapes and value fold into one weight that every reader shares.
class WeightClasses {
 public:
  explicit WeightClasses(const IrGraph& graph) : graph_(graph), class_of_(graph.values.size(), -1) {}

  // The first weight of `id`'s class (`id` itself when it has no twin).
  ValueId Of(ValueId id) {
    if (class_of_[id] >= 0) return class_of_[id];
    class_of_[id] = id;  // Guards against a cycle while the key is made.
    const std::optional<std::string> key = Key(id);
    if (key.has_value()) {
      class_of_[id] = representative_.try_emplace(*key, id).first->second;
    }
    return class_of_[id];
  }

 private:
  std::optional<std::string> Key(ValueId id) {
    const IrValue& value = graph_.values[id];
    if (value.origin == ValueOrigin::kInitializer) {
      std::optional<std::string> key = SmallConstantKey(*value.initializer);
      if (key.has_value()) return absl::StrCat("t:", *key);
      return std::nullopt;
    }
    if (value.origin == ValueOrigin::kConstant) {  // ORT makes a Constant node an initializer at load.
      const onnx::TensorProto* tensor = TensorAttribute(*value.constant, "value");
      std::optional<std::string> key = tensor != nullptr ? SmallConstantKey(*tensor) : std::nullopt;
      if (key.has_value()) return absl::StrCat("t:", *key);
      return std::nullopt;
    }
    if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr || value.is_graph_output) {
      return std::nullopt;
    }
    const onnx::NodeProto& node = *value.folded_from;
    if (!MergeableOp(node)) return std::nullopt;
    std::string key = absl::StrCat("n:", node.op_type(), ":");
    int output_index = -1;
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i) == value.name) output_index = i;
    }
    absl::StrAppend(&key, output_index, ":");
    for (const std::string& input : node.input()) {
      if (input.empty()) {
        key += "-,";
        continue;
      }
      const auto found = graph_.value_by_name.find(input);
      if (found == graph_.value_by_name.end()) return std::nullopt;
      absl::StrAppend(&key, Of(found->second), ",");
    }
    std::vector<std::pair<std::string, std::string>> attributes;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      attributes.emplace_back(attribute.name(), attribute.SerializeAsString());
    }
    std::sort(attributes.begin(), attributes.end());
    for (const auto& [name, bytes] : attributes) absl::StrAppend(&key, ";", name, "=", bytes.size(), ":", bytes);
    return key;
  }

  const IrGraph& graph_;
  std::vector<ValueId> class_of_;                           // Per value, -1 until asked.
  absl::flat_hash_map<std::string, ValueId> representative_;  // By value key: the first weight with it.
};

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
                  kSessionBytesPerRemovedInitializer * removed_initializers;
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


// The copies ORT's kernels make of their weights at load, node by node:
// filters a fusion or NCHWc rewrote, MLAS's packed GEMM B, ConvTranspose's
// transposed filter. Each is held once per weight class and packing.
class KernelCopies {
 public:
  KernelCopies(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
               WeightClasses& classes, LoadedWeights& result)
      : isa_(isa), graph_(graph), rewrite_(rewrite), shape_of_(shape_of), classes_(classes), result_(result) {}

  // Adds what `node`'s kernel holds of its weights; marks in `handled` (one
  // per input) the inputs it packs or rewrites, which it does not read as
  // they are.
  void Add(const IrNode& node, std::vector<bool>& handled) {
    const onnx::NodeProto& proto = *node.proto;
    const std::string& op = proto.op_type();
    const bool nchwc = proto.domain() == kNchwcDomain;
    const bool default_domain = IsDefaultDomain(proto);
    if (node.inputs.size() < 2) return;
    if (op == "Conv" && (default_domain || nchwc)) {
      AddConv(node, nchwc, handled);
    } else if ((op == "MatMul" || op == "Gemm") && default_domain) {
      AddGemm(node, handled);
    } else if (op == "ConvTranspose" && default_domain) {
      AddConvTranspose(node, handled);
    } else if (op == "QLinearConv" && (default_domain || proto.domain() == "com.microsoft")) {
      AddQLinearConv(node, handled);
    }
  }

  int64_t new_initializers() const { return new_initializers_; }
  int64_t packed_copies() const { return static_cast<int64_t>(packed_.size()); }

 private:
  std::optional<KnownWeight> ConstantFloat(ValueId id) const {
    if (id < 0 || !IsWeight(graph_.values[id]) || !IsConstantWeight(graph_, rewrite_, id)) return std::nullopt;
    std::optional<KnownWeight> weight = Known(graph_, rewrite_, shape_of_, id);
    if (!weight.has_value() || weight->data_type != kFloat) return std::nullopt;
    return weight;
  }

  void AddConv(const IrNode& node, bool nchwc, std::vector<bool>& handled) {
    const onnx::NodeProto& proto = *node.proto;
    const std::optional<KnownWeight> filter = ConstantFloat(node.inputs[1]);
    if (!filter.has_value() || filter->dims.size() < 3 || filter->dims[0] <= 0) return;
    // Inputs past the Conv's own (proto inputs) are what a fusion took in.
    bool absorbed_weight = false;
    for (size_t slot = static_cast<size_t>(proto.input_size()); slot < node.inputs.size(); ++slot) {
      absorbed_weight = absorbed_weight || IsConstantWeight(graph_, rewrite_, node.inputs[slot]);
    }
    int64_t block = 1;
    if (nchwc && !node.outputs.empty() && HeldAs(rewrite_, node.outputs[0]).channel_block > 1) {
      block = HeldAs(rewrite_, node.outputs[0]).channel_block;
    }
    if (!absorbed_weight && block == 1) return;
    const int64_t output_channels = filter->dims[0];
    const int64_t padded = RoundUp(output_channels, block);
    // A fusion makes a filter of its own; NCHWc reorders a filter once
    // however many Convs read it (nchwc_transformer.cc keeps the reordered
    // copy by filter), measured: two Convs on one folded filter hold one
    // reordered copy.
    if (absorbed_weight || reordered_.insert({classes_.Of(node.inputs[1]), block}).second) {
      result_.held_bytes += filter->bytes / output_channels * padded;
      ++new_initializers_;
    }
    const bool has_bias = (proto.input_size() >= 3 && !proto.input(2).empty()) || absorbed_weight;
    if (has_bias) {
      result_.held_bytes += padded * 4;
      ++new_initializers_;
    }
    for (size_t slot = 1; slot < node.inputs.size(); ++slot) {
      if (IsConstantWeight(graph_, rewrite_, node.inputs[slot])) handled[slot] = true;
    }
  }

  void AddGemm(const IrNode& node, std::vector<bool>& handled) {
    const std::optional<KnownWeight> b = ConstantFloat(node.inputs[1]);
    if (!b.has_value() || b->dims.size() != 2) return;
    const bool trans_b = node.proto->op_type() == "Gemm" && IntAttribute(*node.proto, "transB", 0) != 0;
    const int64_t n = trans_b ? b->dims[0] : b->dims[1];
    const int64_t k = trans_b ? b->dims[1] : b->dims[0];
    if (packed_.insert({classes_.Of(node.inputs[1]), "gemm", n, k}).second) {
      result_.held_bytes += GemmPackedBytes(n, k);
    }
    handled[1] = true;
  }

  void AddConvTranspose(const IrNode& node, std::vector<bool>& handled) {
    const std::optional<KnownWeight> filter = ConstantFloat(node.inputs[1]);
    const int64_t group = IntAttribute(*node.proto, "group", 1);
    if (!filter.has_value() || filter->dims.size() <= 2 || group <= 0) return;
    const int64_t k = filter->dims[0] / group;
    int64_t n = 1;
    for (size_t i = 1; i < filter->dims.size(); ++i) n *= filter->dims[i];
    if (k == 1 || n == 1 || n * k == 0) return;
    if (packed_.insert({classes_.Of(node.inputs[1]), "transpose", n, k}).second) {
      result_.arena_chunks.push_back({.bytes = filter->bytes});
    }
    handled[1] = true;
  }

  // QLinearConv packs a constant filter (W, ORT's input 3) of rank 3 or more at
  // load, once per filter and kernel (PrePack, quantized_workspaces.h);
  // the original is then not read as it is.
  void AddQLinearConv(const IrNode& node, std::vector<bool>& handled) {
    // The proto names ORT's inputs (x, x_scale, x_zero_point, w, ...); the
    // node's value ids follow the graph the QDQ passes rewired.
    if (node.proto->input_size() < 4) return;
    const std::optional<ValueId> found = ValueNamed(graph_, node.proto->input(3));
    if (!found.has_value()) return;
    const ValueId w = *found;
    if (!IsWeight(graph_.values[w]) || !IsConstantWeight(graph_, rewrite_, w)) return;
    const TensorLookup tensor_of = [&](ValueId id) -> std::optional<KnownTensor> {
      const std::optional<ValueShape> shape = ShapeOfValue(graph_, rewrite_, shape_of_, id);
      if (!shape.has_value() || shape->data_type == 0) return std::nullopt;
      KnownTensor tensor{.dtype = DataTypeName(shape->data_type)};
      for (const std::optional<int64_t>& dim : shape->dims) {
        if (!dim.has_value() || *dim < 0) return std::nullopt;
        tensor.dims.push_back(*dim);
      }
      return tensor;
    };
    const std::optional<QLinearConvKernel> kernel = QLinearConvKernelOf(isa_, graph_, rewrite_, node, tensor_of);
    if (!kernel.has_value()) return;
    const QLinearConvPack pack = QLinearConvPackOf(isa_, *kernel);
    const std::string packing = kernel->symmetric_conv ? "qconv-sym" : kernel->depthwise ? "qconv-dw" : "qconv-gemm";
    if (packed_.insert({classes_.Of(w), packing, kernel->output_channels, kernel->group}).second) {
      // A reserved buffer is a plain allocation of its own, with the arena
      // or without; the transient one is gone once the session is created.
      if (pack.kept_reserved) {
        result_.held_bytes += pack.kept_bytes;
      } else {
        result_.arena_chunks.push_back({.bytes = pack.kept_bytes});
      }
    }
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] == w) handled[slot] = true;
    }
  }

  CpuIsa isa_;
  const IrGraph& graph_;
  const GraphRewrite& rewrite_;
  const ShapeLookup& shape_of_;
  WeightClasses& classes_;
  LoadedWeights& result_;
  int64_t new_initializers_ = 0;                                            // Filters and biases the rewrites made.
  std::set<std::tuple<ValueId, std::string, int64_t, int64_t>> packed_;    // One copy per B and packing.
  std::set<std::pair<ValueId, int64_t>> reordered_;                        // One NCHWc filter per filter and block.
};

}  // namespace

int64_t WeightBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<KnownWeight> weight = Known(graph, rewrite, shape_of, id);
  return weight.has_value() ? weight->bytes : 0;
}

LoadedWeights WeightsAfterLoad(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite,
                               const ShapeLookup& shape_of) {
  LoadedWeights result;
  WeightClasses classes(graph);
  KernelCopies copies(isa, graph, rewrite, shape_of, classes, result);
  // Per weight: read as it is (kept), or only by kernels that pack or
  // rewrite it (freed, their copies held instead).
  std::vector<bool> read_as_is(graph.values.size(), false);
  auto mark_read = [&](ValueId input) { read_as_is[IsWeight(graph.values[input]) ? classes.Of(input) : input] = true; };
  for (const IrNode& node : graph.nodes) {
    std::vector<bool> handled(node.inputs.size(), false);
    copies.Add(node, handled);
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (!handled[slot]) mark_read(node.inputs[slot]);
    }
    for (ValueId input : node.implicit_inputs) mark_read(input);
  }
  result.packed_copies = copies.packed_copies();
  // Each weight class is held once, by its first weight; a weight that is a
  // graph output is its own (ORT never merges a graph output away).
  std::vector<ValueId> held_weights;
  int64_t removed_initializers = 0;  // The file's, gone after the rewrites.
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    if (!IsWeight(value)) continue;
    if (!(read_as_is[id] || value.is_graph_output)) {
      if (value.origin != ValueOrigin::kFolded) ++removed_initializers;
      continue;
    }
    held_weights.push_back(static_cast<ValueId>(id));
    const std::optional<KnownWeight> weight = Known(graph, rewrite, shape_of, static_cast<ValueId>(id));
    if (weight.has_value()) result.held_bytes += weight->bytes;
  }
  result.session_bytes = SessionBytes(graph, rewrite, shape_of, held_weights, copies.new_initializers(), removed_initializers);
  return result;
}

int64_t LoadedWeightsBytes(const LoadedWeights& weights, bool arena) {
  int64_t chunks = 0;
  if (arena) {
    BfcArena session_arena;
    TakeCreateChunks(weights.arena_chunks, session_arena);
    chunks = session_arena.region_bytes() > 0 ? ArenaRegionHeapBytes(session_arena.region_bytes()) : 0;
  } else {
    for (const CreateChunk& chunk : weights.arena_chunks) {
      if (!chunk.given_back) chunks += chunk.bytes;
    }
  }
  return weights.held_bytes + chunks + weights.session_bytes;
}

}  // namespace footprint::ort
