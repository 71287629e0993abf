#include "analyzer/cli/size_flags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace footprint {
namespace {

struct SizeCase {
  std::string text;      // What the user typed.
  int64_t bytes = 0;     // What it means.
};

TEST(ByteSizeTest, ParsesEveryUnitExactly) {
  const std::vector<SizeCase> cases = {
      {.text = "0", .bytes = 0},
      {.text = "4096", .bytes = 4096},
      {.text = "4096B", .bytes = 4096},
      {.text = "512KiB", .bytes = 512 * 1024},
      {.text = "512 KiB", .bytes = 512 * 1024},
      {.text = "1.5MiB", .bytes = 1572864},
      {.text = "2GiB", .bytes = 2147483648LL},
      {.text = "1TiB", .bytes = 1099511627776LL},
      {.text = "8K", .bytes = 8192},
      {.text = "8k", .bytes = 8192},
      {.text = "3M", .bytes = 3 * 1048576},
      {.text = "1G", .bytes = 1073741824},
      {.text = "4Ki", .bytes = 4096},
      {.text = "100KB", .bytes = 100000},
      {.text = "100kB", .bytes = 100000},
      {.text = "100MB", .bytes = 100000000},
      {.text = "2GB", .bytes = 2000000000},
      {.text = "1.5GB", .bytes = 1500000000},
      {.text = "1TB", .bytes = 1000000000000LL},
      {.text = "1.1KiB", .bytes = 1126},  // 1126.4 rounded down.
      {.text = "0.5K", .bytes = 512},
      {.text = "7.0", .bytes = 7},
  };
  for (const SizeCase& size : cases) {
    SCOPED_TRACE(size.text);
    absl::StatusOr<int64_t> bytes = ParseByteSize(size.text);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, size.bytes);
  }
}

TEST(ByteSizeTest, RefusesMalformedSizes) {
  for (const std::string text :
       {"", " ", "-1", "-1KiB", "KiB", "1.5", "0.5B", "1.", ".5MiB", "12XB", "1 2", "1  MiB", "1kb", "1Mb", "1MiBB",
        "1e9", "0x10", "1,024", "1KiB ", " 1KiB", "8EiB", "9223372036854775808", "9999999999999999999999",
        "9000000TiB", "1.0000000001GiB", "nan", "inf", "5%"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<int64_t> bytes = ParseByteSize(text);
    ASSERT_FALSE(bytes.ok()) << *bytes;
    EXPECT_NE(bytes.status().message().find("is not a size"), std::string::npos) << bytes.status();
  }
  EXPECT_NE(ParseByteSize("1kb").status().message().find("bits"), std::string::npos);
}

TEST(ByteSizeTest, LargestSizeFitsInt64) {
  EXPECT_EQ(ParseByteSize("9223372036854775807").value(), INT64_MAX);
  EXPECT_EQ(ParseByteSize("8388607TiB").value(), 8388607LL * 1099511627776LL);
}

TEST(ByteSizeTest, ThresholdsArePercentagesOrSizes) {
  EXPECT_EQ(ParseGrowthThreshold("5%").value().percent, 5.0);
  EXPECT_EQ(ParseGrowthThreshold("0.5%").value().percent, 0.5);
  EXPECT_EQ(ParseGrowthThreshold("0%").value().percent, 0.0);
  EXPECT_EQ(ParseGrowthThreshold("1MiB").value().bytes, 1048576);
  EXPECT_EQ(ParseGrowthThreshold("100").value().bytes, 100);
  for (const std::string text : {"", "%", "-5%", "five%", "5%%", "inf%", "nan%", "1XB", "-1MiB"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(ParseGrowthThreshold(text).ok());
  }
}

// ------------------------------------------------------------- budgets ----

}  // namespace
}  // namespace footprint
