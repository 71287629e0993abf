// The default domain's shape functions (data propagation through the shape
// ops, convolutions and pools, data-dependent and unknown ops) and the input
// bindings, on graphs small enough to check by hand.
#include "analyzer/shapes/shape_engine.h"

#include "analyzer/shapes/shape_engine_test_util.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {
namespace {

using ::footprint::testing::ModelBuilder;

// --- Data propagation through the shape ops ---------------------------------

TEST(ShapeEngineTest, ReshapeToAComputedShapeKeepsSymbols) {
  // x: batch x seq x 768 -> Reshape(x, [batch, seq, 12, 64]) built from Shape.
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", "seq", 768})
      .Int64Initializer("i01", {0, 1})
      .Int64Initializer("heads", {12, 64})
      .Add("Shape", {"x"}, {"s"})
      .Add("Gather", {"s", "i01"}, {"bs"})
      .Add("Concat", {"bs", "heads"}, {"target"})
      .Add("Reshape", {"x", "target"}, {"y"})
      .Output("y");
  onnx::NodeProto& concat = builder.graph().mutable_node()->at(2);
  SetInt(concat, "axis", 0);
  Engine engine(builder);
  EXPECT_EQ(engine.Ints("s"), "batch,seq,768");
  EXPECT_EQ(engine.Ints("target"), "batch,seq,12,64");
  EXPECT_EQ(engine.Shape("y"), "batch,seq,12,64");
}

TEST(ShapeEngineTest, ReshapeZeroAndMinusOne) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", "seq", 768})
      .Int64Initializer("shape", {0, -1, 64})
      .Add("Reshape", {"x", "shape"}, {"y"})
      .Output("y");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("y"), "batch,12*seq,64");
}

TEST(ShapeEngineTest, ExpandConstantOfShapeRangeTileFromComputedShapes) {
  ModelBuilder builder;
  builder.Input("ids", kInt64, {2, 5})
      .Int64Initializer("one", {1})
      .Int64Initializer("reps", {3, 1})
      .Add("Shape", {"ids"}, {"s"})                 // [2, 5]
      .Add("ConstantOfShape", {"s"}, {"zeros"})     // 2x5 float
      .Add("Expand", {"one", "s"}, {"ones"})        // 2x5 int64
      .Add("Tile", {"ids", "reps"}, {"tiled"})      // 6x5
      .Add("ReduceMax", {"s"}, {"n"})               // [5] (keepdims on a 1-D: shape [1])
      .Output("tiled");
  ScalarInt(builder, "zero", 0);
  ScalarInt(builder, "step", 2);
  builder.Add("Squeeze", {"n"}, {"limit"}).Add("Range", {"zero", "limit", "step"}, {"r"}).Output("r");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("zeros"), "2,5");
  EXPECT_EQ(engine.Value("zeros").elem_type, kFloat);
  EXPECT_EQ(engine.Shape("ones"), "2,5");
  EXPECT_EQ(engine.Shape("tiled"), "6,5");
  EXPECT_EQ(engine.Ints("n"), "5");
  EXPECT_EQ(engine.Shape("r"), "3");  // 0, 2, 4.
  EXPECT_EQ(engine.Ints("r"), "0,2,4");
}

TEST(ShapeEngineTest, RangeOverASymbolicLengthIsAFormula) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"seq"}).Add("Shape", {"x"}, {"s"});
  ScalarInt(builder, "zero", 0);
  ScalarInt(builder, "idx", 0);
  ScalarInt(builder, "one", 1);
  builder.Add("Gather", {"s", "idx"}, {"len"}).Add("Range", {"zero", "len", "one"}, {"pos"}).Output("pos");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("pos"), "seq");
}

TEST(ShapeEngineTest, ArithmeticComparisonWhereAndCastPropagate) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", 16})
      .Int64Initializer("two", {2})
      .Int64Initializer("sixteen", {16})
      .Add("Shape", {"x"}, {"s"})
      .Add("Mul", {"s", "two"}, {"doubled"})        // [2*batch, 32]
      .Add("Equal", {"s", "sixteen"}, {"is16"})     // [?, 1]: batch vs 16 unknown
      .Add("Div", {"s", "two"}, {"halves"})         // [floor(batch/2), 8]
      .Add("Cast", {"doubled"}, {"as_float"})
      .Add("Cast", {"as_float"}, {"back"});
  SetInt(builder.graph().mutable_node()->at(4), "to", kFloat);
  SetInt(builder.graph().mutable_node()->at(5), "to", kInt64);
  builder.Int64Initializer("cond", {1, 0})
      .Int64Initializer("other", {7, 7})
      .Add("Cast", {"cond"}, {"cond_b"})
      .Add("Where", {"cond_b", "s", "other"}, {"picked"})
      .Output("picked");
  SetInt(builder.graph().mutable_node()->at(6), "to", kBool);
  Engine engine(builder);
  EXPECT_EQ(engine.Ints("doubled"), "2*batch,32");
  EXPECT_EQ(engine.Ints("is16"), "none");  // batch == 16 is not known.
  EXPECT_EQ(engine.Ints("halves"), "floor(batch/2),8");
  EXPECT_EQ(engine.Ints("back"), "none");  // Symbolic values do not survive a float cast.
  EXPECT_EQ(engine.Ints("picked"), "batch,7");
}

TEST(ShapeEngineTest, SliceSqueezeUnsqueezeAndSplit) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", "seq", 96})
      .Int64Initializer("starts", {1})
      .Int64Initializer("ends", {INT64_MAX})
      .Int64Initializer("axes", {1})
      .Int64Initializer("neg", {-4})
      .Int64Initializer("big", {1000})
      .Int64Initializer("axis2", {2})
      .Int64Initializer("ax0", {0})
      .Add("Slice", {"x", "starts", "ends", "axes"}, {"tail"})  // batch x seq-1 x 96
      .Add("Slice", {"x", "neg", "big", "axis2"}, {"last4"})    // batch x seq x 4
      .Add("Unsqueeze", {"x", "ax0"}, {"u"})                    // 1 x batch x seq x 96
      .Add("Squeeze", {"u", "ax0"}, {"sq"})
      .Add("Split", {"x"}, {"a", "b", "c"})
      .Output("tail");
  SetInt(builder.graph().mutable_node()->at(4), "axis", 2);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("tail"), "batch,seq-1,96");  // Dims are >= 1.
  EXPECT_EQ(engine.Shape("last4"), "batch,seq,4");
  EXPECT_EQ(engine.Shape("u"), "1,batch,seq,96");
  EXPECT_EQ(engine.Shape("sq"), "batch,seq,96");
  EXPECT_EQ(engine.Shape("b"), "batch,seq,32");
}

TEST(ShapeEngineTest, ResizeWithScalesAndComputedSizes) {
  ModelBuilder builder;
  builder.Input("img", kFloat, {1, 3, "h", "w"}).Input("fixed", kFloat, {1, 3, 20, 30});
  FloatInitializer(builder, "scales", {1, 1, 2, 0.5});
  FloatInitializer(builder, "roi", {});
  builder.Add("Resize", {"img", "roi", "scales"}, {"scaled"})
      .Add("Resize", {"fixed", "roi", "scales"}, {"scaled_fixed"})
      .Add("Shape", {"img"}, {"s"})
      .Add("Resize", {"fixed", "", "", "s"}, {"sized"})
      .Output("sized");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("scaled"), "1,3,2*h,floor(w/2)");
  EXPECT_EQ(engine.Shape("scaled_fixed"), "1,3,40,15");
  EXPECT_EQ(engine.Shape("sized"), "1,3,h,w");
}

TEST(ShapeEngineTest, Float16ScalesAreRead) {
  // fp16 models: scales {1, 1, 2, 0.5} stored as half floats, cast to float.
  ModelBuilder builder;
  builder.Input("img", kFloat16, {1, 3, 10, 10});
  onnx::TensorProto* scales = builder.graph().add_initializer();
  scales->set_name("scales16");
  scales->set_data_type(kFloat16);
  scales->add_dims(4);
  for (uint16_t bits : {0x3C00, 0x3C00, 0x4000, 0x3800}) scales->add_int32_data(bits);  // 1, 1, 2, 0.5.
  builder.Add("Cast", {"scales16"}, {"scales"}).Add("Resize", {"img", "", "scales"}, {"out"}).Output("out");
  SetInt(builder.graph().mutable_node()->at(0), "to", kFloat);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("out"), "1,3,20,5");
}

TEST(ShapeEngineTest, ConvAndPoolOnSymbolicImages) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"n", 3, "h", "w"})
      .Initializer("weight", kFloat, {16, 3, 3, 3})
      .Add("Conv", {"x", "weight"}, {"conv"})
      .Add("MaxPool", {"conv"}, {"pool"})
      .Output("pool");
  SetInts(builder.graph().mutable_node()->at(0), "strides", {2, 2});
  SetInts(builder.graph().mutable_node()->at(0), "pads", {1, 1, 1, 1});
  SetInts(builder.graph().mutable_node()->at(1), "kernel_shape", {2, 2});
  SetInts(builder.graph().mutable_node()->at(1), "strides", {2, 2});
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("conv"), "n,16,floor((h-1)/2)+1,floor((w-1)/2)+1");
  EXPECT_EQ(engine.Shape("pool"), "n,16,floor((floor((h-1)/2)-1)/2)+1,floor((floor((w-1)/2)-1)/2)+1");
}

TEST(ShapeEngineTest, OtherOpsGoToOnnxWithOurShapes) {
  // MatMul and Softmax have no function of ours: ONNX's run on the symbolic shapes.
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", "seq", 64})
      .Initializer("w", kFloat, {64, 128})
      .Add("MatMul", {"x", "w"}, {"y"})
      .Add("Transpose", {"y"}, {"t"})
      .Output("t");
  SetInts(builder.graph().mutable_node()->at(1), "perm", {2, 0, 1});
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("y"), "batch,seq,128");
  EXPECT_EQ(engine.Shape("t"), "128,batch,seq");
}

TEST(ShapeEngineTest, DataDependentAndUnknownOpsSayWhy) {
  ModelBuilder builder;
  builder.Opset("custom.domain", 1)
      .Input("x", kFloat, {4, 4})
      .Add("NonZero", {"x"}, {"nz"})
      .Output("nz");
  onnx::NodeProto& custom = builder.Node("Mystery", {"x"}, {"m"});
  custom.set_domain("custom.domain");
  builder.Output("m");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("nz"), "2,?");
  EXPECT_NE(engine.Value("nz").reason.find("data-dependent"), std::string::npos);
  EXPECT_NE(engine.Value("m").reason.find("no shape function for op custom.domain.Mystery"), std::string::npos);
}

// --- Input bindings -------------------------------------------------------------

TEST(InputBindingsTest, InputShapeAndDimDefault) {
  ModelBuilder builder;
  builder.Input("image", kFloat, {"n", 3, "", ""}).Input("mask", kFloat, {"n", "len"}).Output("image", kFloat,
                                                                                            {"n", 3, "", ""});
  builder.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->clear_dim_param();
  builder.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(3)->clear_dim_param();
  onnx::ModelProto model = builder.Build();
  ASSERT_TRUE(ApplyInputBindings({.input_shapes = {{"image", {2, 3, 224, 224}}}, .dim_default = 7}, model).ok());
  auto dims = [&](int input) {
    std::vector<int64_t> out;
    for (const auto& d : model.graph().input(input).type().tensor_type().shape().dim()) out.push_back(d.dim_value());
    return out;
  };
  EXPECT_EQ(dims(0), (std::vector<int64_t>{2, 3, 224, 224}));
  EXPECT_EQ(dims(1), (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(model.graph().output(0).type().tensor_type().shape().dim(0).dim_value(), 7);  // "n" defaulted.
}

TEST(InputBindingsTest, ErrorsNameTheInput) {
  ModelBuilder builder;
  builder.Input("image", kFloat, {1, 3, "h", "w"});
  onnx::ModelProto model = builder.Build();
  absl::Status unknown = ApplyInputBindings({.input_shapes = {{"img", {1, 3, 2, 2}}}}, model);
  EXPECT_NE(unknown.message().find("no graph input named 'img' (inputs: image)"), std::string::npos) << unknown;
  absl::Status rank = ApplyInputBindings({.input_shapes = {{"image", {3, 2, 2}}}}, model);
  EXPECT_NE(rank.message().find("rank 4"), std::string::npos) << rank;
  absl::Status fixed = ApplyInputBindings({.input_shapes = {{"image", {2, 3, 2, 2}}}}, model);
  EXPECT_NE(fixed.message().find("fixed at 1"), std::string::npos) << fixed;
  EXPECT_EQ(ParseShapeText("1x3x224x224"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(ParseShapeText("scalar"), std::vector<int64_t>{});
  EXPECT_FALSE(ParseShapeText("1x-3").has_value());
}

}  // namespace
}  // namespace footprint::symbolic::engine_test
