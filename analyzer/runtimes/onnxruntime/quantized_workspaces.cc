// The scratch of ORT's quantized kernels (quantized_workspaces.h).
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// `value` rounded up to a multiple of `multiple` (> 0).
int64_t RoundUpTo(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

bool StridesOneNoPadding(const onnx::NodeProto& proto) {
  if (const onnx::AttributeProto* strides = FindAttribute(proto, "strides")) {
    for (int64_t stride : strides->ints()) {
      if (stride != 1) return false;
    }
  }
  if (const onnx::AttributeProto* pads = FindAttribute(proto, "pads")) {
    for (int64_t pad : pads->ints()) {
      if (pad != 0) return false;
    }
  }
  if (const onnx::AttributeProto* auto_pad = FindAttribute(proto, "auto_pad")) {
    if (auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER") return false;
  }
  return true;
}

// ConvInteger (core/providers/cpu/quantization/conv_integer.cc): an im2col
// buffer of kernel_dim * output_image_size bytes (one group at a time),
// unless the kernel is 1 with strides 1 and no padding.
int64_t ConvIntegerWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dims.size() < 3 || filter->dims.size() != input->dims.size()) return 0;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
  const int64_t kernel_size = Product(filter->dims, 2);
  if (kernel_size == 1 && StridesOneNoPadding(*node.proto)) return 0;
  return input->dims[1] / group * kernel_size * Product(output->dims, 2);
}

// Whether every element of the weight zero point `name` is 0 ("" means 0).
bool ZeroPointIsZero(const IrGraph& graph, const std::string& name) {
  if (name.empty()) return true;
  std::optional<ValueId> id = ValueNamed(graph, name);
  if (!id.has_value()) return false;
  const onnx::TensorProto* tensor = ConstantTensor(graph, *id);
  if (tensor == nullptr || tensor->data_location() == onnx::TensorProto::EXTERNAL) return false;
  if (tensor->has_raw_data()) {
    for (char byte : tensor->raw_data()) {
      if (byte != 0) return false;
    }
    return true;
  }
  for (int32_t value : tensor->int32_data()) {
    if (value != 0) return false;
  }
  return true;
}

// The int8 zero point WeightBiasQuantization gives a float weight is 0:
// GetQuantizationParameter<int8_t> (core/util/qmath.h) takes the range
// [min(w, 0), max(w, 0)], scale (max - min) / 255 (1 when max == min) and
// zero point round(-128 - min / scale), clamped: 0 only for a range close to
// symmetric. A weight whose values are not in the file (a folded one) is
// taken as not symmetric. Probe: light_vgg19's QDQ copy (weights folded
// ConstantOfShape outputs of one value) runs its 3x3 QLinearConvs on the
// GEMM path (48,776,424 bytes at 64 -> 64 channels on 224 x 224).
bool QuantizedWeightIsSymmetric(const IrGraph& graph, const std::string& name) {
  std::optional<ValueId> id = ValueNamed(graph, name);
  if (!id.has_value()) return false;
  const onnx::TensorProto* tensor = ConstantTensor(graph, *id);
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::FLOAT ||
      tensor->data_location() == onnx::TensorProto::EXTERNAL) {
    return false;
  }
  float low = 0.0f;
  float high = 0.0f;
  auto see = [&](float value) {
    low = std::min(low, value);
    high = std::max(high, value);
  };
  if (tensor->has_raw_data()) {
    const std::string& raw = tensor->raw_data();
    for (size_t offset = 0; offset + sizeof(float) <= raw.size(); offset += sizeof(float)) {
      float value;
      std::memcpy(&value, raw.data() + offset, sizeof(float));
      see(value);
    }
  } else {
    for (float value : tensor->float_data()) see(value);
  }
  if (high == low) return false;  // Scale 1, zero point -128.
  const float scale = (high - low) / 255.0f;
  const float zero_point = std::clamp(-128.0f - low / scale, -128.0f, 127.0f);
  return std::nearbyint(zero_point) == 0.0f;
}

// The element type ORT holds value `id` in: a runtime rule's
// (HeldValue::data_type, along the values it stands for: an int8
// activation ORT turned into uint8, passes/qdq_fusion.cc), else `known`'s.
std::string RuntimeDtype(const GraphRewrite& rewrite, ValueId id, const KnownTensor& known) {
  for (ValueId at = id; at >= 0; at = HeldAs(rewrite, at).sized_as) {
    switch (HeldAs(rewrite, at).data_type) {
      case 0:
        continue;
      case onnx::TensorProto::UINT8:
        return "uint8";
      case onnx::TensorProto::INT8:
        return "int8";
      default:
        return known.dtype;
    }
  }
  return known.dtype;
}

// QLinearConv (core/providers/cpu/quantization/qlinearconv.cc, Compute), ORT
// having made it channels-last (NhwcTransformer: no transpose buffers in the
// kernel). Its scratch for the run:
//  - the symmetric path (PrePack's TryConvSymPrepack: int8 weights whose zero
//    points are all 0, uint8 activations; MLAS's ConvSymU8S8Dispatch,
//    core/mlas/lib/convsym.cpp MlasConvSymPackWSize): an indirection buffer
//    of kernel_size * output_image_size pointers, unless the kernel is
//    pointwise with strides 1 and no padding (then none). It applies to
//    group 1 when Cout >= 16, Cin % 4 == 0 and Cout % 8 (AVX2) or 4
//    (AVX-512) == 0, on ARM64 only with Cin >= 64 and a kernel above 1; to
//    depthwise when the group count is a multiple of 16 (8 on ARM64). A
//    channels-last symmetric conv runs every image of the batch in one
//    parallel section (Compute's parallel_batch = is_symmetric_conv_ &&
//    channels_last_), so its indirection buffer holds N images' pointers;
//  - otherwise an int32 GEMM output of M * output_image_size, and an im2col
//    buffer of kernel_dim * output_image_size bytes (or, depthwise, the
//    indirection buffer), for one image: the kernel loops over the batch.
// Probes (bench/ground_truth, uint8 in and out, 128x128, this host's
// AVX-512): 3x3 16->32 symmetric peaks 1,179,648 (9 x 16,384 x 8) above its
// tensors; with weight zero point 3, or uint8 weights, 4,456,448 (GEMM
// 2,097,152 + im2col 2,359,296); 3x3 3->24 stride 2 (Cin 3) GEMM + im2col;
// 1x1 16->32: nothing. int8 activations (no ConvSymS8S8Dispatch on x86)
// measured 2,443,000 over the tensors for 3x3 16->32: not derived, the
// GEMM rule is used. Batch 4 (pytorch_super_resolution's QDQ copy, 4 x 64 x
// 224 x 224): ORT's 3x3 64->64 and 64->32 symmetric convs each allocate
// 14,450,696 bytes = 4 x 9 x 50,176 x 8; its 32->9 GEMM conv, one image's
// im2col (288 x 50,176) and GEMM output.
std::vector<int64_t> QLinearConvScratch(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite,
                                        const IrNode& node, const TensorLookup& tensor_of) {
  if (node.outputs.empty()) return {};
  const std::optional<QLinearConvKernel> kernel = QLinearConvKernelOf(isa, graph, rewrite, node, tensor_of);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!kernel.has_value() || !output.has_value() || output->dims.size() < 3) return {};
  const int64_t output_image_size = Product(output->dims, 2);
  constexpr int64_t kPointerBytes = 8;
  const int64_t indirection = kernel->kernel_size * output_image_size * kPointerBytes;
  if (kernel->symmetric_conv) {
    if (kernel->depthwise || !kernel->pointwise) return {indirection * kernel->batch};
    return {};
  }
  // Compute takes the GEMM output first, then the im2col or indirection
  // buffer: two blocks of the arena, not one of their sum.
  const int64_t gemm_output = 4 * kernel->output_channels * output_image_size;
  if (kernel->depthwise) return {gemm_output, indirection};
  if (kernel->pointwise) return {gemm_output};
  const int64_t col_buffer = kernel->group_input_channels * kernel->kernel_size * output_image_size *
                             (kernel->filter_rank > 4 ? kernel->group : 1);
  return {gemm_output, col_buffer};
}

// One block of `bytes`, none for 0.
std::vector<int64_t> OneBlock(int64_t bytes) {
  if (bytes > 0) return {bytes};
  return {};
}

// QLinearMatMul (core/providers/cpu/quantization/quantize_linear_matmul.cc,
// Compute): an int32 GEMM output of M x N per matrix product, requantized
// into Y: 4 bytes per element of Y.
int64_t QLinearMatMulWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.outputs.empty()) return 0;
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  return output.has_value() ? 4 * Product(output->dims, 0) : 0;
}

// QGemm (contrib_ops/cpu/quantization/quant_gemm.cc, Compute): with a
// quantized Y (y_scale given: Y is 8-bit, not float), an int32 GEMM output
// of M x N; with transA, A transposed into a buffer of its bytes (B, a
// constant, is pre-packed).
int64_t QGemmWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.outputs.empty() || node.inputs.empty()) return 0;
  int64_t bytes = 0;
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (output.has_value() && (output->dtype == "uint8" || output->dtype == "int8")) {
    bytes += 4 * Product(output->dims, 0);
  }
  if (const onnx::AttributeProto* trans_a = FindAttribute(proto, "transA"); trans_a != nullptr && trans_a->i() != 0) {
    const std::optional<KnownTensor> a = tensor_of(node.inputs[0]);
    if (a.has_value()) bytes += Product(a->dims, 0);
  }
  return bytes;
}

// DynamicQuantizeMatMul (contrib_ops/cpu/quantization/dynamic_quantize_matmul.cc):
// A quantized to uint8 in a buffer of A's elements for the run.
int64_t DynamicQuantizeMatMulWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> a = tensor_of(node.inputs[0]);
  return a.has_value() ? Product(a->dims, 0) : 0;
}

}  // namespace

std::optional<QLinearConvKernel> QLinearConvKernelOf(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite,
                                                     const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  if (proto.input_size() < 8) return std::nullopt;
  std::optional<ValueId> x_id = ValueNamed(graph, proto.input(0));
  std::optional<ValueId> w_id = ValueNamed(graph, proto.input(3));
  if (!x_id || !w_id) return std::nullopt;
  const std::optional<KnownTensor> input = tensor_of(*x_id);
  const std::optional<KnownTensor> filter = tensor_of(*w_id);
  if (!input || !filter || input->dims.size() < 3 || filter->dims.size() != input->dims.size()) return std::nullopt;
  QLinearConvKernel kernel;
  if (const onnx::AttributeProto* attribute = FindAttribute(proto, "group")) kernel.group = attribute->i();
  if (kernel.group <= 0 || filter->dims[0] % kernel.group != 0) return std::nullopt;
  kernel.batch = input->dims[0];
  kernel.output_channels = filter->dims[0];
  kernel.group_input_channels = filter->dims[1];
  kernel.kernel_size = Product(filter->dims, 2);
  kernel.filter_rank = static_cast<int64_t>(filter->dims.size());
  const int64_t group_output_channels = kernel.output_channels / kernel.group;
  kernel.depthwise = kernel.group_input_channels == 1 && group_output_channels == 1;
  kernel.pointwise = kernel.kernel_size == 1 && StridesOneNoPadding(proto);
  // A float filter here is one ORT quantized itself (int8).
  kernel.weights_signed = filter->dtype == "float32" || filter->dtype == "int8";
  const bool symmetric_weights = filter->dtype == "float32"
                                     ? QuantizedWeightIsSymmetric(graph, proto.input(3))
                                     : filter->dtype == "int8" && ZeroPointIsZero(graph, proto.input(5));
  const std::string input_dtype = RuntimeDtype(rewrite, *x_id, *input);
  kernel.activations_signed = input_dtype == "int8";
  // MLAS's ConvSymS8S8Dispatch exists on ARM64 only (platform.cpp): int8
  // activations take the symmetric path there, never on x86-64.
  bool symmetric_conv =
      symmetric_weights && (input_dtype == "uint8" || (input_dtype == "int8" && isa == CpuIsa::kArm64));
  if (symmetric_conv) {
    if (kernel.group > 1) {
      symmetric_conv = kernel.depthwise && kernel.group % (isa == CpuIsa::kArm64 ? 8 : 16) == 0;
    } else if (isa == CpuIsa::kArm64) {
      symmetric_conv = kernel.kernel_size > 1 && kernel.group_input_channels >= 64 && kernel.output_channels >= 8 &&
                       kernel.group_input_channels % 8 == 0 && kernel.output_channels % 8 == 0;
    } else {
      symmetric_conv = kernel.output_channels >= 16 && kernel.group_input_channels % 4 == 0 &&
                       kernel.output_channels % (isa == CpuIsa::kAvx2 ? 8 : 4) == 0;
    }
  }
  kernel.symmetric_conv = symmetric_conv;
  return kernel;
}

// PrePack (qlinearconv.cc), for a W of rank 3 or more:
//  - the symmetric conv: MlasConvSymPackWSize (convsym.cpp): output
//    channels padded to the dispatch's FilterOutputChannelPackCount (16 on
//    x86-64's AVX2 and AVX-512 dispatches, 8 on ARM64's NEON one) x input
//    channels x kernel; depthwise, the group count (a multiple of 16, 8 on
//    ARM64) x kernel;
//  - else, not depthwise: per group MlasGemmPackBSize (qgemm.cpp) of N =
//    the group's output channels, K = its input channels x kernel: N
//    padded to 16 (MLAS_QGEMM_STRIDEN_THREAD_ALIGN), K to the dispatch's
//    PackedK (x86-64 without AVX-VNNI-INT8: 4 for uint8 x int8, 2 for uint8
//    x uint8; ARM64's dot-product dispatches: 8), one int32 column sum per
//    column, the whole rounded to 64 bytes; then one group's reordered
//    filter, taken and given back while packing;
//  - else (depthwise, not symmetric): the filter reordered, its own bytes.
// Every buffer from PrePack's allocator (session_state.cc
// PrepackConstantInitializedTensors: the session's CPU allocator, the arena
// under ORT's default options): the symmetric conv's pack by Alloc, from
// the arena's regions; the GEMM pack, the reordered filters by
// MakeUniquePtr(alloc, bytes, true), reserved beside them (ORT's verbose log
// says "Reserving memory in BFCArena").
QLinearConvPack QLinearConvPackOf(CpuIsa isa, const QLinearConvKernel& kernel) {
  const int64_t filter_bytes = kernel.output_channels * kernel.group_input_channels * kernel.kernel_size;
  if (kernel.symmetric_conv) {
    const int64_t pack_count = isa == CpuIsa::kArm64 ? 8 : 16;
    if (kernel.group > 1) return {.kept_bytes = RoundUpTo(kernel.group, pack_count) * kernel.kernel_size};
    return {.kept_bytes = RoundUpTo(kernel.output_channels, pack_count) * kernel.group_input_channels *
                          kernel.kernel_size};
  }
  if (kernel.depthwise) return {.kept_bytes = filter_bytes, .kept_reserved = true};
  const int64_t per_group = QuantizedGemmPackBytes(isa, kernel.output_channels / kernel.group,
                                                  kernel.group_input_channels * kernel.kernel_size,
                                                  kernel.weights_signed);
  return {.kept_bytes = kernel.group * per_group, .kept_reserved = true, .transient_bytes = filter_bytes / kernel.group};
}

int64_t QuantizedGemmPackBytes(CpuIsa isa, int64_t n, int64_t k, bool weights_signed) {
  constexpr int64_t kStrideNAlign = 16;
  constexpr int64_t kBufferAlignment = 64;
  const int64_t packed_k = isa == CpuIsa::kArm64 ? 8 : (weights_signed ? 4 : 2);
  const int64_t aligned_n = RoundUpTo(n, kStrideNAlign);
  return RoundUpTo(aligned_n * 4 + aligned_n * RoundUpTo(k, packed_k), kBufferAlignment);
}

std::optional<std::vector<int64_t>> QuantizedKernelScratch(CpuIsa isa, const IrGraph& graph,
                                                           const GraphRewrite& rewrite, const IrNode& node,
                                                           const TensorLookup& tensor_of) {
  const std::string& op = node.proto->op_type();
  if (IsDefaultDomain(*node.proto) && op == "ConvInteger") return OneBlock(ConvIntegerWorkspaceBytes(node, tensor_of));
  if (IsDefaultDomain(*node.proto) && op == "QLinearConv") return QLinearConvScratch(isa, graph, rewrite, node, tensor_of);
  if (IsDefaultDomain(*node.proto) && op == "QLinearMatMul") return OneBlock(QLinearMatMulWorkspaceBytes(node, tensor_of));
  if (node.proto->domain() != "com.microsoft") return std::nullopt;
  if (op == "QLinearMatMul") return OneBlock(QLinearMatMulWorkspaceBytes(node, tensor_of));
  if (op == "QGemm") return OneBlock(QGemmWorkspaceBytes(node, tensor_of));
  if (op == "DynamicQuantizeMatMul") return OneBlock(DynamicQuantizeMatMulWorkspaceBytes(node, tensor_of));
  if (op == "QLinearConv") return QLinearConvScratch(isa, graph, rewrite, node, tensor_of);
  return std::nullopt;
}

}  // namespace footprint::ort
