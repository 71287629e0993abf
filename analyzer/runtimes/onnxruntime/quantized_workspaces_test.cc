// QLinearConv's pack at load (quantized_workspaces.h QLinearConvPackOf): the
// sizes MLAS asks for on each path, and where PrePack takes them from.
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"

#include "gtest/gtest.h"

namespace footprint::ort {
namespace {

QLinearConvKernel Kernel(int64_t output_channels, int64_t input_channels, int64_t kernel_size, int64_t group = 1) {
  return {.output_channels = output_channels, .group = group, .group_input_channels = input_channels,
          .kernel_size = kernel_size, .filter_rank = 4,
          .depthwise = input_channels == 1 && output_channels / group == 1, .weights_signed = true};
}

TEST(QLinearConvPackTest, TheSymmetricConvPadsOutputChannelsToTheDispatchsPackCountInTheArena) {
  QLinearConvKernel kernel = Kernel(20, 16, 9);
  kernel.symmetric_conv = true;
  // MlasConvSymPackWSize: 16 on x86-64's dispatches, 8 on ARM64's NEON one.
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kAvx512, kernel).kept_bytes, 32 * 16 * 9);
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kArm64, kernel).kept_bytes, 24 * 16 * 9);
  EXPECT_FALSE(QLinearConvPackOf(CpuIsa::kAvx512, kernel).kept_reserved);  // alloc->Alloc: the arena's regions.
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kAvx512, kernel).transient_bytes, 0);
}

TEST(QLinearConvPackTest, TheSymmetricDepthwiseConvPacksOneFilterPerGroup) {
  QLinearConvKernel kernel = Kernel(32, 1, 9, /*group=*/32);
  kernel.symmetric_conv = true;
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kAvx2, kernel).kept_bytes, 32 * 9);
}

TEST(QLinearConvPackTest, TheGemmPackIsReservedWithColumnSumsAndAReorderedGroupWhilePacking) {
  // MlasGemmPackBSize: N 20 -> 32, K 144 (int8 weights: PackedK 4), an int32
  // per column, rounded to 64; one group's reordered filter besides.
  const QLinearConvPack pack = QLinearConvPackOf(CpuIsa::kAvx2, Kernel(20, 16, 9));
  EXPECT_EQ(pack.kept_bytes, 32 * 4 + 32 * 144);
  EXPECT_TRUE(pack.kept_reserved);
  EXPECT_EQ(pack.transient_bytes, 20 * 16 * 9);
  // uint8 weights (PackedK 2): K 27 -> 28; two groups, each packed alone.
  QLinearConvKernel unsigned_weights = Kernel(16, 3, 9, /*group=*/2);
  unsigned_weights.output_channels = 32;
  unsigned_weights.weights_signed = false;
  const int64_t per_group = (16 * 4 + 16 * 28 + 63) / 64 * 64;
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kAvx2, unsigned_weights).kept_bytes, 2 * per_group);
  EXPECT_EQ(QLinearConvPackOf(CpuIsa::kAvx2, unsigned_weights).transient_bytes, 16 * 3 * 9);
}

TEST(QLinearConvPackTest, ANonSymmetricDepthwiseConvKeepsItsReorderedFilterReserved) {
  const QLinearConvPack pack = QLinearConvPackOf(CpuIsa::kAvx512, Kernel(24, 1, 9, /*group=*/24));
  EXPECT_EQ(pack.kept_bytes, 24 * 9);
  EXPECT_TRUE(pack.kept_reserved);
  EXPECT_EQ(pack.transient_bytes, 0);
}

}  // namespace
}  // namespace footprint::ort
