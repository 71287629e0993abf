// The attribute lookups (onnx_attributes.h) and the op semantics built on
// them (onnx_ops.h): missing attributes, attributes of another type,
// duplicates, and the graphs a node holds.
#include "analyzer/loader/onnx_attributes.h"

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/loader/onnx_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

onnx::AttributeProto& Add(onnx::NodeProto& node, const std::string& name) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  return *attribute;
}

// A Conv with group=2 (int), pads=[1,1,1,1] (ints), auto_pad="NOTSET"
// (string), alpha=0.5 (float), and "odd", an int attribute holding a float.
onnx::NodeProto Conv() {
  onnx::NodeProto node;
  node.set_op_type("Conv");
  Add(node, "group").set_i(2);
  onnx::AttributeProto& pads = Add(node, "pads");
  for (int64_t pad : {1, 1, 1, 1}) pads.add_ints(pad);
  Add(node, "auto_pad").set_s("NOTSET");
  Add(node, "alpha").set_f(0.5f);
  Add(node, "odd").set_f(3.0f);
  return node;
}

TEST(OnnxAttributesTest, FindsTheAttributeByName) {
  onnx::NodeProto node;
  Add(node, "group").set_i(2);
  Add(node, "kernel_shape");
  Add(node, "pads");
  const onnx::NodeProto& read = node;
  ASSERT_NE(FindAttribute(read, "group"), nullptr);
  EXPECT_EQ(FindAttribute(read, "group")->i(), 2);
  EXPECT_EQ(FindAttribute(read, "pads"), &read.attribute(2));
  EXPECT_EQ(FindAttribute(read, "strides"), nullptr);
  EXPECT_EQ(FindAttribute(read, ""), nullptr);
}

TEST(OnnxAttributesTest, MutableLookupChangesTheNode) {
  onnx::NodeProto node;
  Add(node, "axis").set_i(1);
  onnx::AttributeProto* axis = FindAttribute(node, "axis");
  ASSERT_NE(axis, nullptr);
  axis->set_i(3);
  EXPECT_EQ(node.attribute(0).i(), 3);
  EXPECT_EQ(FindAttribute(node, "perm"), nullptr);
}

TEST(OnnxAttributesTest, ReadsTheFirstOfTwoAttributesOfOneName) {
  onnx::NodeProto node;
  Add(node, "axis").set_i(1);
  Add(node, "axis").set_i(2);
  EXPECT_EQ(IntAttribute(node, "axis", 0), 1);
  EXPECT_THAT(OptionalIntAttribute(node, "axis"), Optional(1));
}

TEST(OnnxAttributesTest, TypedReadsFallBackOnlyWhenTheAttributeIsMissing) {
  const onnx::NodeProto node = Conv();
  EXPECT_EQ(IntAttribute(node, "group", 1), 2);
  EXPECT_EQ(IntAttribute(node, "missing", 7), 7);
  EXPECT_EQ(IntAttribute(node, "odd", 7), 0);  // Present, holding no int.
  EXPECT_EQ(FloatAttribute(node, "alpha", 1.0f), 0.5f);
  EXPECT_EQ(FloatAttribute(node, "missing", 1.0f), 1.0f);
  EXPECT_EQ(FloatAttribute(node, "group", 1.0f), 0.0f);
  EXPECT_EQ(StringAttribute(node, "auto_pad"), "NOTSET");
  EXPECT_EQ(StringAttribute(node, "missing"), "");
  EXPECT_EQ(StringAttribute(node, "missing", "nearest"), "nearest");
  EXPECT_EQ(StringAttribute(node, "group", "nearest"), "");
  EXPECT_THAT(IntsAttribute(node, "pads"), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(IntsAttribute(node, "missing"), IsEmpty());
  EXPECT_THAT(IntsAttribute(node, "group"), IsEmpty());
}

TEST(OnnxAttributesTest, OptionalReadsAreEmptyWhenMissingOrOfAnotherType) {
  const onnx::NodeProto node = Conv();
  EXPECT_THAT(OptionalIntAttribute(node, "group"), Optional(2));
  EXPECT_EQ(OptionalIntAttribute(node, "missing"), std::nullopt);
  EXPECT_EQ(OptionalIntAttribute(node, "odd"), std::nullopt);
  EXPECT_THAT(OptionalFloatAttribute(node, "alpha"), Optional(0.5f));
  EXPECT_EQ(OptionalFloatAttribute(node, "group"), std::nullopt);
  EXPECT_THAT(OptionalStringAttribute(node, "auto_pad"), Optional(std::string("NOTSET")));
  EXPECT_EQ(OptionalStringAttribute(node, "group"), std::nullopt);
  EXPECT_THAT(OptionalIntsAttribute(node, "pads"), Optional(ElementsAre(1, 1, 1, 1)));
  EXPECT_EQ(OptionalIntsAttribute(node, "missing"), std::nullopt);
  EXPECT_THAT(OptionalIntsAttribute(node, "group"), Optional(IsEmpty()));  // A list has no presence.
}

TEST(OnnxAttributesTest, ZeroIsAValueNotAMissingOne) {
  onnx::NodeProto node;
  Add(node, "keepdims").set_i(0);
  EXPECT_EQ(IntAttribute(node, "keepdims", 1), 0);
  EXPECT_THAT(OptionalIntAttribute(node, "keepdims"), Optional(0));
}

TEST(OnnxAttributesTest, TensorAttributeNeedsATensor) {
  onnx::NodeProto constant;
  constant.set_op_type("Constant");
  Add(constant, "value").mutable_t()->add_dims(3);
  Add(constant, "value_float").set_f(1.0f);
  ASSERT_NE(TensorAttribute(constant, "value"), nullptr);
  EXPECT_THAT(TensorAttribute(constant, "value")->dims(), ElementsAre(3));
  EXPECT_EQ(TensorAttribute(constant, "value_float"), nullptr);
  EXPECT_EQ(TensorAttribute(constant, "sparse_value"), nullptr);
}

TEST(OnnxAttributesTest, BodiesInAttributeOrderGraphBeforeGraphList) {
  onnx::NodeProto node;
  node.set_op_type("Custom");
  Add(node, "alpha").set_f(1.0f);
  onnx::AttributeProto& first = Add(node, "then_branch");
  first.mutable_g()->set_name("a");
  first.add_graphs()->set_name("b");
  Add(node, "bodies").add_graphs()->set_name("c");
  Add(node, "else_branch").mutable_g()->set_name("d");
  std::vector<std::string> names;
  for (const onnx::GraphProto* body : BodiesOf(node)) names.push_back(body->name());
  EXPECT_THAT(names, ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(BodiesOf(Conv()), IsEmpty());
}

onnx::NodeProto BatchNorm(const std::string& domain) {
  onnx::NodeProto node;
  node.set_op_type("BatchNormalization");
  node.set_domain(domain);
  return node;
}

TEST(OnnxOpsTest, InferenceBatchNormIsOnnxsWithoutTrainingMode) {
  EXPECT_TRUE(IsInferenceBatchNorm(BatchNorm("")));
  EXPECT_TRUE(IsInferenceBatchNorm(BatchNorm("ai.onnx")));
  EXPECT_FALSE(IsInferenceBatchNorm(BatchNorm("com.example")));
  onnx::NodeProto off = BatchNorm("");
  Add(off, "training_mode").set_i(0);
  EXPECT_TRUE(IsInferenceBatchNorm(off));
  onnx::NodeProto training = BatchNorm("");
  Add(training, "epsilon").set_f(1e-3f);
  Add(training, "training_mode").set_i(1);
  EXPECT_FALSE(IsInferenceBatchNorm(training));
  onnx::NodeProto conv = Conv();
  EXPECT_FALSE(IsInferenceBatchNorm(conv));
}

}  // namespace
}  // namespace footprint
