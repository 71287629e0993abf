// The targets' tables and the orchestrator that runs one (targets.h): each
// table as it reads top to bottom (testdata/targets.txt beside the code),
// what each target registers, and which rows run on which graphs.
#include "analyzer/runtimes/onnxruntime/targets.h"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "analyzer/testing/model_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint::ort {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

// Every target's rows as the file testdata/targets.txt lists them: the pass,
// its stage, its source, and the condition it runs under.
std::string DescribeTables() {
  std::string out;
  for (const Target* target : AllTargets()) {
    absl::StrAppend(&out, target->name, " (NCHWc block ", target->facts.nchwc_block,
                    target->facts.int8_qdq ? ", int8 QDQ fused as is" : ", int8 QDQ made uint8 first", ")\n");
    int row_number = 0;
    for (const PassRow* row : RegisteredRows(*target)) {
      absl::StrAppend(&out, "  ", ++row_number, ". ", row->pass->name, "  [", OrtStageName(row->pass->stage), "]\n",
                      "     ", row->pass->source, "\n");
      if (row->registered != nullptr) absl::StrAppend(&out, "     registered ", row->registered->says, "\n");
      if (row->runs != nullptr) absl::StrAppend(&out, "     runs when ", row->runs->says, "\n");
    }
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TargetsTest, EachTableReadsAsTheGoldenFileSays) {
  const std::string path = std::string(FOOTPRINT_TARGETS_GOLDEN);
  const std::string tables = DescribeTables();
  if (const char* update = std::getenv("FOOTPRINT_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << tables;
  }
  EXPECT_EQ(ReadFile(path), tables) << "the tables changed: FOOTPRINT_UPDATE_GOLDEN=1 rewrites " << path;
}

std::vector<const Pass*> Registered(const Target& target) {
  std::vector<const Pass*> passes;
  for (const PassRow* row : RegisteredRows(target)) passes.push_back(row->pass);
  return passes;
}

TEST(TargetsTest, OnlyX86RegistersNchwcAndTheInt8ToUint8Pairs) {
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    EXPECT_THAT(Registered(CpuTarget(isa)), Contains(&kNchwcTransformer));
    EXPECT_THAT(Registered(CpuTarget(isa)), Contains(&kQdqS8ToU8));
  }
  EXPECT_THAT(Registered(CpuTarget(CpuIsa::kArm64)), Not(Contains(&kNchwcTransformer)));
  EXPECT_THAT(Registered(CpuTarget(CpuIsa::kArm64)), Not(Contains(&kQdqS8ToU8)));
  EXPECT_EQ(CpuTarget(CpuIsa::kAvx2).facts.nchwc_block, 8);
  EXPECT_EQ(CpuTarget(CpuIsa::kAvx512).facts.nchwc_block, 16);
}

// The rows that ran on `model` for `target`, by name, and what they made.
struct Ran {
  std::vector<std::string> passes;
  GraphRewrite rewrite;
  std::vector<PassRecord> trace;
};

Ran RunTable(const onnx::ModelProto& model, const Target& target) {
  absl::StatusOr<IrGraph> graph = BuildIrGraph(model.graph(), {});
  EXPECT_TRUE(graph.ok()) << graph.status();
  Ran ran;
  if (!graph.ok()) return ran;
  ShapeLookup shape_of = [&model](const std::string& name) -> std::optional<ValueShape> {
    for (const auto* infos : {&model.graph().input(), &model.graph().output(), &model.graph().value_info()}) {
      for (const onnx::ValueInfoProto& info : *infos) {
        if (info.name() != name) continue;
        ValueShape shape{.data_type = info.type().tensor_type().elem_type()};
        for (const onnx::TensorShapeProto::Dimension& dim : info.type().tensor_type().shape().dim()) {
          shape.dims.push_back(dim.dim_value());
        }
        return shape;
      }
    }
    return std::nullopt;
  };
  ran.rewrite = RunPasses(target, {.ir_version = model.ir_version(), .opset = 17, .shape_of = shape_of}, *graph,
                          &ran.trace);
  for (const PassRecord& record : ran.trace) ran.passes.push_back(std::string(record.pass->name));
  return ran;
}

TEST(TargetsTest, ARefusingPassEndsTheTable) {
  ModelBuilder relu;
  relu.Input("x", onnx::TensorProto::BFLOAT16, {1, 16}).Node("Relu", {"x"}, {"y"}, "relu");
  relu.Output("y", onnx::TensorProto::BFLOAT16, {1, 16});
  const Ran ran = RunTable(relu.Build(), CpuTarget(CpuIsa::kAvx512));
  ASSERT_FALSE(ran.trace.empty());
  EXPECT_EQ(ran.trace.back().pass, &kBfloat16WithoutKernel);
  EXPECT_NE(ran.rewrite.refused.find("no bfloat16 kernel for Relu"), std::string::npos) << ran.rewrite.refused;
}

TEST(TargetsTest, TheRowsAfterTheCastsRunOnlyWhenAWeightWasConvertedAtLoad) {
  // A float32 Conv: no Cast, so levels 2 and 3 run once, and the rows that
  // rerun them after the Casts do not.
  ModelBuilder float32;
  float32.Input("x", onnx::TensorProto::FLOAT, {1, 16, 8, 8}).Initializer("w", onnx::TensorProto::FLOAT, {16, 16, 1, 1});
  float32.Node("Conv", {"x", "w"}, {"c"}, "conv");
  float32.Node("Relu", {"c"}, {"y"}, "relu");
  float32.Output("y", onnx::TensorProto::FLOAT, {1, 16, 8, 8});
  const Ran plain = RunTable(float32.Build(), CpuTarget(CpuIsa::kAvx512));
  EXPECT_THAT(plain.passes, Contains(std::string(kNchwcTransformer.name)));
  EXPECT_THAT(plain.passes, Not(Contains(std::string(kConvFusionsAfterCasts.name))));
  // The same in float16 with a constant weight read once: converted at
  // load, so ORT runs level 2 again (the Conv takes its Relu in then) and 3.
  ModelBuilder float16;
  float16.Input("x", onnx::TensorProto::FLOAT16, {1, 16, 8, 8})
      .Initializer("w", onnx::TensorProto::FLOAT16, {16, 16, 1, 1});
  float16.Node("Conv", {"x", "w"}, {"c"}, "conv");
  float16.Node("Relu", {"c"}, {"y"}, "relu");
  float16.Output("y", onnx::TensorProto::FLOAT16, {1, 16, 8, 8});
  const Ran converted = RunTable(float16.Build(), CpuTarget(CpuIsa::kAvx512));
  EXPECT_THAT(converted.passes, Contains(std::string(kConvFusionsAfterCasts.name)));
  EXPECT_THAT(converted.passes, Contains(std::string(kNchwcTransformer.name)));
}

TEST(TargetsTest, TheRewritesCountsAreTheSumOfWhatEachPassSaysItChanged) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 16, 8, 8}).Initializer("w", onnx::TensorProto::FLOAT, {16, 16, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Node("Relu", {"c"}, {"r"}, "relu");
  builder.Node("Add", {"r", "x"}, {"y"}, "add");
  builder.Output("y", onnx::TensorProto::FLOAT, {1, 16, 8, 8});
  for (const Target* target : AllTargets()) {
    const Ran ran = RunTable(builder.Build(), *target);
    int64_t fused = 0, layout = 0, reorder = 0;
    for (const PassRecord& record : ran.trace) {
      fused += record.change.fused_nodes;
      layout += record.change.layout_nodes;
      reorder += record.change.reorder_nodes;
    }
    EXPECT_EQ(ran.rewrite.fused_nodes, fused) << target->name;
    EXPECT_EQ(ran.rewrite.layout_nodes, layout) << target->name;
    EXPECT_EQ(ran.rewrite.reorder_nodes, reorder) << target->name;
    EXPECT_GT(fused, 0) << target->name;  // The Relu at least.
  }
}

TEST(TargetsTest, TheOrchestratorRunsEveryRegisteredRowOfAFloatGraphInOrder) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 4}).Node("Neg", {"x"}, {"y"}, "neg");
  builder.Output("y", onnx::TensorProto::FLOAT, {1, 4});
  const Ran ran = RunTable(builder.Build(), CpuTarget(CpuIsa::kArm64));
  // No Casts: every registered row but the two that run level 2 again after them.
  std::vector<std::string> expected;
  for (const PassRow* row : RegisteredRows(CpuTarget(CpuIsa::kArm64))) {
    const bool after_casts = row->pass == &kConvFusionsAfterCasts || (row->pass == &kQuickGeluFusion && row->runs);
    if (!after_casts) expected.push_back(std::string(row->pass->name));
  }
  EXPECT_EQ(ran.passes, expected);
  EXPECT_THAT(ran.passes.front(), std::string(kOverridableInitializers.name));
  EXPECT_THAT(ran.passes.back(), std::string(kShapesOrtCannotInfer.name));
}

}  // namespace
}  // namespace footprint::ort
