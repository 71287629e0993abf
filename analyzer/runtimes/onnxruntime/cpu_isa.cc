#include "analyzer/runtimes/onnxruntime/cpu_isa.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace footprint::ort {

absl::string_view CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kArm64:
      return "arm64";
  }
  return "avx2";
}

std::vector<std::string> KnownCpuIsaNames() { return {"avx2", "avx512", "arm64"}; }

std::optional<CpuIsa> ParseCpuIsa(absl::string_view name) {
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kArm64}) {
    if (name == CpuIsaName(isa)) return isa;
  }
  return std::nullopt;
}

absl::StatusOr<CpuIsa> HostCpuIsa() {
#if defined(__x86_64__)
  // MLAS takes its AVX-512F kernels (and an NCHWc block of 16: targets.cc) when CPUID leaf 7
  // reports AVX512F and XCR0 has the opmask and ZMM state bits (0xE0);
  // libgcc's __builtin_cpu_supports("avx512f") checks both.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") ? CpuIsa::kAvx512 : CpuIsa::kAvx2;
#elif defined(__aarch64__)
  return CpuIsa::kArm64;
#else
  return absl::FailedPreconditionError(
      "cannot tell which of ONNX Runtime's CPU targets this machine is: name one, onnxruntime-cpu:avx2, "
      "onnxruntime-cpu:avx512 or onnxruntime-cpu:arm64");
#endif
}

int64_t HostL2CacheBytes() {
#ifdef _SC_LEVEL2_CACHE_SIZE
  static const int64_t bytes = std::max<int64_t>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  return bytes;
#else
  return 0;
#endif
}

}  // namespace footprint::ort
