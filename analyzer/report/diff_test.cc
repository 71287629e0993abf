#include "analyzer/report/diff.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

// Only the peak (and the unsized count) vary, so each test gates one figure.
ReportFigures Figures(int64_t peak, int64_t unsized = 0) {
  return ReportFigures{.source = "r.json", .model_path = "m.onnx", .weights_bytes = 1000, .arena_bytes = 4000,
                       .lower_bound_bytes = 3000, .naive_bytes = 9000, .peak_bytes = peak,
                       .unsized_tensors = unsized};
}

const FigureDelta& Find(const ReportDiff& diff, const std::string& key) {
  for (const FigureDelta& delta : diff.figures) {
    if (delta.key == key) return delta;
  }
  static const FigureDelta kMissing;
  ADD_FAILURE() << key;
  return kMissing;
}

TEST(DiffTest, PercentThresholdFlagsGrowthPastIt) {
  const GrowthThreshold five{.percent = 5};
  EXPECT_FALSE(DiffFigures(Figures(100000), Figures(105000), five).exceeded);  // +5.0%: at the threshold.
  const ReportDiff grew = DiffFigures(Figures(100000), Figures(106000), five);
  EXPECT_TRUE(grew.exceeded);
  EXPECT_TRUE(Find(grew, "peak_bytes").exceeded);
  EXPECT_EQ(Find(grew, "peak_bytes").delta, 6000);
  EXPECT_FALSE(Find(grew, "weights_bytes").exceeded);  // Unchanged.
  ASSERT_EQ(grew.figures.size(), 6u);
}

TEST(DiffTest, SizeThresholdFlagsGrowthPastIt) {
  const GrowthThreshold one_kib{.bytes = 1024};
  EXPECT_FALSE(DiffFigures(Figures(100000), Figures(101024), one_kib).exceeded);
  EXPECT_TRUE(DiffFigures(Figures(100000), Figures(101025), one_kib).exceeded);
}

TEST(DiffTest, ShrinkingPasses) {
  for (const GrowthThreshold& threshold : {GrowthThreshold{.percent = 0}, GrowthThreshold{.bytes = 0}}) {
    const ReportDiff diff = DiffFigures(Figures(100000), Figures(50000), threshold);
    EXPECT_FALSE(diff.exceeded);
    EXPECT_EQ(Find(diff, "peak_bytes").delta, -50000);
    EXPECT_DOUBLE_EQ(*Find(diff, "peak_bytes").delta_percent, -50.0);
  }
}

TEST(DiffTest, GrowthFromZeroAndNewUnsizedTensorsAreFlagged) {
  ReportFigures old_figures = Figures(100000);
  old_figures.weights_bytes = 0;
  const ReportDiff from_zero = DiffFigures(old_figures, Figures(100000), GrowthThreshold{.percent = 50});
  EXPECT_TRUE(Find(from_zero, "weights_bytes").exceeded);
  EXPECT_FALSE(Find(from_zero, "weights_bytes").delta_percent.has_value());
  const ReportDiff unsized = DiffFigures(Figures(100000), Figures(100000, 2), GrowthThreshold{.bytes = 1 << 20});
  EXPECT_TRUE(Find(unsized, "unsized_tensors").exceeded);
  EXPECT_TRUE(unsized.exceeded);
}

TEST(DiffTest, NoThresholdOnlyReports) {
  const ReportDiff diff = DiffFigures(Figures(1000), Figures(1000000), std::nullopt);
  EXPECT_FALSE(diff.exceeded);
  EXPECT_EQ(Find(diff, "peak_bytes").delta, 999000);
}

TEST(DiffTest, ReadsOnlyOurSchema) {
  EXPECT_FALSE(FiguresFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(FiguresFromJson(nlohmann::json{{"memory", nlohmann::json::object()}}).ok());
  nlohmann::json report = {{"schema_version", 2}, {"memory", nlohmann::json::object()}};
  EXPECT_NE(FiguresFromJson(report).status().message().find("schema_version 2"), std::string::npos);
  report["schema_version"] = 1;
  report["memory"] = {{"weights_bytes", 1}, {"arena_bytes", 2}, {"lower_bound_bytes", 2}, {"naive_bytes", 3},
                      {"peak_bytes", 3}, {"unsized_tensors", 0}};
  EXPECT_TRUE(FiguresFromJson(report).ok());
  report["memory"]["peak_bytes"] = "3";
  EXPECT_NE(FiguresFromJson(report).status().message().find("peak_bytes"), std::string::npos);
  report["memory"]["peak_bytes"] = -3;
  EXPECT_FALSE(FiguresFromJson(report).ok());
}

}  // namespace
}  // namespace footprint
