// The function bodies ORT inlines for float16 ops (fp16_function_bodies.h)
// and Where's scratch, on built models through the whole analysis. Each case
// follows an optimized model or a heap measurement of
// bench/ground_truth/probe_models.py's fp16_* and where_float32 probes.
#include "analyzer/runtimes/onnxruntime/passes/fp16_function_bodies.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();

const TensorRecord* Find(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

// The arena tensors that inlined nodes of op `body_op` wrote, by their names
// ("_inlfunc_<Op>_<node>/<BodyOp>_<index>", nested bodies prefixed again).
int CountWrittenBy(const Analysis& analysis, const std::string& body_op) {
  int count = 0;
  for (const TensorRecord& tensor : analysis.tensors) {
    const size_t slash = tensor.producer.rfind('/');
    if (slash != std::string::npos && tensor.producer.compare(slash + 1, body_op.size() + 1, body_op + "_") == 0) {
      ++count;
    }
  }
  return count;
}

int64_t WorkspaceOf(const Analysis& analysis, const std::string& node) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.role == TensorRole::kKernelWorkspace && tensor.producer == node) return tensor.aligned_bytes;
  }
  return 0;
}

// A float16 op on a float16 input [1, 1024] at `opset`, between the model's
// Casts from and to float32 (as converters write fp16 models).
ModelBuilder OneOp(const std::string& op, int64_t opset) {
  ModelBuilder builder;
  builder.Opset("", opset).Input("x", kFloat, {1, 1024});
  SetInt(builder.Node("Cast", {"x"}, {"x16"}), "to", kFloat16);
  builder.Node(op, {"x16"}, {"z16"}, "op");
  SetInt(builder.Node("Cast", {"z16"}, {"y"}), "to", kFloat);
  builder.Output("y", kFloat, {1, 1024});
  return builder;
}

TEST(Float16FunctionBodiesTest, LeakyReluAtOpset17IsItsBodyInFloat32) {
  // fp16_leakyrelu_opset17: Mul, Less, Where in float32; Where selects into
  // two buffers of the output's size.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(OneOp("LeakyRelu", 17), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord* mul = Find(*ort, "_inlfunc_LeakyRelu_op/0");
  const TensorRecord* less = Find(*ort, "_inlfunc_LeakyRelu_op/1");
  ASSERT_NE(mul, nullptr);
  ASSERT_NE(less, nullptr);
  EXPECT_EQ(mul->dtype, "float32");
  EXPECT_EQ(mul->bytes, 4096);
  EXPECT_EQ(less->dtype, "bool");
  EXPECT_EQ(less->bytes, 1024);
  EXPECT_EQ(WorkspaceOf(*ort, "_inlfunc_LeakyRelu_op/Where_2"), 2 * 4096);
  // The model's Casts cancel with ORT's: no float16 copy of the input is left.
  EXPECT_EQ(Find(*ort, "x16"), nullptr);
}

TEST(Float16FunctionBodiesTest, LeakyReluAtOpset20StaysOneFloat32Op) {
  // CastLike's version 19 makes ORT refuse the opset-16 body: one float32 kernel.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(OneOp("LeakyRelu", 20), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(Find(*ort, "_inlfunc_LeakyRelu_op/0"), nullptr);
  const TensorRecord* z = Find(*ort, "z16");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->dtype, "float32");
}

TEST(Float16FunctionBodiesTest, AFloat32LeakyReluIsNotInlined) {
  // Its float32 kernel exists: no body.
  ModelBuilder builder;
  builder.Opset("", 17).Input("x", kFloat, {1, 1024}).Node("LeakyRelu", {"x"}, {"y"}, "op");
  builder.Output("y", kFloat, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(Find(*ort, "_inlfunc_LeakyRelu_op/0"), nullptr);
}

TEST(Float16FunctionBodiesTest, HardSwishAtOpset18InlinesItsHardSigmoidToo) {
  // HardSwish_18: HardSigmoid's opset-18 body (Mul, Add, Min, Max) in place
  // of the HardSigmoid node of HardSwish's body.
  absl::StatusOr<Analysis> at18 = AnalyzeBuilt(OneOp("HardSwish", 18), kOrt);
  ASSERT_TRUE(at18.ok()) << at18.status();
  EXPECT_EQ(CountWrittenBy(*at18, "HardSigmoid"), 0);
  EXPECT_EQ(CountWrittenBy(*at18, "Min"), 1);
  absl::StatusOr<Analysis> at17 = AnalyzeBuilt(OneOp("HardSwish", 17), kOrt);
  ASSERT_TRUE(at17.ok()) << at17.status();
  EXPECT_EQ(CountWrittenBy(*at17, "HardSigmoid"), 1);
  EXPECT_EQ(CountWrittenBy(*at17, "Min"), 0);
}

TEST(Float16FunctionBodiesTest, ReluAtOpset18IsAFloat16Max) {
  // Relu_18: Max(x, 0) keeps ORT's float16 kernel; no Cast around it.
  ModelBuilder builder;
  builder.Opset("", 18).Input("x", kFloat16, {1, 1024}).Node("Relu", {"x"}, {"y"}, "op");
  builder.Output("y", kFloat16, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord* y = Find(*ort, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->dtype, "float16");
  EXPECT_NE(y->producer.find("/Max_0"), std::string::npos) << y->producer;
  EXPECT_EQ(Find(*ort, "x.float32"), nullptr);
}

TEST(Float16FunctionBodiesTest, FastGeluWithABiasIsItsBodyWithTheAddFirst) {
  // ORT's optimized fp16 tiny-random-gpt2 (AVX-512 host): each FastGelu
  // reading a bias is Add(X, bias), then the body's eight nodes on that sum,
  // in float32 (no float16 kernel).
  ModelBuilder builder;
  builder.Opset("", 17).Opset("com.microsoft", 1).Input("x", kFloat, {1, 1024});
  builder.Initializer("bias", kFloat16, {1024});
  SetInt(builder.Node("Cast", {"x"}, {"x16"}), "to", kFloat16);
  builder.Node("FastGelu", {"x16", "bias"}, {"z16"}, "op").set_domain("com.microsoft");
  SetInt(builder.Node("Cast", {"z16"}, {"y"}), "to", kFloat);
  builder.Output("y", kFloat, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord* sum = Find(*ort, "_inlfunc_FastGelu_op/0");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->producer, "_inlfunc_FastGelu_op/Add_0");
  EXPECT_EQ(sum->dtype, "float32");
  EXPECT_EQ(sum->bytes, 4096);
  EXPECT_EQ(CountWrittenBy(*ort, "Add"), 3);
  EXPECT_EQ(CountWrittenBy(*ort, "Mul"), 5);
  EXPECT_EQ(CountWrittenBy(*ort, "Tanh"), 1);
}

// `count` float16 FastGelus with one float16 bias, chained between the
// model's Casts from and to float32.
absl::StatusOr<Analysis> FastGeluChain(int count) {
  ModelBuilder builder;
  builder.Opset("", 17).Opset("com.microsoft", 1).Input("x", kFloat, {1, 1024});
  builder.Initializer("bias", kFloat16, {1024});
  SetInt(builder.Node("Cast", {"x"}, {"t0"}), "to", kFloat16);
  for (int i = 0; i < count; ++i) {
    const std::string name = "g" + std::to_string(i);
    builder.Node("FastGelu", {"t" + std::to_string(i), "bias"}, {"t" + std::to_string(i + 1)}, name)
        .set_domain("com.microsoft");
  }
  SetInt(builder.Node("Cast", {"t" + std::to_string(count)}, {"y"}), "to", kFloat);
  builder.Output("y", kFloat, {1, 1024});
  return AnalyzeBuilt(builder, kOrt);
}

TEST(Float16FunctionBodiesTest, EachInlinedFastGeluHoldsItsFourConstantsInFloat32) {
  // A FastGelu more: its nine body nodes (2,580 + 2 x 70 each, names
  // aside) and its body's a, b, c and one, each a float32 initializer
  // (1,470 + 4) with a float16 one (750) and a Cast (850) taken out. The
  // FastGelu chain probes (AVX-512 host, arena off) hold 57 KB more per
  // FastGelu; without the constants this would be under 29 KB.
  absl::StatusOr<Analysis> one = FastGeluChain(1);
  absl::StatusOr<Analysis> two = FastGeluChain(2);
  ASSERT_TRUE(one.ok() && two.ok());
  const int64_t more = two->memory.runtime_weights_bytes - one->memory.runtime_weights_bytes;
  EXPECT_GE(more, 9 * (2'580 + 2 * 70) + 4 * (1'470 + 4 + 750 + 850));
  EXPECT_LT(more, 57'000);
}

TEST(Float16FunctionBodiesTest, TheInlinedOpsAndOpsetsAreORTs) {
  EXPECT_TRUE(ort::InlinesFloat16Body("LeakyRelu", 16));
  EXPECT_TRUE(ort::InlinesFloat16Body("PRelu", 18));
  EXPECT_FALSE(ort::InlinesFloat16Body("PRelu", 15));
  EXPECT_FALSE(ort::InlinesFloat16Body("LeakyRelu", 19));
  EXPECT_TRUE(ort::InlinesFloat16Body("HardSwish", 14));
  EXPECT_TRUE(ort::InlinesFloat16Body("HardSwish", 23));
  EXPECT_TRUE(ort::InlinesFloat16Body("Elu", 18));
  EXPECT_FALSE(ort::InlinesFloat16Body("Elu", 17));
  EXPECT_FALSE(ort::InlinesFloat16Body("Elu", 19));
  EXPECT_TRUE(ort::InlinesFloat16Body("Gelu", 20));
  EXPECT_TRUE(ort::InlinesFloat16Body("GreaterOrEqual", 12));
  EXPECT_FALSE(ort::InlinesFloat16Body("GreaterOrEqual", 13));
  EXPECT_FALSE(ort::InlinesFloat16Body("Sigmoid", 18));
  EXPECT_FALSE(ort::InlinesFloat16Body("Softmax", 13));  // Inlined by ORT, its peak that of one op (the header).
}

TEST(Float16FunctionBodiesTest, WhereSelectsIntoTwoBuffersOfTheBroadcastShapes) {
  // where_float32, and a condition broadcast against a smaller Y.
  ModelBuilder builder;
  builder.Input("c", onnx::TensorProto::BOOL, {4, 256}).Input("a", kFloat, {4, 256}).Input("b", kFloat, {1, 256});
  builder.Node("Where", {"c", "a", "b"}, {"y"}, "where");
  builder.Output("y", kFloat, {4, 256});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "where"), 2 * 4 * 256 * 4);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.workspace_bytes, 0);
}

TEST(Float16FunctionBodiesTest, MultiHeadAttentionHoldsItsCopiesAndScores) {
  // float32 MultiHeadAttention, 4 heads of 16: FlashAttention without a past
  // (BNSH copies of Q, K, V and a block buffer: Bc = this host's L2 / 512
  // capped at L = 64, Br = min(Bc, 32)); with a past, the scores and the
  // output before its transpose (bench/ground_truth: mha probes).
  ModelBuilder flash;
  flash.Opset("com.microsoft", 1);
  for (const char* name : {"q", "k", "v"}) flash.Input(name, kFloat, {1, 64, 64});
  onnx::NodeProto& flash_node = flash.Node("MultiHeadAttention", {"q", "k", "v"}, {"y"}, "mha");
  flash_node.set_domain("com.microsoft");
  SetInt(flash_node, "num_heads", 4);
  flash.Output("y", kFloat, {1, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(flash, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const int64_t kv_block = std::min<int64_t>(std::max<int64_t>(ort::HostL2CacheBytes() / 512, 1), 64);
  const int64_t q_block = std::min<int64_t>(kv_block, 32);
  EXPECT_EQ(WorkspaceOf(*ort, "mha"), 3 * 64 * 64 * 4 + 4 * (2 * q_block + q_block * kv_block + q_block * 16));
  ModelBuilder past;
  past.Opset("com.microsoft", 1);
  for (const char* name : {"q", "k", "v"}) past.Input(name, kFloat, {1, 8, 64});
  past.Input("pk", kFloat, {1, 4, 100, 16}).Input("pv", kFloat, {1, 4, 100, 16});
  onnx::NodeProto& node = past.Node("MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"},
                                    {"y", "ok", "ov"}, "mha");
  node.set_domain("com.microsoft");
  SetInt(node, "num_heads", 4);
  past.Output("y", kFloat, {1, 8, 64}).Output("ok", kFloat, {1, 4, 108, 16}).Output("ov", kFloat, {1, 4, 108, 16});
  absl::StatusOr<Analysis> with_past = AnalyzeBuilt(past, kOrt);
  ASSERT_TRUE(with_past.ok()) << with_past.status();
  EXPECT_EQ(WorkspaceOf(*with_past, "mha"), 3 * 8 * 64 * 4 + 4 * 4 * 8 * (100 + 8 + 16));
}

TEST(Float16FunctionBodiesTest, GroupNormalizationIsItsBodyInEveryType) {
  // ORT has no GroupNormalization kernel: it runs the body, float32 too
  // (probes gn18, gn21: four tensors of the input's size at the peak, the
  // graph input, the Relu's output, the deviation and the square).
  for (const int64_t opset : {18, 21}) {
    for (const int32_t type : {kFloat, kFloat16}) {
      const int64_t groups_or_channels = opset >= 21 ? 64 : 8;
      ModelBuilder builder;
      builder.Opset("", opset).Input("x", type, {1, 64, 32, 32});
      builder.Initializer("scale", type, {groups_or_channels}).Initializer("bias", type, {groups_or_channels});
      builder.Node("Relu", {"x"}, {"r"});
      SetInt(builder.Node("GroupNormalization", {"r", "scale", "bias"}, {"y"}, "gn"), "num_groups", 8);
      builder.Output("y", type, {1, 64, 32, 32});
      absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
      ASSERT_TRUE(ort.ok()) << ort.status();
      SCOPED_TRACE(::testing::Message() << "opset " << opset << ", type " << type);
      EXPECT_GE(CountWrittenBy(*ort, "Sub"), 1);
      EXPECT_GE(CountWrittenBy(*ort, "ReduceMean"), 2);
      // The deviation is float32 in either type: at opset 21 the body works
      // in float32, and at 18 the float16 Sub has no kernel (ORT's optimized
      // gn18_fp16 runs it behind Casts).
      const TensorRecord* deviation =
          Find(*ort, opset >= 21 ? "_inlfunc_GroupNormalization_gn/11" : "_inlfunc_GroupNormalization_gn/10");
      ASSERT_NE(deviation, nullptr);
      EXPECT_EQ(deviation->bytes, 64 * 32 * 32 * 4);
    }
  }
  EXPECT_TRUE(ort::InlinesFloat16Body("GroupNormalization", 18));
  EXPECT_FALSE(ort::InlinesFloat16Body("GroupNormalization", 17));  // Before opset 18 there is none.
}

// A diffusion model's residual block on [1, 32, 32, 32] (probe_models.py's
// resblock_*): GroupNormalization, SiLU, Conv, twice, and the residual Add.
ModelBuilder ResidualBlock(int64_t opset, int32_t type) {
  const int64_t per = opset >= 21 ? 32 : 8;  // Scale and bias per channel from 21, per group before.
  ModelBuilder builder;
  builder.Opset("", opset).Input("x", kFloat, {1, 32, 32, 32});
  builder.Initializer("w1", type, {32, 32, 3, 3}).Initializer("w2", type, {32, 32, 3, 3});
  for (const char* name : {"s1", "b1", "s2", "b2"}) builder.Initializer(name, type, {per});
  std::string x = "x";
  if (type == kFloat16) {
    SetInt(builder.Node("Cast", {"x"}, {"x16"}), "to", kFloat16);
    x = "x16";
  }
  std::string in = x;
  for (const std::string i : {"1", "2"}) {
    SetInt(builder.Node("GroupNormalization", {in, "s" + i, "b" + i}, {"g" + i}, "gn" + i), "num_groups", 8);
    builder.Node("Sigmoid", {"g" + i}, {"sg" + i});
    builder.Node("Mul", {"g" + i, "sg" + i}, {"a" + i});
    SetInts(builder.Node("Conv", {"a" + i, "w" + i}, {"c" + i}), "pads", {1, 1, 1, 1});
    in = "c" + i;
  }
  if (type == kFloat16) {
    builder.Node("Add", {x, "c2"}, {"y16"});
    SetInt(builder.Node("Cast", {"y16"}, {"y"}), "to", kFloat);
  } else {
    builder.Node("Add", {x, "c2"}, {"y"});
  }
  builder.Output("y", kFloat, {1, 32, 32, 32});
  return builder;
}

TEST(Float16FunctionBodiesTest, GroupNormalizationBodyHasNoStaticShapeForOrtsPlanner) {
  // ORT inlines the body after its level-1 passes, so its reshape to a
  // Concat of Shapes is never folded and the grouped view, deviation,
  // square, normalized, scaled and biased tensors have no static shape: its
  // planner never gives them a freed buffer. The freed buffers of the SiLU's
  // output and of the first Conv's input copy stay held until the second
  // block's tensors of their shape take them, and the body's Shape keeps its
  // input (the first Conv's output) to the body's end. At the second body's
  // square, besides the graph input: the held buffer, the Conv's output,
  // the deviation and the square (ORT's plan, measured: resblock_opset18_float32
  // 664,792 bytes, 655,360 of them tensors; four tensors before this rule). At
  // opset 21 the body's float32 copy of its input lives to the Reshape after
  // the Div, and its normalized tensor is copied again by the Cast back,
  // planned as [1, 32, 1024] with the Mul and Add after it (measured: 928,776,
  // seven tensors). A float16 model runs the body in float32 behind Casts, its
  // reshapes in float16 on a float16 copy of the Conv's output (measured:
  // 862,504 bytes, 851,968 of them tensors).
  constexpr int64_t kTensor = 32 * 32 * 32 * 4;
  const struct {
    int64_t opset;
    int32_t type;
    int64_t tensors;  // ORT's buffers at its worst step (the small ones left out).
  } kCases[] = {{18, kFloat, 5 * kTensor}, {21, kFloat, 7 * kTensor}, {18, kFloat16, 6 * kTensor + kTensor / 2}};
  for (const auto& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "opset " << c.opset << ", type " << c.type);
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(ResidualBlock(c.opset, c.type), kOrt);
    ASSERT_TRUE(ort.ok()) << ort.status();
    EXPECT_GE(ort->memory.runtime_tensor_bytes, c.tensors);
    EXPECT_LT(ort->memory.runtime_tensor_bytes, c.tensors + 1024);  // The means and variances.
  }
}

}  // namespace
}  // namespace footprint
