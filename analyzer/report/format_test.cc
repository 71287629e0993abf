#include "analyzer/report/format.h"

#include "gtest/gtest.h"

namespace footprint {
namespace {

TEST(FormatTest, HumanBytesHasBinaryUnitsAndThreeDigits) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.50 KiB");
  EXPECT_EQ(HumanBytes(111730624), "107 MiB");
  EXPECT_EQ(HumanBytes(3LL << 30), "3.00 GiB");
}

TEST(FormatTest, ThousandsSeparators) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
  EXPECT_EQ(WithThousands(-1234567), "-1,234,567");
}

TEST(FormatTest, HumanAndExactBytesGivesBoth) {
  EXPECT_EQ(HumanAndExactBytes(1572864), "1.50 MiB (1,572,864 bytes)");
  EXPECT_EQ(HumanAndExactBytes(0), "0 B (0 bytes)");
}

}  // namespace
}  // namespace footprint
