#include "analyzer/shapes/tensor_size.h"

#include "gtest/gtest.h"

namespace footprint {
namespace {

struct BitsCase {
  int32_t data_type;  // TensorProto.DataType.
  int bits;           // Expected bits per element (0: no byte size).
};

TEST(BitsPerElementTest, MatchesTheSpecTable) {
  const BitsCase cases[] = {
      {.data_type = 1, .bits = 32},  {.data_type = 6, .bits = 32},  {.data_type = 12, .bits = 32},
      {.data_type = 11, .bits = 64}, {.data_type = 7, .bits = 64},  {.data_type = 13, .bits = 64},
      {.data_type = 14, .bits = 64}, {.data_type = 15, .bits = 128}, {.data_type = 10, .bits = 16},
      {.data_type = 16, .bits = 16}, {.data_type = 5, .bits = 16},  {.data_type = 4, .bits = 16},
      {.data_type = 3, .bits = 8},   {.data_type = 2, .bits = 8},   {.data_type = 9, .bits = 8},
      {.data_type = 17, .bits = 8},  {.data_type = 18, .bits = 8},  {.data_type = 19, .bits = 8},
      {.data_type = 20, .bits = 8},  {.data_type = 21, .bits = 4},  {.data_type = 22, .bits = 4},
      {.data_type = 8, .bits = 0},   {.data_type = 0, .bits = 0},   {.data_type = 99, .bits = 0},
  };
  for (const BitsCase& test_case : cases) {
    const std::optional<int> bits = BitsPerElement(test_case.data_type);
    EXPECT_EQ(bits.value_or(0), test_case.bits) << "data type " << test_case.data_type;
  }
}

TEST(TensorByteSizeTest, RoundsSubByteTypesUp) {
  EXPECT_EQ(*TensorByteSize({3}, 4), 2);   // 12 bits -> 2 bytes.
  EXPECT_EQ(*TensorByteSize({4}, 4), 2);
  EXPECT_EQ(*TensorByteSize({1}, 4), 1);
  EXPECT_EQ(*TensorByteSize({3, 5}, 16), 30);
}

TEST(TensorByteSizeTest, ScalarHasOneElementAndZeroDimHasNone) {
  EXPECT_EQ(*TensorByteSize({}, 32), 4);
  EXPECT_EQ(*TensorByteSize({0, 7}, 32), 0);
  EXPECT_EQ(*TensorByteSize({7, 0}, 4), 0);
}

TEST(TensorByteSizeTest, OverflowAndNegativeDimsAreErrors) {
  EXPECT_FALSE(TensorByteSize({1LL << 40, 1LL << 40}, 8).ok());
  EXPECT_FALSE(TensorByteSize({1LL << 61}, 64).ok());  // Elements fit, bytes do not.
  EXPECT_TRUE(TensorByteSize({1LL << 60}, 8).ok());
  EXPECT_FALSE(TensorByteSize({-1, 4}, 32).ok());
  // A 0 dim makes the tensor empty even when the others would overflow.
  EXPECT_EQ(*TensorByteSize({1LL << 40, 1LL << 40, 0}, 8), 0);
}

TEST(AlignUpTest, RoundsToMultiples) {
  EXPECT_EQ(*AlignUp(0, 64), 0);
  EXPECT_EQ(*AlignUp(1, 64), 64);
  EXPECT_EQ(*AlignUp(64, 64), 64);
  EXPECT_EQ(*AlignUp(100, 64), 128);
  EXPECT_EQ(*AlignUp(100, 1), 100);
  EXPECT_FALSE(AlignUp(INT64_MAX - 3, 64).ok());
  EXPECT_FALSE(AlignUp(10, 0).ok());
}

TEST(CheckedAddTest, DetectsOverflow) {
  EXPECT_EQ(*CheckedAdd(2, 3), 5);
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1).ok());
}

}  // namespace
}  // namespace footprint
