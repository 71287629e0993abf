// ORT's weights after session creation (loaded_weights.h).
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;                       // TensorProto.FLOAT.
constexpr char kNchwcDomain[] = "com.microsoft.nchwc";
constexpr int64_t kGemmStrideNAlign = 16;           // MLAS_SGEMM_STRIDEN_THREAD_ALIGN.
constexpr int64_t kPackedBufferAlignment = 64;      // MlasGetPreferredBufferAlignment().
// The session's own structures (measured, arena_probes.py session_relu_chain_*:
// 1, 50, 200 and 800 Relus created from a path hold 66,248, 192,488, 581,536
// and 2,142,464 bytes with no weight: 2,600 per node on 63,650).
constexpr int64_t kSessionFixedBytes = 63'650;
constexpr int64_t kSessionBytesPerNode = 2'600;

int64_t RoundUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// A weight's dims and bytes, when known.
struct KnownWeight {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  int64_t bytes = 0;
};

std::optional<KnownWeight> Known(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
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

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr ? attribute->i() : fallback;
}

// MlasGemmPackBSize (sgemm.cpp): N padded to 16, K rows, floats, the total
// padded to the buffer alignment.
int64_t GemmPackedBytes(int64_t n, int64_t k) {
  return RoundUp(RoundUp(n, kGemmStrideNAlign) * k * 4, kPackedBufferAlignment);
}

}  // namespace

int64_t WeightBytes(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<KnownWeight> weight = Known(graph, shape_of, id);
  return weight.has_value() ? weight->bytes : 0;
}

LoadedWeights WeightsAfterLoad(const IrGraph& graph, const FusionSummary& fusions, const ShapeLookup& shape_of) {
  LoadedWeights result;
  result.session_bytes = kSessionFixedBytes + kSessionBytesPerNode * static_cast<int64_t>(graph.nodes.size());
  // Per weight: read as it is (kept), or only by kernels that pack or
  // rewrite it (freed, their copies held instead).
  std::vector<bool> read_as_is(graph.values.size(), false);
  std::set<std::tuple<ValueId, std::string, int64_t, int64_t>> packed;  // One copy per B and packing.
  auto constant_float = [&](ValueId id) -> std::optional<KnownWeight> {
    if (id < 0 || !IsWeight(graph.values[id]) || !IsConstantWeight(graph, fusions, id)) return std::nullopt;
    std::optional<KnownWeight> weight = Known(graph, shape_of, id);
    if (!weight.has_value() || weight->data_type != kFloat) return std::nullopt;
    return weight;
  };
  for (const IrNode& node : graph.nodes) {
    const onnx::NodeProto& proto = *node.proto;
    const std::string& op = proto.op_type();
    const bool nchwc = proto.domain() == kNchwcDomain;
    const bool default_domain = proto.domain().empty() || proto.domain() == "ai.onnx";
    std::vector<bool> handled(node.inputs.size(), false);
    if (op == "Conv" && (default_domain || nchwc) && node.inputs.size() >= 2) {
      const std::optional<KnownWeight> filter = constant_float(node.inputs[1]);
      if (filter.has_value() && filter->dims.size() >= 3 && filter->dims[0] > 0) {
        // Inputs past the Conv's own (proto inputs) are what a fusion took in.
        bool absorbed_weight = false;
        for (size_t slot = static_cast<size_t>(proto.input_size()); slot < node.inputs.size(); ++slot) {
          absorbed_weight = absorbed_weight || IsConstantWeight(graph, fusions, node.inputs[slot]);
        }
        int64_t block = 1;
        if (nchwc && !node.outputs.empty() && graph.values[node.outputs[0]].channel_block > 1) {
          block = graph.values[node.outputs[0]].channel_block;
        }
        if (absorbed_weight || block > 1) {
          const int64_t output_channels = filter->dims[0];
          const int64_t padded = RoundUp(output_channels, block);
          result.held_bytes += filter->bytes / output_channels * padded;
          const bool has_bias = (proto.input_size() >= 3 && !proto.input(2).empty()) || absorbed_weight;
          if (has_bias) result.held_bytes += padded * 4;
          for (size_t slot = 1; slot < node.inputs.size(); ++slot) {
            if (IsConstantWeight(graph, fusions, node.inputs[slot])) {
              handled[slot] = true;
            }
          }
        }
      }
    } else if ((op == "MatMul" || op == "Gemm") && default_domain && node.inputs.size() >= 2) {
      const std::optional<KnownWeight> b = constant_float(node.inputs[1]);
      if (b.has_value() && b->dims.size() == 2) {
        const bool trans_b = op == "Gemm" && IntAttribute(proto, "transB", 0) != 0;
        const int64_t n = trans_b ? b->dims[0] : b->dims[1];
        const int64_t k = trans_b ? b->dims[1] : b->dims[0];
        if (packed.insert({node.inputs[1], "gemm", n, k}).second) result.held_bytes += GemmPackedBytes(n, k);
        handled[1] = true;
      }
    } else if (op == "ConvTranspose" && default_domain && node.inputs.size() >= 2) {
      const std::optional<KnownWeight> filter = constant_float(node.inputs[1]);
      const int64_t group = IntAttribute(proto, "group", 1);
      if (filter.has_value() && filter->dims.size() > 2 && group > 0) {
        const int64_t k = filter->dims[0] / group;
        int64_t n = 1;
        for (size_t i = 1; i < filter->dims.size(); ++i) n *= filter->dims[i];
        if (k != 1 && n != 1 && n * k != 0) {
          if (packed.insert({node.inputs[1], "transpose", n, k}).second) result.arena_chunks.push_back(filter->bytes);
          handled[1] = true;
        }
      }
    }
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (handled[slot]) continue;
      read_as_is[node.inputs[slot]] = true;
    }
    for (ValueId input : node.implicit_inputs) read_as_is[input] = true;
  }
  result.packed_copies = static_cast<int64_t>(packed.size());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    if (!IsWeight(value) || !(read_as_is[id] || value.is_graph_output)) continue;
    const std::optional<KnownWeight> weight = Known(graph, shape_of, static_cast<ValueId>(id));
    if (weight.has_value()) result.held_bytes += weight->bytes;
  }
  return result;
}

int64_t LoadedWeightsBytes(const LoadedWeights& weights, bool arena) {
  int64_t chunks = 0;
  if (arena) {
    BfcArena session_arena;
    for (int64_t bytes : weights.arena_chunks) session_arena.Alloc(bytes);
    chunks = session_arena.region_bytes() > 0 ? ArenaRegionHeapBytes(session_arena.region_bytes()) : 0;
  } else {
    for (int64_t bytes : weights.arena_chunks) chunks += bytes;
  }
  return weights.held_bytes + chunks + weights.session_bytes;
}

}  // namespace footprint::ort
