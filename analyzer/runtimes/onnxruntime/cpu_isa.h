// The CPU instruction sets onnxruntime-cpu's rules depend on
// (--runtime onnxruntime-cpu:ISA), and the host's, as ONNX Runtime's MLAS
// picks its kernels at run time (core/mlas/lib/platform.cpp,
// MLAS_PLATFORM::MLAS_PLATFORM). What differs between them today is each
// target's facts and table (targets.h: the NCHWc block, int8 QDQ groups
// fused on ARM64 only), ARM64's depthwise Conv kernel and MLAS's symmetric
// QLinearConv path (kernel_workspaces.h, quantized_workspaces.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_CPU_ISA_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_CPU_ISA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace footprint::ort {

enum class CpuIsa {
  kAvx2,    // x86-64 without AVX-512F (AVX2, or older: MLAS's NCHWc block is 8 on any x86-64).
  kAvx512,  // x86-64 with AVX-512F enabled by the OS: block 16.
  kArm64,   // AArch64: no NCHWc in ORT's release builds.
};

// "avx2", "avx512", "arm64", as --runtime onnxruntime-cpu:ISA takes them.
absl::string_view CpuIsaName(CpuIsa isa);
std::vector<std::string> KnownCpuIsaNames();
std::optional<CpuIsa> ParseCpuIsa(absl::string_view name);

// The ISA whose rules apply on this machine: AVX-512F usable (the CPU has it
// and the OS saves its registers) -> avx512, other x86-64 -> avx2, AArch64
// -> arm64. Error (FailedPrecondition) on any other architecture.
absl::StatusOr<CpuIsa> HostCpuIsa();

// This machine's L2 cache as ONNX Runtime's Env::GetL2CacheSize() reads it
// on Linux (sysconf(_SC_LEVEL2_CACHE_SIZE), 0 when unknown). Kernels that
// size their blocks by it (MultiHeadAttention's FlashAttention) use the L2
// of the machine the analysis runs on, whatever ISA is named.
int64_t HostL2CacheBytes();

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_CPU_ISA_H_
