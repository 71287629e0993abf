// The scratch ORT's CPU kernels allocate for one run (kernel_workspaces.h).
// Paths are in github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/kernel_workspaces.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// Conv's scratch on ORT's CPU provider (float32): core/providers/cpu/nn/conv.cc
// allocates MlasConvPrepare's WorkingBufferSize floats for the run, and
// core/mlas/lib/convolve.cpp (MlasConvPrepare) sizes it, with one thread:
//  - strides 1 and no padding, and a pointwise kernel (K == input channels
//    per group): none (GEMM straight on the input);
//  - filters per group > output spatial size: the whole im2col matrix,
//    OutputSize * K floats;
//  - otherwise segments of MLAS_CONV_WORKING_BUFFER_SIZE_PER_THREAD
//    (MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK = 128 * 128) floats, one
//    thread's. convolve.cpp asks, with more than one batch or group, for
//    max(OutputSize * K, filters * OutputSize, that) per thread, but ORT 1.30
//    with one thread measures the one segment (AVX-512 host, probes
//    nchwc_block_group8 and conv_group4_56 / conv_batch2_56 of
//    bench/ground_truth/probe_models.py: 32 channels in 4 groups, 3x3 on
//    56x56, 64 KiB above the tensors, where the larger rule says 882 KiB;
//    a batch of 2 likewise).
// ARM64's direct depthwise kernel (MlasConvPrepare, MLAS_TARGET_ARM64): a
// 2-D Conv of one input channel and one filter per group, 3x3, pads <= 1,
// strides and dilations 1, takes MlasConvAlgorithmDepthwise with a zero row
// of the input's width + 2 floats as its working buffer. Read, not measured
// (no ARM64 machine measured yet).
bool IsArm64DirectDepthwise(const IrNode& node, const KnownTensor& filter, int64_t input_channels,
                            int64_t filters) {
  if (filter.dims.size() != 4 || input_channels != 1 || filters != 1 || filter.dims[2] != 3 ||
      filter.dims[3] != 3) {
    return false;
  }
  for (const char* name : {"strides", "dilations"}) {
    if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, name)) {
      for (int64_t value : attribute->ints()) {
        if (value != 1) return false;
      }
    }
  }
  if (const onnx::AttributeProto* pads = FindAttribute(*node.proto, "pads")) {
    for (int64_t pad : pads->ints()) {
      if (pad > 1) return false;
    }
  }
  const onnx::AttributeProto* auto_pad = FindAttribute(*node.proto, "auto_pad");
  return auto_pad == nullptr || auto_pad->s() == "NOTSET" || auto_pad->s() == "VALID" ||
         auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER";  // A 3x3 SAME pads 1 each side.
}

int64_t ConvWorkspaceBytes(CpuIsa isa, const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dtype != "float32") return 0;
  const size_t rank = input->dims.size();
  if (rank < 3 || filter->dims.size() != rank || output->dims.size() != rank) return 0;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
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
  // The Convs NCHWc takes run NchwcConv, a direct kernel with no working
  // buffer: they are in the NCHWc domain here and never reach this rule.
  // Measured (bench/ground_truth): pytorch-converted test_Conv2d (4 filters)
  // and test_Conv2d_depthwise run as NchwcConv in ORT's optimized-model dump
  // with no scratch, while the 1-D test_Conv1d_* keep ORT's Conv.
  constexpr int64_t kSegmentFloats = 128 * 128;
  int64_t floats = 0;
  if (strides_one && no_padding && k == input_channels) {
    floats = 0;
  } else if (filters > output_size) {
    floats = output_size * k;
  } else if (isa == CpuIsa::kArm64 && IsArm64DirectDepthwise(node, *filter, input_channels, filters)) {
    floats = input->dims[3] + 2;
  } else {
    floats = kSegmentFloats;
  }
  return floats * 4;
}

// ConvTranspose's scratch (float32): core/providers/cpu/nn/conv_transpose.cc
// (DoConvTranspose) allocates from the temp-space allocator a column buffer
// of (output channels / group) * kernel size * input spatial size floats,
// the GEMM's result that Col2im scatters into the output, reused for each
// group and image. Measured: the uint8 QDQ copy of vision_models.py's U-Net,
// whose float ConvTranspose (no quantized kernel) to 16 x 512 x 512 from
// 256 x 256 holds its 16.8 MB buffer next to its float input and output.
int64_t ConvTransposeWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  if (!input || !filter || input->dtype != "float32" || input->dims.size() < 3 ||
      filter->dims.size() != input->dims.size()) {
    return 0;
  }
  return 4 * filter->dims[1] * Product(filter->dims, 2) * Product(input->dims, 2);
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

// NegativeLogLikelihoodLoss's scratch (float32): measured (bench/ground_truth,
// inputs [3, C, D] for C 5 and 10, D 2160 and 4320), ORT holds 4 bytes per
// sample (N * d1 * ... * dk) for each of: the per-sample loss unless the
// reduction is "none" (then the output is it), the per-sample weight when
// a weight is given, and one more; the class count does not matter. With an
// ignore_index attribute ORT runs the op as its ONNX function body instead
// (its optimized model holds Unsqueeze, Cast, Equal, Where, GatherElements,
// Neg, Slice, Squeeze and Mul in its place), whose per-sample tensors
// (int64 targets, a mask, gathered losses) peak higher: measured at 6,480
// and 12,960 samples and 5 or 10 classes (probe_models.py nll_*_ii),
// 24.9-25.1 bytes per sample for "none" and "sum", 29.1-29.3 for "mean",
// 21.0 for "mean" with a weight; rounded up to 26, 30 and 22, held at the
// node's step.
int64_t NllLossWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dtype != "float32" || input->dims.size() < 2) return 0;
  const int64_t samples = input->dims[0] * Product(input->dims, 2);
  const bool weighted = node.proto->input_size() >= 3 && !node.proto->input(2).empty();
  std::string reduction = "mean";
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "reduction")) reduction = attribute->s();
  int64_t ignore_index_bytes = 0;
  if (FindAttribute(*node.proto, "ignore_index") != nullptr) {
    ignore_index_bytes = reduction != "mean" ? 26 : weighted ? 22 : 30;
  }
  return samples * (4 * ((reduction == "none" ? 1 : 2) + (weighted ? 1 : 0)) + ignore_index_bytes);
}

// Softmax and LogSoftmax along an axis that is not the last (opset 13's
// meaning): core/providers/cpu/math/softmax.cc transposes the input so that
// the axis is last and transposes the result back, holding both transposed
// copies for the run. Measured: LogSoftmax(axis 1) of [3, 5, 21600] floats
// peaks at 4 x the input (input, output and the two copies); along the last
// axis at 2 x. With no axis attribute the default is the last (opset 13) or
// a 2-D coercion without a transpose (earlier opsets): no scratch either way.
int64_t SoftmaxWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::AttributeProto* axis_attribute = FindAttribute(*node.proto, "axis");
  if (node.inputs.empty() || axis_attribute == nullptr) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dims.empty()) return 0;
  const int64_t rank = static_cast<int64_t>(input->dims.size());
  int64_t axis = axis_attribute->i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) return 0;
  const int64_t element = input->dtype == "float64" ? 8 : input->dtype == "float16" ? 2 : 4;
  return 2 * element * Product(input->dims, 0);
}

// Where's scratch (core/providers/cpu/tensor/where_op.cc): it selects the
// true values into a tensor of the broadcast shape of the condition and X,
// the false values into one of the condition and Y, both from the kernel's
// allocator and live together, then merges them into the output. Measured:
// a float16 LeakyRelu inlined at opset 16 (Mul, Less, Where in float32 on a
// 1 MiB tensor) peaks 2 MiB above its tensors. An input left out (a scalar
// constant of an inlined body, fp16_function_bodies.h) broadcasts as a scalar.
// The width of the element types Where's kernels take (float16 runs in
// float32), by KnownTensor::dtype; 0 for others (strings).
int ElementBitsOfName(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 32;
  if (dtype == "float64" || dtype == "int64") return 64;
  if (dtype == "uint8" || dtype == "bool") return 8;
  return 0;
}

int64_t WhereWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return 0;
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  const std::optional<KnownTensor> condition = tensor_of(node.inputs[0]);
  if (!output || !condition) return 0;
  const int bits = ElementBitsOfName(output->dtype);
  if (bits <= 0) return 0;
  int64_t bytes = 0;
  for (size_t slot = 1; slot <= 2; ++slot) {
    std::vector<int64_t> dims = condition->dims;
    if (slot < node.inputs.size()) {
      const std::optional<KnownTensor> values = tensor_of(node.inputs[slot]);
      if (!values) return 0;
      const size_t rank = std::max(dims.size(), values->dims.size());
      std::vector<int64_t> broadcast(rank, 1);
      for (size_t axis = 0; axis < rank; ++axis) {
        const int64_t a = axis + dims.size() >= rank ? dims[axis + dims.size() - rank] : 1;
        const int64_t b = axis + values->dims.size() >= rank ? values->dims[axis + values->dims.size() - rank] : 1;
        broadcast[axis] = a == 1 ? b : a;
      }
      dims = std::move(broadcast);
    }
    bytes += (Product(dims, 0) * bits + 7) / 8;
  }
  return bytes;
}

// LSTM's scratch (float32 and float64): core/providers/cpu/rnn/deep_cpu_lstm.cc
// builds one lstm::UniDirectionalLstm per direction (both at once when
// bidirectional) on the temp-space allocator, and uni_directional_lstm.cc
// (AllocateBuffers, Compute) gives each, in elements of the input's type:
// 2 H (hidden0_, internal_memory_prev_), 3 B H (the batched hidden state,
// cell state and clipped cell state), 4 H B S (output_iofc_, the gates of
// every step), 4 H with a bias, 3 H with peepholes, and in the reverse
// direction S B I + S B H (the reversed inputs and outputs); plus B int32
// sequence lengths when none is given. DeepCpuLstmOp::ComputeImpl adds
// D B H for Y_h and for Y_c when the node does not output them. Measured:
// probes of S 1 to 32, B 4 to 16, H 64 to 128, forward, reverse and
// bidirectional, with and without bias, initial states and Y_h/Y_c.
int64_t LstmWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dims.size() != 3) return 0;
  const int64_t element = input->dtype == "float32" ? 4 : input->dtype == "float64" ? 8 : 0;
  const onnx::AttributeProto* hidden_attribute = FindAttribute(proto, "hidden_size");
  if (element == 0 || hidden_attribute == nullptr || hidden_attribute->i() <= 0) return 0;
  auto given = [&](int slot) { return slot < proto.input_size() && !proto.input(slot).empty(); };
  auto outputs = [&](int slot) { return slot < proto.output_size() && !proto.output(slot).empty(); };
  const onnx::AttributeProto* direction_attribute = FindAttribute(proto, "direction");
  const std::string direction = direction_attribute != nullptr ? direction_attribute->s() : "forward";
  const int64_t seq = input->dims[0];
  const int64_t batch = input->dims[1];
  const int64_t input_size = input->dims[2];
  const int64_t hidden = hidden_attribute->i();
  auto one_direction = [&](bool reverse) {
    int64_t elements = 2 * hidden + 3 * batch * hidden + 4 * hidden * batch * seq;
    if (given(3)) elements += 4 * hidden;
    if (given(7)) elements += 3 * hidden;
    if (reverse) elements += seq * batch * (input_size + hidden);
    return elements * element + (given(4) ? 0 : 4 * batch);
  };
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  int64_t bytes = direction == "bidirectional" ? one_direction(false) + one_direction(true)
                                                : one_direction(direction == "reverse");
  for (int slot : {1, 2}) {
    if (!outputs(slot)) bytes += directions * batch * hidden * element;
  }
  return bytes;
}

// com.microsoft MultiHeadAttention's scratch on its float32 FlashAttention
// path (contrib_ops/cpu/bert/multihead_attention.cc: float32, no mask, no
// attention bias, no past, no present outputs, not unidirectional, 3-D key
// and value): BNSH copies of the query, key and value, and one thread's FlashAttention
// buffer, (2 Br + Br Bc + Br Hv) floats with Bc = L2 / (16 (Hqk + Hv)) at
// most the kv length and Br = min(Bc, Hqk + Hv) at most the query length.
// L2 is the host's (HostL2CacheBytes, read as ORT reads it: 1 MiB on the
// AMD EPYC measured, float32 MHA of S 64 to 256, hidden 64 and 128, 1 and 4
// heads: 0.98-0.997 of ORT's run peak). The other path (a mask, bias or past) below.
int64_t MultiHeadAttentionWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  auto given = [&](int slot) { return slot < proto.input_size() && !proto.input(slot).empty(); };
  if (!given(0) || !given(1) || !given(2) || node.inputs.size() < 3) return 0;
  bool flash = true;
  for (int slot = 4; slot < proto.input_size(); ++slot) flash = flash && !given(slot);
  for (int slot = 1; slot < proto.output_size(); ++slot) flash = flash && proto.output(slot).empty();
  const onnx::AttributeProto* unidirectional = FindAttribute(proto, "unidirectional");
  const onnx::AttributeProto* heads_attribute = FindAttribute(proto, "num_heads");
  if (heads_attribute == nullptr) return 0;
  flash = flash && (unidirectional == nullptr || unidirectional->i() == 0);
  const std::optional<KnownTensor> query = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> key = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> value = tensor_of(node.inputs[2]);
  if (!query || !key || !value || query->dtype != "float32" || query->dims.size() != 3 || key->dims.size() != 3 ||
      value->dims.size() != 3) {
    return 0;
  }
  const int64_t heads = heads_attribute->i();
  if (heads <= 0 || key->dims[2] % heads != 0 || value->dims[2] % heads != 0) return 0;
  const int64_t q_length = query->dims[1];
  const int64_t kv_length = key->dims[1];
  const int64_t qk_head = key->dims[2] / heads;
  const int64_t v_head = value->dims[2] / heads;
  const int64_t copies = 4 * (Product(query->dims, 0) + Product(key->dims, 0) + Product(value->dims, 0));
  if (!flash) {
    // ApplyAttention (contrib_ops/cpu/bert/attention_cpu_base.h): the
    // attention probabilities, [B, N, S, past + L] floats, and the output
    // before its transpose, [B, N, S, Hv]. Measured (float32, attention
    // bias or none, past 0 to 1024, S 1 to 128): 0.985-0.998 of ORT's run peak.
    int64_t past_length = 0;
    if (given(6)) {
      size_t index = 0;  // node.inputs holds the given inputs in order.
      for (int slot = 0; slot < 6; ++slot) index += given(slot) ? 1 : 0;
      const std::optional<KnownTensor> past_key =
          index < node.inputs.size() ? tensor_of(node.inputs[index]) : std::nullopt;
      if (past_key && past_key->dims.size() == 4) past_length = past_key->dims[2];
    }
    const int64_t batch = query->dims[0];
    return copies + 4 * batch * heads * q_length * (past_length + kv_length + v_head);
  }
  int64_t kv_block = std::max<int64_t>(HostL2CacheBytes() / (4 * 4 * (qk_head + v_head)), 1);
  int64_t q_block = std::min(kv_block, qk_head + v_head);
  kv_block = std::min(kv_block, kv_length);
  q_block = std::min(q_block, q_length);
  return copies + 4 * (2 * q_block + q_block * kv_block + q_block * v_head);
}

// The float kernels' scratch, one block each.
int64_t FloatKernelWorkspaceBytes(CpuIsa isa, const IrNode& node, const TensorLookup& tensor_of) {
  if (node.proto->domain() == "com.microsoft" && node.proto->op_type() == "MultiHeadAttention") {
    return MultiHeadAttentionWorkspaceBytes(node, tensor_of);
  }
  if (!IsDefaultDomain(*node.proto)) return 0;
  if (node.proto->op_type() == "Conv") return ConvWorkspaceBytes(isa, node, tensor_of);
  if (node.proto->op_type() == "ConvTranspose") return ConvTransposeWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "LRN") return LrnWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "NegativeLogLikelihoodLoss") return NllLossWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "Where") return WhereWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "LSTM") return LstmWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "Softmax" || node.proto->op_type() == "LogSoftmax") {
    return SoftmaxWorkspaceBytes(node, tensor_of);
  }
  return 0;
}

}  // namespace

std::vector<int64_t> KernelScratch(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite, const IrNode& node,
                                   const TensorLookup& tensor_of) {
  if (std::optional<std::vector<int64_t>> quantized = QuantizedKernelScratch(isa, graph, rewrite, node, tensor_of)) {
    return *quantized;
  }
  const int64_t bytes = FloatKernelWorkspaceBytes(isa, node, tensor_of);
  if (bytes > 0) return {bytes};
  return {};
}

}  // namespace footprint::ort
