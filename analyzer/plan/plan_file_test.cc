// The plan file: what PlanFromAnalysis takes from an analysis, the JSON
// round trip and its refusals, and the C header (the CLI's --emit-plan and
// replay: cli/plan_cli_test.cc).
#include "analyzer/plan/plan_file.h"

#include <fstream>

#include "absl/strings/match.h"
#include "analyzer/plan/plan_test_util.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::ModesOptions;
using ::footprint::testing::SharingModel;

constexpr int kFloat = onnx::TensorProto::FLOAT;

TEST(PlanFromAnalysis, CarriesOffsetsStepsAndSharingOfTheAnalysis) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(SharingModel(), ModesOptions(true));
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(*analysis, "mx64:0");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->schedule, analysis->schedule);
  ASSERT_EQ(plan->tiers.size(), 1u);
  EXPECT_EQ(plan->tiers[0].arena_bytes, analysis->memory.arena_bytes);
  EXPECT_EQ(plan->tiers[0].alignment, 64);
  ASSERT_EQ(plan->tensors.size(), analysis->tensors.size());
  for (size_t id = 0; id < plan->tensors.size(); ++id) {
    const TensorRecord& record = analysis->tensors[id];
    const PlanTensor& tensor = plan->tensors[id];
    EXPECT_EQ(tensor.name, record.name);
    EXPECT_EQ(tensor.offset, *record.tier_offset);
    EXPECT_EQ(tensor.size, *record.bytes);
    EXPECT_EQ(tensor.aligned_size, record.aligned_bytes);
    EXPECT_EQ(tensor.first_step, record.first_step);
    EXPECT_EQ(tensor.last_step, record.last_step);
    EXPECT_EQ(tensor.shares_with, record.shares_with_index);
    EXPECT_EQ(tensor.sharing, record.sharing);
  }
  EXPECT_EQ(FindTensor(*analysis, "b").sharing, "alias");
  EXPECT_EQ(FindTensor(*analysis, "c").sharing, "inplace");
}

TEST(PlanFromAnalysis, RefusesUnsizedTensorsNamingThemAndTheFlag) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {std::string("batch"), 8}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(*analysis, "mx64:0");
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "'x'")) << plan.status();
  EXPECT_TRUE(absl::StrContains(plan.status().message(), "--dim")) << plan.status();
}

TEST(PlanJson, RoundTrips) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(SharingModel(), ModesOptions(true));
  ASSERT_TRUE(analysis.ok());
  absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(*analysis, "mx64:0123456789abcdef");
  ASSERT_TRUE(plan.ok());
  const std::string text = RenderPlanJson(*plan);
  absl::StatusOr<ArenaPlan> back = ParsePlanJson(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(RenderPlanJson(*back), text);
  const nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["plan_version"], kPlanVersion);
  EXPECT_EQ(json["model"]["hash"], "mx64:0123456789abcdef");
  EXPECT_EQ(json["options"]["alias"], true);
}

TEST(PlanJson, RefusesMalformedPlansNamingTheField) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(SharingModel(), ModesOptions(true));
  ASSERT_TRUE(analysis.ok());
  const nlohmann::json good = nlohmann::json::parse(RenderPlanJson(*PlanFromAnalysis(*analysis, "mx64:0")));
  const auto refused = [&](auto edit, const std::string& expected) {
    nlohmann::json bad = good;
    edit(bad);
    absl::StatusOr<ArenaPlan> plan = ParsePlanJson(bad.dump());
    ASSERT_FALSE(plan.ok()) << expected;
    EXPECT_TRUE(absl::StrContains(plan.status().message(), expected)) << plan.status();
  };
  refused([](nlohmann::json& j) { j["plan_version"] = 2; }, "plan_version 2 is not supported");
  refused([](nlohmann::json& j) { j.erase("tiers"); }, "tiers");
  refused([](nlohmann::json& j) { j["tensors"][1]["offset"] = -64; }, "tensors[1].offset");
  refused([](nlohmann::json& j) { j["tensors"][1]["offset"] = "zero"; }, "tensors[1].offset: expected an integer");
  refused([](nlohmann::json& j) { j["tensors"][0]["tier"] = "flash"; }, "no tier named 'flash'");
  refused([](nlohmann::json& j) { j["tensors"][0]["last_step"] = 99; }, "past the schedule");
  refused([](nlohmann::json& j) { j["tensors"][0]["id"] = 5; }, "tensors[0].id");
  EXPECT_FALSE(ParsePlanJson("{not json").ok());
  EXPECT_FALSE(ParsePlanJson("[]").ok());
}

TEST(PlanHeader, HasTheFactsAsConstantsAndTables) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(SharingModel(), ModesOptions(true));
  ASSERT_TRUE(analysis.ok());
  const std::string header = RenderPlanHeader(*PlanFromAnalysis(*analysis, "mx64:0"), "my-plan");
  EXPECT_TRUE(absl::StrContains(header, "#ifndef FP_PLAN_MY_PLAN_H_")) << header;
  EXPECT_TRUE(absl::StrContains(header, absl::StrCat("#define FP_ARENA_SIZE_ARENA ", analysis->memory.arena_bytes, "u"))) << header;
  EXPECT_TRUE(absl::StrContains(header, "FP_T_X = 0"));
  EXPECT_TRUE(absl::StrContains(header, "static const size_t fp_tensor_offset["));
  EXPECT_TRUE(absl::StrContains(header, "\"relu0\""));
  EXPECT_FALSE(absl::StrContains(header, "#include <string"));
}

TEST(ModelHash, ChangesWithAnyByteAndNamesAnUnreadableFile) {
  const std::string dir = ::testing::TempDir();
  std::string bytes(100001, 'x');
  const auto hash_of = [&](const std::string& contents) {
    const std::string path = dir + "/hash_me.onnx";
    std::ofstream(path, std::ios::binary) << contents;
    return *ModelHash(path);
  };
  const std::string original = hash_of(bytes);
  EXPECT_TRUE(absl::StartsWith(original, "mx64:")) << original;
  EXPECT_EQ(hash_of(bytes), original);
  for (size_t at : {size_t{0}, size_t{31}, size_t{65536}, size_t{100000}}) {
    std::string changed = bytes;
    changed[at] = 'y';
    EXPECT_NE(hash_of(changed), original) << at;
  }
  EXPECT_NE(hash_of(bytes + '\0'), original);  // The length counts too.
  absl::StatusOr<std::string> missing = ModelHash(dir + "/no_such.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "no_such.onnx"));
}

TEST(PlanHeader, NamesThatClashOrBreakCommentsStayValidC) {
  ArenaPlan plan;
  plan.model_path = "models/*/x.onnx";  // "*/" would end the header's comment.
  plan.model_hash = "mx64:0";
  plan.schedule = {"n?\"0\\"};
  plan.tiers = {{.name = "l2-ram", .arena_bytes = 64, .alignment = 64}, {.name = "l2_ram", .arena_bytes = 0, .alignment = 64}};
  plan.tensors = {{.name = "a.b", .size = 4, .aligned_size = 64}, {.name = "a/b", .size = 4, .aligned_size = 64}};
  const std::string header = RenderPlanHeader(plan, "clash");
  EXPECT_TRUE(absl::StrContains(header, "models/* /x.onnx")) << header;
  EXPECT_TRUE(absl::StrContains(header, "#define FP_ARENA_SIZE_L2_RAM 64u")) << header;
  EXPECT_TRUE(absl::StrContains(header, "#define FP_ARENA_SIZE_L2_RAM_1 0u")) << header;
  EXPECT_TRUE(absl::StrContains(header, "FP_T_A_B = 0")) << header;
  EXPECT_TRUE(absl::StrContains(header, "FP_T_A_B_1 = 1")) << header;
  EXPECT_TRUE(absl::StrContains(header, "\"n\\077\\\"0\\\\\"")) << header;  // '?' (trigraphs) in octal.
}

TEST(CIdentifier, SanitizesNames) {
  EXPECT_EQ(CIdentifier("conv1/Relu:0"), "CONV1_RELU_0");
  EXPECT_EQ(CIdentifier(""), "_");
}

}  // namespace
}  // namespace footprint
