// FindDimClash (dim_ties.h): the dims a binding makes clash, as formulas,
// and the values of the one dim that decides them at which they agree.
#include <algorithm>
#include <optional>
#include <string>

#include "analyzer/shapes/dim_ties.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"

namespace footprint::symbolic {
namespace {

using ::footprint::testing::ModelBuilder;

// The clash at node `node_name` of `model`'s main graph (inferred unbound) at `values`.
std::optional<DimClash> ClashAt(const onnx::ModelProto& model, const std::string& node_name,
                                const SymbolValues& values) {
  absl::StatusOr<ShapeTables> tables = InferSymbolicShapes(model);
  EXPECT_TRUE(tables.ok()) << tables.status();
  if (!tables.ok()) return std::nullopt;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.name() == node_name) return FindDimClash(model.graph(), node, tables->graphs.at(&model.graph()), values);
  }
  return std::nullopt;
}

TEST(DimClashTest, PoolThenUpsampleNeedsAnEvenLength) {
  // x [1, 4, n] -> MaxPool 2 s2 (floor(n / 2)) -> Resize x2 -> Add(x, up):
  // n = 2 * floor(n / 2), so n must be even.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 4, "n"});
  onnx::NodeProto& pool = builder.Node("MaxPool", {"x"}, {"half"}, "pool");
  ::footprint::testing::SetInts(pool, "kernel_shape", {2});
  ::footprint::testing::SetInts(pool, "strides", {2});
  onnx::TensorProto* scales = builder.graph().add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(3);
  for (float scale : {1.0f, 1.0f, 2.0f}) scales->add_float_data(scale);
  builder.Add("Resize", {"half", "", "scales"}, {"up"}, "upsample");
  builder.Add("Add", {"x", "up"}, {"y"}, "join").Output("y");
  const onnx::ModelProto model = builder.Build();
  const std::optional<DimClash> clash = ClashAt(model, "join", {{"n", 101}});
  ASSERT_TRUE(clash.has_value());
  EXPECT_EQ(clash->a_value, 101);
  EXPECT_EQ(clash->b_value, 100);
  EXPECT_EQ(clash->symbol, "n");
  ASSERT_EQ(clash->agreeing.size(), 203u);  // 1 (its pool is empty), then 2, 4, ..., 404: up to 4 x 101.
  EXPECT_EQ(clash->agreeing[1], 2);
  EXPECT_EQ(clash->agreeing.back(), 404);
  EXPECT_EQ(clash->multiple, 2);
  EXPECT_FALSE(ClashAt(model, "join", {{"n", 100}}).has_value());  // They agree: no clash.
}

TEST(DimClashTest, StridedConvsAgreeOffTheMultiples) {
  // ceil(h / 2) = 2 * ceil(h / 4) holds at 480 and 483 but not 481 or 482:
  // candidates off the multiples of 4.
  const onnx::ModelProto model = ::footprint::testing::FpnAddModel().Build();
  const std::optional<DimClash> clash = ClashAt(model, "fpn_add", {{"height", 481}, {"width", 640}});
  ASSERT_TRUE(clash.has_value());
  EXPECT_EQ(clash->a_value, 241);
  EXPECT_EQ(clash->b_value, 242);
  EXPECT_EQ(clash->symbol, "height");
  EXPECT_TRUE(std::binary_search(clash->agreeing.begin(), clash->agreeing.end(), 480));
  EXPECT_TRUE(std::binary_search(clash->agreeing.begin(), clash->agreeing.end(), 483));
  EXPECT_FALSE(std::binary_search(clash->agreeing.begin(), clash->agreeing.end(), 482));
  EXPECT_FALSE(clash->multiple.has_value());
}

}  // namespace
}  // namespace footprint::symbolic
