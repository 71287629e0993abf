// The rules of each runtime profile (runtime_profile.h). onnxruntime-cpu is
// ONNX Runtime's CPU execution provider at graph optimization level "all",
// one thread; the paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/memory/runtime_profile.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/memory/folding.h"
#include "onnx/onnx_pb.h"

namespace footprint {
namespace {

constexpr char kOnnxRuntimeCpu[] = "onnxruntime-cpu";

bool IsDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

// A weight ORT treats as constant (see FusionSummary::overridable).
bool IsConstantWeight(const IrGraph& graph, const FusionSummary& summary, ValueId id) {
  const IrValue& value = graph.values[id];
  if (!summary.overridable.empty() && summary.overridable[id]) return false;
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

// What a fused chain has taken in so far, in the order ORT's passes apply.
enum class Absorbed { kNothing, kBatchNorm, kAdd, kActivation };

// The activations ORT fuses into Conv on the CPU provider
// (core/optimizer/conv_activation_fusion.cc: Relu, Sigmoid, Tanh, LeakyRelu,
// Clip, HardSigmoid; the fused kernel is core/providers/cpu/fp16/.. and
// core/providers/cpu/nn/conv.cc's MLAS activation).
bool IsFusableActivation(const std::string& op) {
  return op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "LeakyRelu" || op == "Clip" ||
         op == "HardSigmoid";
}

// Whether `next` may join a chain whose head is `head` and that has taken
// in `absorbed`; sets what it has taken in after.
//  - Conv + BatchNormalization: core/optimizer/conv_bn_fusion.cc, when the
//    Conv's weight and the BatchNormalization's four parameters are weights;
//  - Conv (+ BatchNormalization) + Add: core/optimizer/conv_add_act_fusion.cc
//    (the Add's other input becomes FusedConv's Z, the sum input);
//  - Conv (+ ...) + activation: core/optimizer/conv_activation_fusion.cc;
//  - MatMul + Add of a weight: core/optimizer/matmul_add_fusion.cc (Gemm).
bool JoinsChain(const IrGraph& graph, const FusionSummary& summary, const IrNode& head, const IrNode& next,
                ValueId link, Absorbed& absorbed) {
  const std::string& head_op = head.proto->op_type();
  const std::string& op = next.proto->op_type();
  if (!IsDefaultDomain(*next.proto) || !next.bodies.empty()) return false;
  auto others_are_weights = [&]() {
    for (ValueId input : next.inputs) {
      if (input != link && !IsConstantWeight(graph, summary, input)) return false;
    }
    return true;
  };
  if (head_op == "Conv") {
    if (op == "BatchNormalization" && absorbed == Absorbed::kNothing && next.inputs.size() == 5 &&
        next.inputs[0] == link && next.outputs.size() == 1 && head.inputs.size() >= 2 &&
        IsConstantWeight(graph, summary, head.inputs[1]) && others_are_weights()) {
      absorbed = Absorbed::kBatchNorm;
      return true;
    }
    // Sum of two is Add to core/optimizer/nchwc_transformer.cc (TransformBinary), which
    // fuses either into the NCHWc Conv's Sum input, written in place.
    if ((op == "Add" || op == "Sum") && (absorbed == Absorbed::kNothing || absorbed == Absorbed::kBatchNorm) &&
        next.inputs.size() == 2 && next.inputs[0] != next.inputs[1]) {
      absorbed = Absorbed::kAdd;
      return true;
    }
    if (IsFusableActivation(op) && absorbed != Absorbed::kActivation && next.inputs[0] == link &&
        others_are_weights()) {
      absorbed = Absorbed::kActivation;
      return true;
    }
    return false;
  }
  if (head_op == "MatMul") {
    if (op == "Add" && absorbed == Absorbed::kNothing && next.inputs.size() == 2 && others_are_weights()) {
      absorbed = Absorbed::kAdd;
      return true;
    }
    return false;
  }
  return false;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t product = 1;
  for (size_t i = from; i < dims.size(); ++i) product *= dims[i];
  return product;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// Conv's scratch on ORT's CPU provider (float32): core/providers/cpu/nn/conv.cc
// allocates MlasConvPrepare's WorkingBufferSize floats for the run, and
// core/mlas/lib/convolve.cpp (MlasConvPrepare) sizes it, with one thread:
//  - strides 1 and no padding, and a pointwise kernel (K == input channels
//    per group): none (GEMM straight on the input);
//  - filters per group > output spatial size: the whole im2col matrix,
//    OutputSize * K floats;
//  - otherwise segments of MLAS_CONV_WORKING_BUFFER_SIZE_PER_THREAD
//    (MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK = 128 * 128) floats, or, with
//    more than one batch or group, max(OutputSize * K, filters * OutputSize,
//    that) floats.
int64_t ConvWorkspaceBytes(const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                           const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dtype != "float32") return 0;
  const size_t rank = input->dims.size();
  if (rank < 3 || filter->dims.size() != rank || output->dims.size() != rank) return 0;
  const size_t spatial = rank - 2;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
  const int64_t batch = input->dims[0];
  const int64_t input_channels = input->dims[1] / group;
  const int64_t filters = filter->dims[0] / group;
  const int64_t kernel = Product(filter->dims, 2);
  const int64_t k = input_channels * kernel;
  const int64_t output_size = Product(output->dims, 2);
  bool strides_one = true;
  bool no_padding = true;
  if (const onnx::AttributeProto* strides = FindAttribute(*node.proto, "strides")) {
    for (int64_t stride : strides->ints()) strides_one = strides_one && stride == 1;
  }
  if (const onnx::AttributeProto* pads = FindAttribute(*node.proto, "pads")) {
    for (int64_t pad : pads->ints()) no_padding = no_padding && pad == 0;
  }
  if (const onnx::AttributeProto* auto_pad = FindAttribute(*node.proto, "auto_pad")) {
    // SAME_* pads whenever the kernel is larger than one element.
    if ((auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER") && kernel > 1) no_padding = false;
  }
  // At level "all" on x86-64, core/optimizer/nchwc_transformer.cc
  // (TransformConv) turns a 2-D float Conv with a constant filter into the
  // NCHWc NchwcConv, a direct kernel with no working buffer: ungrouped
  // (fewer input channels than MLAS's block use the "NCHW input" variant;
  // output channels are padded up to the block), depthwise, or grouped on
  // whole blocks (MlasNchwcGetBlockSize: 8 with AVX2, this profile's machine).
  // Measured (bench/ground_truth): pytorch-converted test_Conv2d (4 filters)
  // and test_Conv2d_depthwise run as NchwcConv in ORT's optimized-model dump
  // with no scratch, while the 1-D test_Conv1d_* keep ORT's Conv; mnist's
  // 5x5 Convs (8 filters) took no scratch either (run peak 37,160 bytes
  // against 31,360 planned, where im2col alone would take 65,536).
  constexpr int64_t kNchwcBlock = 8;
  const int64_t output_channels = filter->dims[0];
  const int64_t all_input_channels = input->dims[1];
  if (spatial == 2 && IsConstantWeight(graph, fusions, node.inputs[1]) &&
      (group == 1 || (group == all_input_channels && group == output_channels) ||
       (input_channels % kNchwcBlock == 0 && filters % kNchwcBlock == 0))) {
    return 0;
  }
  constexpr int64_t kSegmentFloats = 128 * 128;
  int64_t floats = 0;
  if (strides_one && no_padding && k == input_channels) {
    floats = 0;
  } else if (filters > output_size) {
    floats = output_size * k;
  } else if (batch > 1 || group > 1) {
    floats = std::max({output_size * k, filters * output_size, kSegmentFloats});
  } else {
    floats = kSegmentFloats;
  }
  return floats * 4;
}

// LRN's scratch (float32, 4-D): core/providers/cpu/nn/lrn.cc allocates a
// scale buffer of the input's size and a padded square of (C + size - 1) *
// H * W floats from the temp-space allocator for the run.
int64_t LrnWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dtype != "float32" || input->dims.size() != 4) return 0;
  int64_t size = 0;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "size")) size = attribute->i();
  if (size <= 0) return 0;
  const std::vector<int64_t>& d = input->dims;
  return 4 * (d[0] * d[1] * d[2] * d[3] + (d[1] + size - 1) * d[2] * d[3]);
}

}  // namespace

std::vector<std::string> KnownRuntimes() { return {kOnnxRuntimeCpu}; }

bool IsKnownRuntime(const std::string& name) {
  const std::vector<std::string> names = KnownRuntimes();
  return std::find(names.begin(), names.end(), name) != names.end();
}

FusionSummary ApplyRuntimeFusions(const std::string& runtime, int64_t ir_version, IrGraph& graph) {
  FusionSummary summary;
  if (runtime != kOnnxRuntimeCpu) return summary;
  if (ir_version >= 4) {
    summary.overridable.assign(graph.values.size(), false);
    for (const onnx::ValueInfoProto& input : graph.proto->input()) {
      auto it = graph.value_by_name.find(input.name());
      if (it != graph.value_by_name.end() && graph.values[it->second].origin == ValueOrigin::kInitializer) {
        summary.overridable[it->second] = true;
      }
    }
  }
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t head_id = 0; head_id < graph.nodes.size(); ++head_id) {
    if (removed[head_id]) continue;
    IrNode& head = graph.nodes[head_id];
    const std::string& head_op = head.proto->op_type();
    if (!IsDefaultDomain(*head.proto) || (head_op != "Conv" && head_op != "MatMul")) continue;
    Absorbed absorbed = Absorbed::kNothing;
    while (head.outputs.size() == 1) {
      const ValueId link = head.outputs[0];
      IrValue& link_value = graph.values[link];
      if (link_value.is_graph_output || link_value.consumers.size() != 1) break;
      const NodeId next_id = link_value.consumers[0];
      if (removed[next_id] || next_id == static_cast<NodeId>(head_id)) break;
      IrNode& next = graph.nodes[next_id];
      Absorbed after = absorbed;
      if (!JoinsChain(graph, summary, head, next, link, after)) break;
      if (after == Absorbed::kAdd && head_op == "Conv") {
        const ValueId residual = next.inputs[0] == link ? next.inputs[1] : next.inputs[0];
        if (summary.writes_over.empty()) summary.writes_over.assign(graph.values.size(), -1);
        summary.writes_over[next.outputs[0]] = residual;
      }
      if (absorbed == Absorbed::kAdd && after == Absorbed::kActivation && !summary.writes_over.empty() &&
          head.outputs.size() == 1 && summary.writes_over[head.outputs[0]] >= 0) {
        summary.writes_over[next.outputs[0]] = summary.writes_over[head.outputs[0]];  // Still the residual.
        summary.writes_over[head.outputs[0]] = -1;
      }
      absorbed = after;
      // The head reads the next node's other inputs and writes its outputs.
      for (ValueId input : next.inputs) {
        if (input == link) continue;
        head.inputs.push_back(input);
        graph.values[input].consumers.push_back(static_cast<NodeId>(head_id));
      }
      for (ValueId input : next.implicit_inputs) head.implicit_inputs.push_back(input);
      head.outputs = next.outputs;
      for (ValueId output : next.outputs) graph.values[output].producer = static_cast<NodeId>(head_id);
      link_value.origin = ValueOrigin::kFusedAway;
      link_value.producer = -1;
      link_value.consumers.clear();
      summary.fused_tensors.push_back(link_value.name);
      removed[next_id] = true;
      ++summary.fused_nodes;
    }
  }
  if (summary.fused_nodes > 0) RemoveNodes(removed, graph);
  return summary;
}

int64_t KernelWorkspaceBytes(const std::string& runtime, const IrGraph& graph, const FusionSummary& fusions,
                             const IrNode& node, const TensorLookup& tensor_of) {
  if (runtime != kOnnxRuntimeCpu || !IsDefaultDomain(*node.proto)) return 0;
  if (node.proto->op_type() == "Conv") return ConvWorkspaceBytes(graph, fusions, node, tensor_of);
  if (node.proto->op_type() == "LRN") return LrnWorkspaceBytes(node, tensor_of);
  return 0;
}

// Measured, not derived from ORT's source (bench/ground_truth/README.md,
// "Per-run overhead"). Two figures, as the run peak shows two shapes:
//  - at the run's edges, with only the graph's inputs and outputs live: a
//    1-float Identity, Relu or Add, or 4 chained Relus, peak 13,440-13,560
//    bytes above their tensors whatever the node count; every one of the 273
//    models below 64 KiB run peak is at least 13,320 above our arena. 13 KiB,
//    below that minimum;
//  - while kernels run: an im2col Conv (64 KiB workspace) peaks only
//    1,616-2,272 bytes above its tensors and workspace (16 models), so the
//    13 KiB is not live then. 1.5 KiB, below that minimum.
constexpr int64_t kOnnxRuntimeCpuRunEdgeBytes = 13 * 1024;
constexpr int64_t kOnnxRuntimeCpuDuringKernelsBytes = 1536;

int64_t RuntimeOverheadBytes(const std::string& runtime, int64_t arena_bytes, int64_t io_bytes) {
  if (runtime != kOnnxRuntimeCpu) return 0;
  return std::max(kOnnxRuntimeCpuDuringKernelsBytes, io_bytes + kOnnxRuntimeCpuRunEdgeBytes - arena_bytes);
}

}  // namespace footprint
