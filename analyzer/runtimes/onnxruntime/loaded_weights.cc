// ORT's weights after session creation (loaded_weights.h).
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"
#include "analyzer/runtimes/onnxruntime/session_bytes.h"
#include "analyzer/runtimes/onnxruntime/weight_classes.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;                       // TensorProto.FLOAT.
constexpr char kNchwcDomain[] = "com.microsoft.nchwc";
constexpr int64_t kGemmStrideNAlign = 16;           // MLAS_SGEMM_STRIDEN_THREAD_ALIGN.
constexpr int64_t kPackedBufferAlignment = 64;      // MlasGetPreferredBufferAlignment().
int64_t RoundUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The element type names the quantized kernels' rules read
// (quantized_workspaces.h), "" for the others.
std::string QuantizedKernelDtype(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
      return "float32";
    case onnx::TensorProto::UINT8:
      return "uint8";
    case onnx::TensorProto::INT8:
      return "int8";
    case onnx::TensorProto::INT32:
      return "int32";
    default:
      return "";
  }
}

// MlasGemmPackBSize (sgemm.cpp): N padded to 16, K rows, floats, the total
// padded to the buffer alignment.
int64_t GemmPackedBytes(int64_t n, int64_t k) {
  return RoundUp(RoundUp(n, kGemmStrideNAlign) * k * 4, kPackedBufferAlignment);
}


// The buffers of weights while the session is created
// (LoadedWeights::load_buffers), and which one holds each weight class now:
// a stage that replaces a weight replaces the buffer holding it then (the
// file's, or the float32 copy level 4 made of a float16 one).
class LoadBuffers {
 public:
  LoadBuffers(WeightClasses& classes, size_t values, std::vector<LoadBuffer>& buffers)
      : classes_(classes), holder_(values, -1), buffers_(buffers) {}

  // Adds a buffer made at `stage` that stands in for the buffers
  // `replaces`; returns its index.
  int Make(LoadStage stage, int64_t bytes, int64_t transient_bytes, const std::vector<int>& replaces,
           bool arena = false) {
    LoadBuffer buffer{.made_at = stage, .bytes = bytes, .transient_bytes = transient_bytes, .arena = arena};
    for (int replaced : replaces) {
      if (replaced >= 0 && std::find(buffer.replaces.begin(), buffer.replaces.end(), replaced) == buffer.replaces.end()) {
        buffer.replaces.push_back(replaced);
      }
    }
    buffers_.push_back(std::move(buffer));
    return static_cast<int>(buffers_.size()) - 1;
  }

  // The buffers holding `weights` now.
  std::vector<int> HoldersOf(const std::vector<ValueId>& weights) {
    std::vector<int> holders;
    for (ValueId weight : weights) holders.push_back(Holder(weight));
    return holders;
  }

  // The buffer holding `weight`'s class now (-1: none).
  int Holder(ValueId weight) { return weight < 0 ? -1 : holder_[classes_.Of(weight)]; }
  // `weight`'s class is held by `buffer` from now on.
  void Hold(ValueId weight, int buffer) { holder_[classes_.Of(weight)] = buffer; }

  // `weight` is float16 in the file and ORT holds it in float32: level 4
  // converts whatever holds it then, once something reads it in float32.
  void ConvertedAtLevel4(ValueId weight, int64_t float32_bytes) {
    float32_bytes_[classes_.Of(weight)] = float32_bytes;
  }
  bool Float16Pending(ValueId weight) { return weight >= 0 && float32_bytes_.contains(classes_.Of(weight)); }
  // The buffer holding `weight` in float32 (its level-4 copy made now if it
  // is still float16).
  int HolderInFloat(ValueId weight) {
    if (!Float16Pending(weight)) return Holder(weight);
    const ValueId key = classes_.Of(weight);
    const int float16 = holder_[key];
    const int64_t float16_bytes = float16 >= 0 ? float32_bytes_[key] / 2 : 0;
    holder_[key] = Make(LoadStage::kFloat16, float32_bytes_[key], float16_bytes, {float16});
    float32_bytes_.erase(key);
    return holder_[key];
  }
  std::vector<int> HoldersInFloatOf(const std::vector<ValueId>& weights) {
    std::vector<int> holders;
    for (ValueId weight : weights) holders.push_back(HolderInFloat(weight));
    return holders;
  }

 private:
  WeightClasses& classes_;
  std::vector<int> holder_;  // By class representative.
  absl::flat_hash_map<ValueId, int64_t> float32_bytes_;  // Float16 classes not converted yet.
  std::vector<LoadBuffer>& buffers_;
};

// Whether ORT folds value `id` as the analysis did: not a DequantizeLinear
// (ConstantFolding runs with skip_dequantize_linear while the QDQ rules are
// on, constant_folding.cc), nor anything computed from one. `memo`: 0 not
// asked yet, 1 yes, 2 no.
bool FoldedByOrt(const IrGraph& graph, ValueId id, std::vector<int8_t>& memo) {
  const IrValue& value = graph.values[id];
  if (value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant) return true;
  if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr) return false;
  if (memo[id] != 0) return memo[id] == 1;
  memo[id] = 2;  // Guards against a cycle.
  bool folded = !IsDequantizeLinear(*value.folded_from);
  for (const std::string& input : value.folded_from->input()) {
    const std::optional<ValueId> found = input.empty() ? std::nullopt : ValueNamed(graph, input);
    folded = folded && (!found.has_value() || FoldedByOrt(graph, *found, memo));
  }
  memo[id] = folded ? 1 : 2;
  return folded;
}

// The buffers session creation starts from and makes before any kernel
// (load_peak.h): the file's weights that some node reads (Graph::Resolve
// drops the others first), each folded value with the copies of its node's
// inputs, and the float32 copy of each float16 weight ORT runs in float32.
void AddBuffersBeforeKernels(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                             WeightClasses& classes, LoadBuffers& buffers) {
  std::vector<int8_t> ort_folds(graph.values.size(), 0);
  std::vector<bool> read_by_fold(graph.values.size(), false);
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const IrValue& value = graph.values[i];
    if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr) continue;
    for (const std::string& input : value.folded_from->input()) {
      const std::optional<ValueId> found = input.empty() ? std::nullopt : ValueNamed(graph, input);
      if (found.has_value()) read_by_fold[*found] = true;
    }
  }
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const IrValue& value = graph.values[i];
    const ValueId id = static_cast<ValueId>(i);
    if (value.origin != ValueOrigin::kInitializer && value.origin != ValueOrigin::kConstant) continue;
    if (value.consumers.empty() && !value.is_graph_output && !read_by_fold[i]) continue;
    const int buffer = buffers.Make(LoadStage::kReading, InExternalFile(value) ? 0 : FileBytes(graph, shape_of, id), 0, {});
    if (buffers.Holder(id) < 0) buffers.Hold(id, buffer);
  }
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const IrValue& value = graph.values[i];
    const ValueId id = static_cast<ValueId>(i);
    if (value.origin != ValueOrigin::kFolded || value.folded_from == nullptr || classes.Of(id) != id) continue;
    if (!FoldedByOrt(graph, id, ort_folds)) continue;
    std::vector<ValueId> inputs;
    int64_t copies = 0;
    for (const std::string& input : value.folded_from->input()) {
      const std::optional<ValueId> found = input.empty() ? std::nullopt : ValueNamed(graph, input);
      if (!found.has_value() || !IsWeight(graph.values[*found])) continue;
      inputs.push_back(*found);
      copies += FileBytes(graph, shape_of, *found);
    }
    buffers.Hold(id, buffers.Make(LoadStage::kFolding, FileBytes(graph, shape_of, id), copies, buffers.HoldersOf(inputs)));
  }
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const ValueId id = static_cast<ValueId>(i);
    if (!IsWeight(graph.values[i]) || classes.Of(id) != id || HeldAs(rewrite, id).data_type != kFloat) continue;
    const std::optional<KnownWeight> held = Known(graph, rewrite, shape_of, id);
    if (held.has_value() && FileBytes(graph, shape_of, id) != held->bytes) buffers.ConvertedAtLevel4(id, held->bytes);
  }
}

// Which buffers are still held once the session is created: the one holding
// each weight class read as it is, and each kernel's copy nothing replaced.
void MarkKeptBuffers(const IrGraph& graph, WeightClasses& classes, const std::vector<bool>& read_as_is,
                     LoadBuffers& buffers, std::vector<LoadBuffer>& load_buffers) {
  std::vector<int> kept_holders;
  for (size_t i = 0; i < graph.values.size(); ++i) {
    const ValueId id = static_cast<ValueId>(i);
    if (!IsWeight(graph.values[i]) || !(read_as_is[classes.Of(id)] || graph.values[i].is_graph_output)) continue;
    kept_holders.push_back(buffers.HolderInFloat(id));
  }
  std::vector<bool> replaced(load_buffers.size(), false);
  for (const LoadBuffer& buffer : load_buffers) {
    for (int index : buffer.replaces) replaced[index] = true;
  }
  for (size_t i = 0; i < load_buffers.size(); ++i) {
    const LoadStage stage = load_buffers[i].made_at;
    load_buffers[i].kept = !replaced[i] && (stage == LoadStage::kFusion || stage == LoadStage::kNchwc ||
                                            stage == LoadStage::kPrePack);
  }
  for (int holder : kept_holders) {
    if (holder >= 0) load_buffers[holder].kept = true;
  }
}

// The copies ORT's kernels make of their weights at load, node by node:
// filters a fusion or NCHWc rewrote, MLAS's packed GEMM B, ConvTranspose's
// transposed filter. Each is held once per weight class and packing.
class KernelCopies {
 public:
  KernelCopies(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
               WeightClasses& classes, LoadBuffers& buffers, LoadedWeights& result)
      : isa_(isa), graph_(graph), rewrite_(rewrite), shape_of_(shape_of), classes_(classes), buffers_(buffers),
        result_(result) {}

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
    } else if (op == "Attention" && proto.domain() == "com.microsoft") {
      AddAttention(node, handled);
    } else if (op == "QLinearConv" && (default_domain || proto.domain() == "com.microsoft")) {
      AddQLinearConv(node, handled);
    } else if (QuantizedGemmB(proto) >= 0) {
      AddQuantizedGemm(node, handled);
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
    const int64_t padded_filter = filter->bytes / output_channels * padded;
    const bool has_bias = (proto.input_size() >= 3 && !proto.input(2).empty()) || absorbed_weight;
    const int64_t bias_bytes = has_bias ? padded * 4 : 0;
    std::vector<ValueId> replaced;  // The weights the new filter and bias stand in for.
    for (size_t slot = 1; slot < node.inputs.size(); ++slot) {
      if (!IsConstantWeight(graph_, rewrite_, node.inputs[slot])) continue;
      handled[slot] = true;
      replaced.push_back(node.inputs[slot]);
    }
    // A fusion makes a filter of its own; NCHWc reorders a filter once
    // however many Convs read it (nchwc_transformer.cc keeps the reordered
    // copy by filter), measured: two Convs on one folded filter hold one
    // reordered copy.
    const bool new_filter = absorbed_weight || reordered_.insert({classes_.Of(node.inputs[1]), block}).second;
    if (new_filter) {
      result_.held_bytes += padded_filter;
      ++new_initializers_;
    }
    if (has_bias) {
      result_.held_bytes += bias_bytes;
      ++new_initializers_;
    }
    // At load: the fusion's filter (level 1) with its Initializer copy and
    // proto, then NCHWc's (level 3) with the old filter's copy, the
    // reordered vector and its proto (load_peak.h).
    std::vector<int> replaces;
    if (absorbed_weight) {
      // A float16 filter is fused in float16, then converted at level 4.
      const bool float16 = buffers_.Float16Pending(node.inputs[1]);
      const int64_t fused_bytes = float16 ? filter->bytes / 2 : filter->bytes;
      const int64_t bias = output_channels * (float16 ? 2 : 4);
      replaces = {buffers_.Make(LoadStage::kFusion, fused_bytes + bias, 2 * fused_bytes, buffers_.HoldersOf(replaced))};
      if (float16) replaces = {buffers_.Make(LoadStage::kFloat16, filter->bytes + 2 * bias, fused_bytes + bias, replaces)};
    } else {
      replaces = buffers_.HoldersInFloatOf(replaced);
    }
    if (block > 1) {
      buffers_.Make(LoadStage::kNchwc, (new_filter ? padded_filter : 0) + bias_bytes,
                    new_filter ? filter->bytes + 2 * padded_filter : 0, replaces);
    }
  }

  void AddGemm(const IrNode& node, std::vector<bool>& handled) {
    const std::optional<KnownWeight> b = ConstantFloat(node.inputs[1]);
    if (!b.has_value() || b->dims.size() != 2) return;
    const bool trans_b = node.proto->op_type() == "Gemm" && IntAttribute(*node.proto, "transB", 0) != 0;
    const int64_t n = trans_b ? b->dims[0] : b->dims[1];
    const int64_t k = trans_b ? b->dims[1] : b->dims[0];
    // A second pack of the same B is made, found equal and freed
    // (PrepackedWeightsForGraph): only for a moment.
    const bool first = packed_.insert({classes_.Of(node.inputs[1]), "gemm", n, k}).second;
    if (first) result_.held_bytes += GemmPackedBytes(n, k);
    buffers_.Make(LoadStage::kPrePack, first ? GemmPackedBytes(n, k) : 0, first ? 0 : GemmPackedBytes(n, k),
                  buffers_.HoldersInFloatOf({node.inputs[1]}));
    handled[1] = true;
  }

  // com.microsoft Attention packs its constant 2-D float weights at load,
  // head by head for each of Q, K and V (contrib_ops/cpu/bert/attention.cc
  // PrePack: num_heads x MlasGemmPackBSize(head_size, input hidden), reserved,
  // none when a hidden size is not a multiple of num_heads), so a head of 8
  // columns is padded to 16: the pack twice the weights. Measured on an
  // AVX-512 host, arena off: 256 x 768 weights in 32 heads of 8 hold
  // 1,646,824 after creation, in 4 heads of 64 860,176.
  void AddAttention(const IrNode& node, std::vector<bool>& handled) {
    const std::optional<KnownWeight> weights = ConstantFloat(node.inputs[1]);
    const int64_t heads = IntAttribute(*node.proto, "num_heads", 0);
    if (!weights.has_value() || weights->dims.size() != 2 || heads <= 0) return;
    std::vector<int64_t> hidden = IntsAttribute(*node.proto, "qkv_hidden_sizes");
    if (hidden.empty()) hidden.assign(3, weights->dims[1] / 3);
    if (hidden.size() != 3) return;
    const int64_t k = weights->dims[0];
    int64_t pack = 0;
    for (int64_t size : hidden) {
      if (size <= 0 || size % heads != 0) return;
      pack += heads * GemmPackedBytes(size / heads, k);
    }
    const bool first = packed_.insert({classes_.Of(node.inputs[1]), "attention", heads, k}).second;
    if (first) result_.held_bytes += pack;
    buffers_.Make(LoadStage::kPrePack, first ? pack : 0, 0, buffers_.HoldersInFloatOf({node.inputs[1]}));
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
    const bool first = packed_.insert({classes_.Of(node.inputs[1]), "transpose", n, k}).second;
    if (first) result_.arena_chunks.push_back({.bytes = filter->bytes});
    buffers_.Make(LoadStage::kPrePack, first ? filter->bytes : 0, 0, buffers_.HoldersInFloatOf({node.inputs[1]}),
                  /*arena=*/true);
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
      KnownTensor tensor{.dtype = QuantizedKernelDtype(shape->data_type)};
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
    const bool first = packed_.insert({classes_.Of(w), packing, kernel->output_channels, kernel->group}).second;
    if (first) {
      // A reserved buffer is a plain allocation of its own, with the arena
      // or without; the transient one is gone once the session is created.
      if (pack.kept_reserved) {
        result_.held_bytes += pack.kept_bytes;
      } else {
        result_.arena_chunks.push_back({.bytes = pack.kept_bytes});
      }
    }
    buffers_.Make(LoadStage::kPrePack, first ? pack.kept_bytes : 0, first ? pack.transient_bytes : 0,
                  buffers_.HoldersOf({w}), /*arena=*/!pack.kept_reserved);
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] == w) handled[slot] = true;
    }
  }

  // The input the MatMulInteger family packs (matmul_integer_base.h:
  // GetBIdx), -1 for any other op.
  static int QuantizedGemmB(const onnx::NodeProto& proto) {
    const std::string& op = proto.op_type();
    const bool microsoft = proto.domain() == "com.microsoft";
    if ((op == "QGemm" && microsoft) || (op == "QLinearMatMul" && (microsoft || IsDefaultDomain(proto)))) return 3;
    if (op == "MatMulInteger" && IsDefaultDomain(proto)) return 1;
    if ((op == "DynamicQuantizeMatMul" || op == "MatMulIntegerToFloat") && microsoft) return 1;
    return -1;
  }

  // An 8-bit 2-D constant B packed at load: QGemm with transB transposes it
  // first into a buffer from the session's allocator (an arena chunk under
  // the default options, given back after packing:
  // quantization.h TransPoseInputData), then reserves the pack
  // (MakeUniquePtr(alloc, size, true)). The original goes when its last
  // reader has packed it.
  void AddQuantizedGemm(const IrNode& node, std::vector<bool>& handled) {
    const int b_index = QuantizedGemmB(*node.proto);
    // The file's node names ORT's inputs; one the QDQ rules made from a
    // Gemm or MatMul keeps its (A, B, C), B rewired to the quantized weight.
    std::optional<ValueId> found;
    if (node.proto->input_size() > b_index) {
      found = node.proto->input(b_index).empty() ? std::nullopt : ValueNamed(graph_, node.proto->input(b_index));
    } else if (node.inputs.size() >= 2) {
      found = node.inputs[1];
    }
    if (!found.has_value() || !IsWeight(graph_.values[*found]) || !IsConstantWeight(graph_, rewrite_, *found)) return;
    const ValueId b = *found;
    const std::optional<KnownWeight> weight = Known(graph_, rewrite_, shape_of_, b);
    constexpr int32_t kUint8 = 2, kInt8 = 3;
    if (!weight.has_value() || weight->dims.size() != 2 ||
        (weight->data_type != kUint8 && weight->data_type != kInt8)) {
      return;
    }
    const bool trans_b = node.proto->op_type() == "QGemm" && IntAttribute(*node.proto, "transB", 0) != 0;
    const int64_t n = trans_b ? weight->dims[0] : weight->dims[1];
    const int64_t k = trans_b ? weight->dims[1] : weight->dims[0];
    const int64_t pack = QuantizedGemmPackBytes(isa_, n, k, weight->data_type == kInt8);
    const bool first = packed_.insert({classes_.Of(b), "qgemm", n, k}).second;
    if (first) result_.held_bytes += pack;
    if (trans_b) result_.arena_chunks.push_back({.bytes = weight->bytes, .given_back = true});
    const int made = buffers_.Make(LoadStage::kPrePack, first ? pack : 0, trans_b ? weight->bytes : 0,
                                   buffers_.HoldersOf({b}));
    result_.load_buffers[made].transient_in_arena = trans_b;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] == b) handled[slot] = true;
    }
  }

  CpuIsa isa_;
  const IrGraph& graph_;
  const GraphRewrite& rewrite_;
  const ShapeLookup& shape_of_;
  WeightClasses& classes_;
  LoadBuffers& buffers_;
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
  LoadBuffers buffers(classes, graph.values.size(), result.load_buffers);
  AddBuffersBeforeKernels(graph, rewrite, shape_of, classes, buffers);
  KernelCopies copies(isa, graph, rewrite, shape_of, classes, buffers, result);
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
  MarkKeptBuffers(graph, classes, read_as_is, buffers, result.load_buffers);
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
    if (!weight.has_value()) continue;
    const bool mapped = InExternalFile(value) && weight->bytes == FileBytes(graph, shape_of, static_cast<ValueId>(id));
    (mapped ? result.mapped_bytes : result.held_bytes) += weight->bytes;
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
