// The reports of one analysis, read back: the JSON names each tensor's
// sharing and each mode's figures, the text has the modes table, and the
// HTML page draws one arena per tier.
#include "analyzer/report/report.h"

#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/html.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::MatMulChain;

AnalyzeOptions AllModes() { return {.optimize_schedule = true, .alias = true, .inplace = true}; }

TEST(ModesTest, JsonNamesTheOwnerAndEachModesFigures) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Reshape", {"shape"}, "Relu", {}), AllModes());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  const nlohmann::ordered_json json = AnalysisToJson(*analysis);
  const auto& tensors = json["tensors"];
  auto find = [&](const std::string& name) {
    for (const auto& t : tensors) {
      if (t["name"] == name) return t;
    }
    return nlohmann::ordered_json();
  };
  EXPECT_TRUE(find("a")["shares_with"].is_null());
  EXPECT_EQ(find("b")["shares_with"], "a");
  EXPECT_EQ(find("b")["sharing"], "alias");
  EXPECT_EQ(find("c")["shares_with"], "a");
  EXPECT_EQ(find("c")["sharing"], "inplace");
  EXPECT_EQ(json["options"]["schedule"], "optimized");
  EXPECT_EQ(json["memory"]["baseline"]["lower_bound_bytes"], 512);
  EXPECT_EQ(json["memory"]["lower_bound_bytes"], 320);
  EXPECT_EQ(json["modes"]["schedule"]["name"], "optimized");
  EXPECT_EQ(json["modes"]["schedule"]["saved_bytes"], 0);  // A chain has one order.
  EXPECT_EQ(json["modes"]["alias"]["saved_bytes"], 0);     // a and b alone: 320, 256, 512, 320.
  EXPECT_EQ(json["modes"]["inplace"]["saved_bytes"], 192);
  EXPECT_EQ(json["modes"]["inplace"]["tensors"], 1);
  const std::string text = RenderText(*analysis);
  EXPECT_NE(text.find("Modes (lower bound after each)"), std::string::npos) << text;
  EXPECT_NE(text.find("+ in-place"), std::string::npos) << text;
}

TEST(HtmlTest, TiersOfTodayIsTheOneArena) {
  Analysis analysis;
  analysis.memory.arena_bytes = 128;
  analysis.memory.lower_bound_bytes = 128;
  analysis.tensors = {TensorRecord{.name = "a", .bytes = 64, .aligned_bytes = 64, .offset = 0},
                      TensorRecord{.name = "b", .bytes = std::nullopt}};
  const std::vector<TierView> tiers = TiersOf(analysis);
  ASSERT_EQ(tiers.size(), 1u);
  EXPECT_EQ(tiers[0].name, "arena");
  EXPECT_EQ(tiers[0].size_bytes, 128);
  ASSERT_EQ(tiers[0].tensors.size(), 1u);
  EXPECT_EQ(tiers[0].tensors[0]->name, "a");
}

}  // namespace
}  // namespace footprint
