// The com.microsoft shape functions (attention and its key-value cache,
// norms, embeddings, quantized ops), on graphs small enough to check by hand.
#include "analyzer/shapes/shape_engine.h"

#include "analyzer/shapes/shape_engine_test_util.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {
namespace {

using ::footprint::testing::ModelBuilder;

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

}  // namespace
}  // namespace footprint::symbolic::engine_test
