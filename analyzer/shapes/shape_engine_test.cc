// Each op family's shape function and each control-flow case, on graphs
// small enough to check by hand. Shapes print as "batch,12" ("?" for an
// unknown dim, "unranked" for an unknown rank).
#include "analyzer/shapes/shape_engine.h"

#include "absl/strings/str_join.h"
#include "analyzer/shapes/shapes.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::symbolic {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::TensorType;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;
constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
void SetInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void SetGraph(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
}
void FloatInitializer(ModelBuilder& builder, const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto* t = builder.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kFloat);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}
void ScalarInt(ModelBuilder& builder, const std::string& name, int64_t value, int32_t type = kInt64) {
  onnx::TensorProto* t = builder.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  if (type == kInt64) {
    t->add_int64_data(value);
  } else {
    t->add_int32_data(static_cast<int32_t>(value));
  }
}
onnx::ValueInfoProto Info(const std::string& name, int32_t type, const std::vector<footprint::testing::TestDim>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  *info.mutable_type() = TensorType(type, dims);
  return info;
}

class Engine {
 public:
  explicit Engine(const ModelBuilder& builder) : model_(builder.Build()) { tables_ = *InferSymbolicShapes(model_); }
  const SymValue& Value(const std::string& name, const onnx::GraphProto* graph = nullptr) const {
    const GraphShapes& shapes = tables_.graphs.at(graph == nullptr ? &model_.graph() : graph);
    const SymValue* value = shapes.Find(name);
    if (value == nullptr) {
      ADD_FAILURE() << "no value " << name;
      static const SymValue kMissing;
      return kMissing;
    }
    return *value;
  }
  std::string Shape(const std::string& name, const onnx::GraphProto* graph = nullptr) const {
    const SymValue& v = Value(name, graph);
    if (!v.shape.has_value()) return "unranked";
    return absl::StrJoin(*v.shape, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
  }
  std::string Ints(const std::string& name) const {
    const SymValue& v = Value(name);
    if (!v.ints.has_value()) return "none";
    return absl::StrJoin(*v.ints, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
  }
  const onnx::ModelProto& model() const { return model_; }

 private:
  onnx::ModelProto model_;
  ShapeTables tables_;
};

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

// --- com.microsoft ------------------------------------------------------------

ModelBuilder ContribBuilder() {
  ModelBuilder builder;
  builder.Opset("com.microsoft", 1);
  return builder;
}
onnx::NodeProto& Contrib(ModelBuilder& builder, const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto& node = builder.Node(op, inputs, outputs);
  node.set_domain("com.microsoft");
  return node;
}

TEST(ContribShapeTest, AttentionWithPast) {
  ModelBuilder builder = ContribBuilder();
  builder.Input("x", kFloat, {"b", "s", 32})
      .Initializer("w", kFloat, {32, 96})
      .Initializer("bias", kFloat, {96})
      .Input("mask", kInt32, {"b", "t"})
      .Input("past", kFloat, {2, "b", 4, "p", 8});
  SetInt(Contrib(builder, "Attention", {"x", "w", "bias", "mask", "past"}, {"out", "present"}), "num_heads", 4);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("out"), "b,s,32");
  EXPECT_EQ(engine.Shape("present"), "2,b,4,p+s,8");
}

TEST(ContribShapeTest, MultiHeadAttentionGrowsTheCache) {
  ModelBuilder builder = ContribBuilder();
  builder.Input("q", kFloat16, {"b", "s", 64})
      .Input("k", kFloat16, {"b", "s", 64})
      .Input("v", kFloat16, {"b", "s", 64})
      .Input("pk", kFloat16, {"b", 4, "p", 16})
      .Input("pv", kFloat16, {"b", 4, "p", 16});
  SetInt(Contrib(builder, "MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"}, {"out", "ck", "cv"}),
         "num_heads", 4);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("out"), "b,s,64");
  EXPECT_EQ(engine.Shape("ck"), "b,4,p+s,16");
  EXPECT_EQ(engine.Shape("cv"), "b,4,p+s,16");
  EXPECT_EQ(engine.Value("out").elem_type, kFloat16);
}

TEST(ContribShapeTest, GroupQueryAttentionTakesTheLargerOfPastAndTotal) {
  ModelBuilder builder = ContribBuilder();
  builder.Input("q", kFloat16, {2, 3, 64})
      .Input("k", kFloat16, {2, 3, 32})
      .Input("v", kFloat16, {2, 3, 32})
      .Input("pk", kFloat16, {2, 2, 5, 16})
      .Input("pv", kFloat16, {2, 2, 5, 16})
      .Input("seqlens", kInt32, {2});
  ScalarInt(builder, "total", 8, kInt32);
  onnx::NodeProto& gqa =
      Contrib(builder, "GroupQueryAttention", {"q", "k", "v", "pk", "pv", "seqlens", "total"}, {"out", "ck", "cv"});
  SetInt(gqa, "num_heads", 4);
  SetInt(gqa, "kv_num_heads", 2);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("out"), "2,3,64");
  EXPECT_EQ(engine.Shape("ck"), "2,2,8,16");
}

TEST(ContribShapeTest, NormsEmbeddingsActivationsAndMatMulNBits) {
  ModelBuilder builder = ContribBuilder();
  builder.Input("x", kFloat, {"b", "s", 32})
      .Input("skip", kFloat, {"b", "s", 32})
      .Initializer("gamma", kFloat, {32})
      .Input("ids", kInt32, {"b", "s"})
      .Initializer("word", kFloat, {100, 32})
      .Initializer("pos", kFloat, {64, 32})
      .Initializer("packed", kUint8, {48, 1, 16});
  Contrib(builder, "SkipLayerNormalization", {"x", "skip", "gamma"}, {"sln", "mean", "inv", "sum"});
  Contrib(builder, "SkipSimplifiedLayerNormalization", {"x", "skip", "gamma"}, {"ssln", "", "", "ssum"});
  builder.Add("SimplifiedLayerNormalization", {"x", "gamma"}, {"rms", "rms_inv"});  // Default domain, as ORT has it.
  Contrib(builder, "EmbedLayerNormalization", {"ids", "", "word", "pos", "", "gamma", "gamma"},
          {"emb", "mask_index", "emb_sum"});
  for (const char* op : {"BiasGelu", "FastGelu", "Gelu", "QuickGelu", "RotaryEmbedding"}) {
    Contrib(builder, op, {"x"}, {std::string("act_") + op});
  }
  onnx::NodeProto& nbits = Contrib(builder, "MatMulNBits", {"x", "packed"}, {"mm"});
  SetInt(nbits, "K", 32);
  SetInt(nbits, "N", 48);
  SetInt(nbits, "bits", 4);
  SetInt(nbits, "block_size", 32);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("sln"), "b,s,32");
  EXPECT_EQ(engine.Shape("mean"), "b,s,1");
  EXPECT_EQ(engine.Shape("sum"), "b,s,32");
  EXPECT_EQ(engine.Shape("ssum"), "b,s,32");
  EXPECT_EQ(engine.Shape("rms"), "b,s,32");
  EXPECT_EQ(engine.Shape("rms_inv"), "b,s,1");
  EXPECT_EQ(engine.Shape("emb"), "b,s,32");
  EXPECT_EQ(engine.Shape("mask_index"), "b");
  EXPECT_EQ(engine.Value("mask_index").elem_type, kInt32);
  for (const char* op : {"BiasGelu", "FastGelu", "Gelu", "QuickGelu", "RotaryEmbedding"}) {
    EXPECT_EQ(engine.Shape(std::string("act_") + op), "b,s,32") << op;
  }
  EXPECT_EQ(engine.Shape("mm"), "b,s,48");
}

TEST(ContribShapeTest, QdqAndQLinearOps) {
  ModelBuilder builder = ContribBuilder();
  builder.Input("x", kFloat, {"n", 8, 4, 4})
      .Initializer("scale", kFloat, {})
      .Initializer("zp", kUint8, {})
      .Input("qy", kUint8, {"n", 8, 1, 4});
  Contrib(builder, "QuantizeLinear", {"x", "scale", "zp"}, {"q"});
  Contrib(builder, "DequantizeLinear", {"q", "scale", "zp"}, {"dq"});
  Contrib(builder, "QLinearAdd", {"q", "scale", "zp", "qy", "scale", "zp", "scale", "zp"}, {"qadd"});
  Contrib(builder, "QLinearSigmoid", {"q", "scale", "zp", "scale", "zp"}, {"qsig"});
  SetInt(Contrib(builder, "QLinearConcat", {"scale", "zp", "q", "scale", "zp", "qy", "scale", "zp"}, {"qcat"}),
         "axis", 2);
  Contrib(builder, "QLinearGlobalAveragePool", {"q", "scale", "zp", "scale", "zp"}, {"qpool"});
  onnx::NodeProto& avg = Contrib(builder, "QLinearAveragePool", {"q", "scale", "zp", "scale", "zp"}, {"qavg"});
  SetInts(avg, "kernel_shape", {2, 2});
  SetInts(avg, "strides", {2, 2});
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("qavg"), "n,8,2,2");
  EXPECT_EQ(engine.Shape("q"), "n,8,4,4");
  EXPECT_EQ(engine.Value("q").elem_type, kUint8);
  EXPECT_EQ(engine.Value("dq").elem_type, kFloat);
  EXPECT_EQ(engine.Shape("qadd"), "n,8,4,4");
  EXPECT_EQ(engine.Shape("qsig"), "n,8,4,4");
  EXPECT_EQ(engine.Shape("qcat"), "n,8,5,4");
  EXPECT_EQ(engine.Shape("qpool"), "n,8,1,1");
}

// --- Control flow and sequences ---------------------------------------------

// If branches reading the outer `x`: then t = Identity(x), else e = Concat(x, x, axis=1).
std::pair<onnx::GraphProto, onnx::GraphProto> IdentityAndConcatBranches() {
  onnx::GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  else_branch.set_name("else");
  onnx::NodeProto* identity = then_branch.add_node();
  identity->set_op_type("Identity");
  identity->add_input("x");
  identity->add_output("t");
  *then_branch.add_output() = Info("t", kFloat, {});
  onnx::NodeProto* concat = else_branch.add_node();
  concat->set_op_type("Concat");
  concat->add_input("x");
  concat->add_input("x");
  concat->add_output("e");
  SetInt(*concat, "axis", 1);
  *else_branch.add_output() = Info("e", kFloat, {});
  return {then_branch, else_branch};
}

TEST(ControlFlowTest, IfWithUnknownConditionTakesTheLargerBranch) {
  auto [then_branch, else_branch] = IdentityAndConcatBranches();
  ModelBuilder builder;
  builder.Input("cond", kBool, {}).Input("x", kFloat, {"b", 4});
  onnx::NodeProto& node = builder.Node("If", {"cond"}, {"y"});
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  builder.Output("y");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("y"), "b,8");
  const onnx::GraphProto* else_graph = &engine.model().graph().node(0).attribute(1).g();
  EXPECT_EQ(engine.Shape("e", else_graph), "b,8");
}

TEST(ControlFlowTest, IfWithAKnownConditionTakesThatBranch) {
  auto [then_branch, else_branch] = IdentityAndConcatBranches();
  ModelBuilder builder;
  builder.Input("x", kFloat, {"b", 4}).Int64Initializer("flag", {1});
  builder.Add("Cast", {"flag"}, {"cond"});
  SetInt(builder.graph().mutable_node()->at(0), "to", kBool);
  onnx::NodeProto& node = builder.Node("If", {"cond"}, {"y"});
  SetGraph(node, "then_branch", then_branch);
  SetGraph(node, "else_branch", else_branch);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("y"), "b,4");
}

// Loop body: (i, cond, acc) -> (cond, acc + x, acc * 2 as a scan output).
onnx::GraphProto LoopBody() {
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = Info("i", kInt64, {});
  *body.add_input() = Info("cond_in", kBool, {});
  onnx::ValueInfoProto acc;
  acc.set_name("acc_in");
  *body.add_input() = acc;  // No type: it comes from the Loop's input.
  auto add_node = [&](const std::string& op, std::vector<std::string> in, std::string out) {
    onnx::NodeProto* n = body.add_node();
    n->set_op_type(op);
    for (auto& s : in) n->add_input(s);
    n->add_output(out);
  };
  add_node("Identity", {"cond_in"}, "cond_out");
  add_node("Add", {"acc_in", "x"}, "acc_out");
  add_node("Add", {"acc_in", "acc_in"}, "doubled");
  for (const char* name : {"cond_out", "acc_out", "doubled"}) body.add_output()->set_name(name);
  return body;
}

TEST(ControlFlowTest, LoopOutputsFromAKnownTripCount) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"b", 16}).Input("cond", kBool, {}).Input("acc", kFloat, {"b", 16});
  ScalarInt(builder, "trips", 5);
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", "cond", "acc"}, {"final", "stacked"});
  SetGraph(loop, "body", LoopBody());
  builder.Output("stacked");
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("final"), "b,16");
  EXPECT_EQ(engine.Shape("stacked"), "5,b,16");
  const onnx::GraphProto* body = &engine.model().graph().node(0).attribute(0).g();
  EXPECT_EQ(engine.Shape("doubled", body), "b,16");
}

TEST(ControlFlowTest, LoopWithAnUnknownTripCountSaysSo) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"b", 16}).Input("cond", kBool, {}).Input("acc", kFloat, {"b", 16});
  builder.Input("trips", kInt64, {});
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", "cond", "acc"}, {"final", "stacked"}, "loop");
  SetGraph(loop, "body", LoopBody());
  Engine engine(builder);
  // A symbol of its own, which --dim binds (see SymbolicAnalysisTest).
  EXPECT_EQ(engine.Shape("stacked"), "loop.trip_count,b,16");
  EXPECT_NE(engine.Value("stacked").reason.find("--dim loop.trip_count=N"), std::string::npos);
}

TEST(ControlFlowTest, LoopCarriedValueThatGrowsIsNotSizedByItsFirstIteration) {
  // Body: acc_out = Concat(acc_in, x) along axis 0: one row more per iteration.
  onnx::GraphProto body;
  body.set_name("grow");
  for (const char* name : {"i", "cond_in", "acc_in"}) body.add_input()->set_name(name);
  onnx::NodeProto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  onnx::NodeProto* cat = body.add_node();
  cat->set_op_type("Concat");
  cat->add_input("acc_in");
  cat->add_input("x");
  cat->add_output("acc_out");
  SetInt(*cat, "axis", 0);
  body.add_output()->set_name("cond_out");
  body.add_output()->set_name("acc_out");
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 8}).Input("cond", kBool, {}).Input("acc", kFloat, {1, 8});
  ScalarInt(builder, "trips", 4);
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", "cond", "acc"}, {"final"});
  SetGraph(loop, "body", body);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("final"), "?,8");
  EXPECT_NE(engine.Value("final").reason.find("changes shape across iterations"), std::string::npos)
      << engine.Value("final").reason;
  const onnx::GraphProto* inner = &engine.model().graph().node(0).attribute(0).g();
  EXPECT_EQ(engine.Shape("acc_in", inner), "?,8");  // Not the first iteration's 1x8.
}

TEST(ControlFlowTest, ScanSlicesInputsAndStacksOutputs) {
  onnx::GraphProto body;
  body.set_name("scan_body");
  *body.add_input() = Info("state_in", kFloat, {});
  *body.add_input() = Info("step_in", kFloat, {});
  onnx::NodeProto* n = body.add_node();
  n->set_op_type("Add");
  n->add_input("state_in");
  n->add_input("step_in");
  n->add_output("state_out");
  onnx::NodeProto* m = body.add_node();
  m->set_op_type("Identity");
  m->add_input("state_out");
  m->add_output("scan_out");
  body.add_output()->set_name("state_out");
  body.add_output()->set_name("scan_out");
  ModelBuilder builder;
  builder.Opset("", 11).Input("init", kFloat, {"d"}).Input("seq", kFloat, {"t", "d"});
  onnx::NodeProto& scan = builder.Node("Scan", {"init", "seq"}, {"final", "all"});
  SetInt(scan, "num_scan_inputs", 1);
  SetGraph(scan, "body", body);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("final"), "d");
  EXPECT_EQ(engine.Shape("all"), "t,d");
}

TEST(ControlFlowTest, NestedBodiesSeeOuterValues) {
  // Loop whose body holds an If whose branch reads the main graph's x.
  onnx::GraphProto branch;
  branch.set_name("branch");
  onnx::NodeProto* n = branch.add_node();
  n->set_op_type("Concat");
  n->add_input("x");
  n->add_input("x");
  n->add_output("cat");
  SetInt(*n, "axis", 0);
  branch.add_output()->set_name("cat");
  onnx::GraphProto body = LoopBody();
  onnx::NodeProto* inner_if = body.add_node();
  inner_if->set_op_type("If");
  inner_if->add_input("cond_in");
  inner_if->add_output("inner");
  SetGraph(*inner_if, "then_branch", branch);
  SetGraph(*inner_if, "else_branch", branch);
  body.add_output()->set_name("inner");
  ModelBuilder builder;
  builder.Input("x", kFloat, {"b", 16}).Input("cond", kBool, {}).Input("acc", kFloat, {"b", 16});
  ScalarInt(builder, "trips", 3);
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", "cond", "acc"}, {"final", "stacked", "inners"});
  SetGraph(loop, "body", body);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("inners"), "3,2*b,16");
}

TEST(ControlFlowTest, SequencesAreSizedWhereTheirElementsAre) {
  ModelBuilder builder;
  builder.Input("a", kFloat, {2, 3}).Input("b", kFloat, {4, 3});
  ScalarInt(builder, "one", 1);
  builder.Add("SequenceConstruct", {"a", "b"}, {"seq"})
      .Add("SequenceAt", {"seq", "one"}, {"second"})
      .Add("ConcatFromSequence", {"seq"}, {"cat"})
      .Add("SequenceLength", {"seq"}, {"len"})
      .Add("SplitToSequence", {"a"}, {"rows"})
      .Output("cat");
  SetInt(builder.graph().mutable_node()->at(4), "axis", 0);
  Engine engine(builder);
  EXPECT_EQ(engine.Shape("second"), "4,3");
  EXPECT_EQ(engine.Shape("cat"), "6,3");
  EXPECT_EQ(engine.Ints("len"), "2");
  EXPECT_EQ(BytesOf(engine.Value("seq")).AsConstant(), 24 + 48);
  EXPECT_EQ(BytesOf(engine.Value("rows")).AsConstant(), 24);  // Two 1x3 float elements.
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
}  // namespace footprint::symbolic
