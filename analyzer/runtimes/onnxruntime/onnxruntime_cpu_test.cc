// The onnxruntime-cpu profile (onnxruntime_cpu.h, targets.h): each fusion and each
// workspace rule on a built model, and nothing of it without --runtime.
#include "analyzer/runtimes/onnxruntime/onnxruntime_cpu.h"

#include <memory>
#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/session_run.h"
#include "analyzer/runtimes/registry.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;

const AnalyzeOptions kOrt = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx2"};

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

int64_t WorkspaceOf(const Analysis& analysis, const std::string& node) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.role == TensorRole::kKernelWorkspace && tensor.producer == node) return tensor.aligned_bytes;
  }
  return 0;
}

// x -> Conv (8 filters, 3x3, pad 1) -> c, so that NCHWc takes it (no workspace).
ModelBuilder ConvModel(ModelBuilder builder = ModelBuilder()) {
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16}).Initializer("w", onnx::TensorProto::FLOAT, {8, 8, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  return builder;
}

TEST(OnnxRuntimeCpuTest, KnownNames) {
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> ort = MakeRuntimeModel("onnxruntime-cpu");
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ((*ort)->name(), "onnxruntime-cpu");
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> none = MakeRuntimeModel("");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, nullptr);
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> tflite = MakeRuntimeModel("tflite");
  EXPECT_EQ(tflite.status().message(), "must be one of onnxruntime-cpu, got 'tflite'");
  EXPECT_FALSE(MakeRuntimeModel("onnxruntime-cpu:").ok());  // An empty option.
  EXPECT_EQ(ParseRuntimeSpec("onnxruntime-cpu:a,b")->options, (std::vector<std::string>{"a", "b"}));
}

TEST(OnnxRuntimeCpuTest, RunOverheadIsInThePeakOnlyWithTheRuntime) {
  // One float through Identity: ORT's run peak is ~13.5 KB above its tensors
  // (bench/ground_truth/README.md, "Per-run overhead"): 12,864 B and 448 B
  // for each of the input and the output.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1}).Add("Identity", {"x"}, {"y"}).Output("y");
  // With the arena off the peak is the run's working memory on the weights
  // after load; with ORT's defaults what the first run leaves held.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, {.alias = true, .inplace = true,
                                                        .runtime = "onnxruntime-cpu:avx2,noarena"});
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_overhead_bytes, 12864 + 2 * 448);
  EXPECT_EQ(ort->memory.peak_bytes,
            ort->memory.runtime_weights_bytes + ort->memory.arena_bytes + 12864 + 2 * 448);
  absl::StatusOr<Analysis> defaults = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->memory.runtime_overhead_bytes, 12864 + 2 * 448);  // Reported all the same.
  // With the defaults, the caller's input (one float, 64 aligned bytes) is on top.
  EXPECT_EQ(defaults->memory.runtime_input_bytes, 64);
  EXPECT_EQ(defaults->memory.peak_bytes,
            defaults->memory.runtime_weights_bytes + defaults->memory.runtime_reserved_bytes + 64);
  EXPECT_LT(ort->memory.arena_bytes, 1024);  // The overhead is not a tensor of the plan.
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.runtime_overhead_bytes, 0);
  EXPECT_EQ(plain->memory.peak_bytes, plain->memory.arena_bytes);
  EXPECT_EQ(plain->memory.arena_bytes, ort->memory.arena_bytes);
}

TEST(OnnxRuntimeCpuTest, RunOverheadWhileKernelsRunIsSmall) {
  // A 64 KiB im2col workspace: ORT peaks ~1.6-2.3 KB above tensors and
  // workspace then, its 13 KB edge figure is not live.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 64}).Initializer("w", onnx::TensorProto::FLOAT, {4, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1});
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, {.alias = true, .inplace = true,
                                                        .runtime = "onnxruntime-cpu:avx2,noarena"});
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_EQ(ort->memory.workspace_bytes, 128 * 128 * 4);
  // 2 KiB, and the objects of the Conv output's OrtValue (168 + 40 bytes:
  // runtime_buffers.h, FrameObjectsBytes): 2,256, the 1-D Conv probes' top.
  EXPECT_EQ(ort->memory.runtime_overhead_bytes, 2048 + 208);
  EXPECT_EQ(ort->memory.peak_bytes, ort->memory.runtime_weights_bytes + ort->memory.arena_bytes + 2048 + 208);
}

TEST(OnnxRuntimeCpuTest, RunEndHoldsACopyOfLargeOutputs) {
  // A Relu of 393,216 bytes: measured run peak 1,184,440 = input + output
  // + the binding's copy of the output + 4.8 KB.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 32, 32, 32}).Add("Relu", {"x"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.arena_bytes, 2 * 393216);
  EXPECT_EQ(ort->memory.runtime_overhead_bytes, 393216 + 4608);
  EXPECT_EQ(ort::RunOverheadBytes(8192, 0, 4096, 4096, 2), 12864 + 2 * 448);  // Small: the fixed part.
  EXPECT_EQ(ort::RunOverheadBytes(8192, 0, 4096, 4096, 6), 12864 + 6 * 448);  // Each binding adds.
}

TEST(OnnxRuntimeCpuTest, ConvBatchNormFuses) {
  ModelBuilder builder = ConvModel();
  for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, onnx::TensorProto::FLOAT, {8});
  builder.Add("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));  // conv_bn_fusion.cc folds the BatchNormalization into the Conv.
  EXPECT_EQ(ort->modes.fused_nodes, 1);
  // x (held to the end), its NCHWc copy and the blocked y; then y reordered.
  EXPECT_EQ(ort->memory.arena_bytes, 3 * 8 * 16 * 16 * 4);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "c"));
  EXPECT_EQ(plain->modes.fused_nodes, 0);
}

TEST(OnnxRuntimeCpuTest, BatchNormWithComputedParametersDoesNotFuse) {
  ModelBuilder builder = ConvModel();
  builder.Input("scale", onnx::TensorProto::FLOAT, {8});
  for (const char* name : {"bias", "mean", "var"}) builder.Initializer(name, onnx::TensorProto::FLOAT, {8});
  builder.Add("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(ort->modes.fused_nodes, 0);
}

TEST(OnnxRuntimeCpuTest, WeightsListedAsInputsAreNotConstant) {
  // IR 8 with the filter also a graph input: ORT may see it overridden
  // (CanOverrideInitializer), so no Conv+BN fusion and no NCHWc kernel: im2col.
  ModelBuilder builder = ConvModel();
  for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, onnx::TensorProto::FLOAT, {8});
  builder.Add("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"}).Output("y");
  onnx::ValueInfoProto* input = builder.graph().add_input();
  input->set_name("w");
  *input->mutable_type() = ::footprint::testing::TensorType(onnx::TensorProto::FLOAT, {8, 8, 3, 3});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(ort->modes.fused_nodes, 0);
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 128 * 128 * 4);  // 8 filters <= 256 output pixels: one MLAS segment.
}

TEST(OnnxRuntimeCpuTest, ConvActivationFuses) {
  ModelBuilder builder = ConvModel();
  builder.Add("Relu", {"c"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, {.runtime = "onnxruntime-cpu:avx2"});  // No in-place.
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(ort->memory.arena_bytes, 3 * 8 * 16 * 16 * 4);  // x, x.nchwc and y.nchwc at the Conv.
}

TEST(OnnxRuntimeCpuTest, ConvAddActivationWritesOverTheResidual) {
  // A 1-D Conv, which NCHWc leaves: conv_add_act_fusion.cc (level 3).
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 64}).Initializer("w", onnx::TensorProto::FLOAT, {8, 8, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1});
  builder.Add("Sigmoid", {"x"}, {"residual"})
      .Add("Add", {"c", "residual"}, {"sum"})
      .Add("Relu", {"sum"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));
  EXPECT_FALSE(IsArenaTensor(*ort, "sum"));
  EXPECT_EQ(ort->modes.fused_nodes, 2);
  EXPECT_EQ(ort->modes.layout_nodes, 0);
  const TensorRecord& y = FindTensor(*ort, "y");
  EXPECT_EQ(y.shares_with, "residual");  // FusedConv's Z is the output buffer.
  EXPECT_EQ(y.sharing, "inplace");
}

TEST(OnnxRuntimeCpuTest, NchwcConvAddOfAnNchwTensorReordersBack) {
  // The residual is NCHW (a Sigmoid of the input): TransformBinary needs
  // both addends blocked, so the Conv's output is reordered back for the Add.
  ModelBuilder builder = ConvModel();
  builder.Add("Sigmoid", {"x"}, {"residual"}).Add("Add", {"c", "residual"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.fused_nodes, 0);
  EXPECT_EQ(ort->modes.layout_nodes, 1);
  EXPECT_EQ(ort->modes.reorder_nodes, 2);  // x in, c out.
  EXPECT_EQ(FindTensor(*ort, "x.nchwc").producer, "ReorderInput(x)");
  EXPECT_EQ(FindTensor(*ort, "c.nchwc").producer, "conv");
  EXPECT_EQ(FindTensor(*ort, "c").producer, "ReorderOutput(c)");
}

// x [1, 8, 16, 16] -> Conv `name` (8 filters, 3x3, pad 1) -> `output`.
void AddConv(ModelBuilder& builder, const std::string& input, const std::string& output, const std::string& name,
             int64_t filters = 8) {
  builder.Initializer(name + "_w", onnx::TensorProto::FLOAT, {filters, 8, 3, 3});
  SetInts(builder.Node("Conv", {input, name + "_w"}, {output}, name), "pads", {1, 1, 1, 1});
}

TEST(OnnxRuntimeCpuTest, NchwcPadsOutputChannelsToTheBlock) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  AddConv(builder, "x", "c", "conv", /*filters=*/4);
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord& blocked = FindTensor(*ort, "c.nchwc");
  EXPECT_EQ(blocked.bytes, 8 * 16 * 16 * 4);  // 4 channels padded to one block of 8.
  ASSERT_TRUE(blocked.shape.has_value());
  EXPECT_EQ((*blocked.shape)[1].value, 8);
  EXPECT_EQ(FindTensor(*ort, "c").bytes, 4 * 16 * 16 * 4);  // The graph output, reordered back.
  EXPECT_EQ(ort->modes.reorder_nodes, 2);
  // At the Conv: x (held to the end), its copy and the blocked output.
  EXPECT_EQ(ort->memory.lower_bound_bytes, 3 * 8 * 16 * 16 * 4);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(IsArenaTensor(*plain, "c.nchwc"));
}

TEST(OnnxRuntimeCpuTest, NchwcReordersAnInputOnceForAllItsReaders) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  AddConv(builder, "x", "a", "conv_a");
  AddConv(builder, "x", "b", "conv_b");
  builder.Output("a").Output("b");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.layout_nodes, 2);
  EXPECT_EQ(ort->modes.reorder_nodes, 3);  // One ReorderInput, two ReorderOutputs.
  int reorder_inputs = 0;
  for (const std::string& node : ort->schedule) reorder_inputs += node.rfind("ReorderInput", 0) == 0;
  EXPECT_EQ(reorder_inputs, 1);
}

TEST(OnnxRuntimeCpuTest, NchwcChainStaysBlockedBetweenItsEnds) {
  // Conv -> Relu (fused into the Conv) -> MaxPool -> Conv: blocked
  // throughout; only the graph's input and output are reordered.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  AddConv(builder, "x", "c1", "conv1");
  builder.Add("Relu", {"c1"}, {"r1"});
  onnx::NodeProto& pool = builder.Node("MaxPool", {"r1"}, {"p1"}, "pool");
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  AddConv(builder, "p1", "y", "conv2");
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.layout_nodes, 3);
  EXPECT_EQ(ort->modes.reorder_nodes, 2);
  EXPECT_EQ(ort->modes.fused_nodes, 1);
  // The Relu joined conv1 at level 2 (conv_activation_fusion.cc), so conv1 writes r1.nchwc.
  for (const char* gone : {"c1", "r1", "p1", "c1.nchwc"}) EXPECT_FALSE(IsArenaTensor(*ort, gone)) << gone;
  EXPECT_EQ(FindTensor(*ort, "p1.nchwc").bytes, 8 * 8 * 8 * 4);
  EXPECT_EQ(FindTensor(*ort, "y").producer, "ReorderOutput(y)");
}

TEST(OnnxRuntimeCpuTest, NchwcConvSumWritesOverTheOtherAddend) {
  // Add of two single-use NchwcConvs: NchwcConvSumFusion feeds one into the
  // other's Sum input (MayInplace(3, 0)); the Relu after fuses too.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  AddConv(builder, "x", "a", "conv_a");
  AddConv(builder, "x", "b", "conv_b");
  builder.Add("Add", {"a", "b"}, {"sum"}).Add("Relu", {"sum"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.fused_nodes, 2);  // The Add and the Relu.
  const TensorRecord& sum = FindTensor(*ort, "a.nchwc");
  EXPECT_EQ(sum.shares_with, "b.nchwc");
  EXPECT_EQ(sum.sharing, "inplace");
  EXPECT_FALSE(IsArenaTensor(*ort, "sum"));
  // conv_b runs first; conv_a then sums into b's buffer: with x and its
  // copy, three tensors at most.
  EXPECT_EQ(ort->memory.lower_bound_bytes, 3 * 8 * 16 * 16 * 4);
}

TEST(OnnxRuntimeCpuTest, NchwcBatchNormAndScaleOfAConcatAreDepthwiseConvs) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  AddConv(builder, "x", "a", "conv_a");
  AddConv(builder, "x", "b", "conv_b");
  SetInt(builder.Node("Concat", {"a", "b"}, {"cat"}, "concat"), "axis", 1);
  for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, onnx::TensorProto::FLOAT, {16});
  builder.Node("BatchNormalization", {"cat", "scale", "bias", "mean", "var"}, {"norm"}, "bn");
  builder.Initializer("per_channel", onnx::TensorProto::FLOAT, {16, 1, 1})
      .Add("Mul", {"norm", "per_channel"}, {"scaled"})  // Another depthwise NchwcConv (ORT 1.30's dump).
      .Add("Add", {"scaled", "per_channel"}, {"y"})      // Stays NCHW.
      .Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.layout_nodes, 4);  // Two Convs, the BatchNormalization and the Mul.
  EXPECT_EQ(FindTensor(*ort, "cat.nchwc").bytes, 16 * 16 * 16 * 4);
  EXPECT_EQ(FindTensor(*ort, "norm.nchwc").producer, "bn");
  EXPECT_EQ(FindTensor(*ort, "scaled.nchwc").shares_with, "");  // Not in place: a Conv now.
  EXPECT_EQ(FindTensor(*ort, "scaled").producer, "ReorderOutput(scaled)");
  EXPECT_FALSE(IsArenaTensor(*ort, "y.nchwc"));
}

TEST(OnnxRuntimeCpuTest, NchwcTransposeToNhwcIsTheReorder) {
  ModelBuilder builder = ConvModel();
  SetInts(builder.Node("Transpose", {"c"}, {"y"}, "to_nhwc"), "perm", {0, 2, 3, 1});
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(FindTensor(*ort, "y").producer, "to_nhwc");
  EXPECT_EQ(ort->modes.reorder_nodes, 2);  // x in, and the Transpose itself.
}

TEST(OnnxRuntimeCpuTest, NllLossHoldsPerSampleBuffers) {
  // [3, 5, 4320] log-probabilities: 12,960 samples; measured 7.5 bytes per
  // sample without a weight, 11.6 with one, whatever the class count.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {3, 5, 4320})
      .Input("t", onnx::TensorProto::INT64, {3, 4320})
      .Input("w", onnx::TensorProto::FLOAT, {5});
  builder.Node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"loss"}, "nll");
  builder.Output("loss");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "nll"), 4 * 12960 * 3);  // Mean, weighted.
  builder.graph().mutable_node(0)->mutable_input()->RemoveLast();
  absl::StatusOr<Analysis> unweighted = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(unweighted.ok()) << unweighted.status();
  EXPECT_EQ(WorkspaceOf(*unweighted, "nll"), 4 * 12960 * 2);
  // An ignore_index: measured 29.1 more bytes per sample for "mean".
  SetInt(*builder.graph().mutable_node(0), "ignore_index", -5);
  absl::StatusOr<Analysis> ignoring = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ignoring.ok()) << ignoring.status();
  EXPECT_EQ(WorkspaceOf(*ignoring, "nll"), (4 * 2 + 30) * 12960);
}

TEST(OnnxRuntimeCpuTest, OnlyTheKernelsOrtRunsInPlaceDoSo) {
  // Measured (probe_models.py inplace_*): Relu in place, Add and Exp not.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1024})
      .Add("Neg", {"x"}, {"a"})
      .Add("Relu", {"a"}, {"r"})
      .Add("Exp", {"r"}, {"e"})
      .Add("Abs", {"x"}, {"b"})
      .Add("Add", {"e", "b"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(FindTensor(*ort, "r").shares_with, "a");
  EXPECT_EQ(FindTensor(*ort, "e").shares_with, "");
  EXPECT_EQ(FindTensor(*ort, "y").shares_with, "");
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(FindTensor(*plain, "e").shares_with, "a");  // The spec's rule: any elementwise op.
  EXPECT_NE(FindTensor(*plain, "y").shares_with, "");
}

TEST(OnnxRuntimeCpuTest, TransposesAroundASoftmaxCancelAndItsKernelTransposes) {
  // Transpose, LogSoftmax(axis 2), inverse Transpose: the transpose optimizer
  // leaves LogSoftmax(axis 1), whose kernel holds two transposed copies.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {3, 5, 64});
  SetInts(builder.Node("Transpose", {"x"}, {"t"}, "in"), "perm", {0, 2, 1});
  SetInt(builder.Node("LogSoftmax", {"t"}, {"l"}, "softmax"), "axis", 2);
  SetInts(builder.Node("Transpose", {"l"}, {"y"}, "out"), "perm", {0, 2, 1});
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "t"));
  EXPECT_FALSE(IsArenaTensor(*ort, "l"));
  EXPECT_EQ(ort->modes.fused_nodes, 2);
  EXPECT_EQ(FindTensor(*ort, "y").producer, "softmax");
  EXPECT_EQ(WorkspaceOf(*ort, "softmax"), 2 * 3 * 5 * 64 * 4);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "t"));
  EXPECT_EQ(plain->memory.workspace_bytes, 0);
}

TEST(OnnxRuntimeCpuTest, SoftmaxAlongTheLastAxisHasNoWorkspace) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {3, 5, 64});
  SetInt(builder.Node("Softmax", {"x"}, {"y"}, "softmax"), "axis", -1);
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "softmax"), 0);
}

TEST(OnnxRuntimeCpuTest, GraphInputsLiveUntilTheRunEnds) {
  // The caller owns the inputs: ORT frees none of them during the run.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1024}).Add("Relu", {"x"}, {"a"}).Add("Sigmoid", {"a"}, {"y"});
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, {.runtime = "onnxruntime-cpu:avx2"});
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(FindTensor(*ort, "x").last_step, 1);
  EXPECT_EQ(ort->memory.lower_bound_bytes, 3 * 4096);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(FindTensor(*plain, "x").last_step, 0);  // The spec's: its last reader.
  EXPECT_EQ(plain->memory.lower_bound_bytes, 2 * 4096);
}

TEST(OnnxRuntimeCpuTest, ConvMulOfAPerChannelWeightFolds) {
  ModelBuilder builder = ConvModel();
  builder.Initializer("per_channel", onnx::TensorProto::FLOAT, {8, 1, 1})
      .Initializer("per_column", onnx::TensorProto::FLOAT, {16})
      .Add("Mul", {"c", "per_channel"}, {"scaled"})
      .Add("Add", {"scaled", "per_column"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));  // conv_mul_fusion.cc.
  EXPECT_EQ(ort->modes.fused_nodes, 1);     // A [16] bias broadcasts along the width: conv_add_fusion.cc refuses it.
}

TEST(OnnxRuntimeCpuTest, MatMulAddFuses) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {4, 16})
      .Initializer("w", onnx::TensorProto::FLOAT, {16, 32})
      .Initializer("b", onnx::TensorProto::FLOAT, {32})
      .Add("MatMul", {"x", "w"}, {"m"})
      .Add("Add", {"m", "b"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "m"));  // matmul_add_fusion.cc: one Gemm.
  EXPECT_EQ(ort->modes.fused_nodes, 1);
}

TEST(OnnxRuntimeCpuTest, GraphOutputsAreNeverFusedAway) {
  ModelBuilder builder = ConvModel();
  builder.Add("Relu", {"c"}, {"y"}).Output("c").Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(ort->modes.fused_nodes, 0);
}

TEST(OnnxRuntimeCpuTest, NchwcConvHasNoWorkspace) {
  ModelBuilder builder = ConvModel();
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.workspace_bytes, 0);
}

TEST(OnnxRuntimeCpuTest, Im2colConvHoldsMlasSegmentsAtItsStep) {
  // A 1-D Conv: NCHWc takes 2-D ones only, so MLAS's im2col path;
  // 4 filters <= 64 output pixels: one segment of 128 x 128 floats.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 64}).Initializer("w", onnx::TensorProto::FLOAT, {4, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1});
  builder.Add("Relu", {"x"}, {"unfused"}).Output("c").Output("unfused");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 128 * 128 * 4);
  EXPECT_EQ(ort->memory.workspace_bytes, 128 * 128 * 4);
  for (const TensorRecord& tensor : ort->tensors) {
    if (tensor.role != TensorRole::kKernelWorkspace) continue;
    EXPECT_EQ(tensor.first_step, tensor.last_step);  // Live at its node's step only.
  }
  EXPECT_GE(ort->memory.lower_bound_bytes, 128 * 128 * 4);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.workspace_bytes, 0);
}

TEST(OnnxRuntimeCpuTest, Im2colConvWithMoreFiltersThanPixelsExpandsFully) {
  // 20 filters > 2 output pixels: the whole im2col matrix, 2 x (3*3) floats.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 4}).Initializer("w", onnx::TensorProto::FLOAT, {20, 3, 3});
  builder.Node("Conv", {"x", "w"}, {"c"}, "conv");
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 128);  // 72 bytes, aligned to 64.
}

TEST(OnnxRuntimeCpuTest, TwoDimensionalConvOfAnyWidthIsNchwc) {
  ModelBuilder builder;  // 4 filters: NCHWc pads them to the block (pytorch-converted test_Conv2d, measured).
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).Initializer("w", onnx::TensorProto::FLOAT, {4, 3, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.workspace_bytes, 0);
}

TEST(OnnxRuntimeCpuTest, PointwiseConvHasNoWorkspace) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).Initializer("w", onnx::TensorProto::FLOAT, {4, 3, 1, 1});
  builder.Node("Conv", {"x", "w"}, {"c"}, "conv");
  builder.Output("c");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.workspace_bytes, 0);
}

TEST(OnnxRuntimeCpuTest, LrnHoldsScaleAndPaddedSquare) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 4, 8, 8});
  SetInt(builder.Node("LRN", {"x"}, {"y"}, "lrn"), "size", 3);
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "lrn"), 4 * (4 * 8 * 8 + (4 + 3 - 1) * 8 * 8));  // lrn.cc's two buffers.
}

int64_t AlignedTo64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// An LSTM node (hidden H, weights w, r, b) of `input`, named "lstm".
void AddLstm(ModelBuilder& builder, const std::string& input, int64_t hidden, const std::string& direction,
             const std::vector<std::string>& outputs) {
  onnx::NodeProto& lstm = builder.Node("LSTM", {input, "w", "r", "b"}, outputs, "lstm");
  SetInt(lstm, "hidden_size", hidden);
  onnx::AttributeProto* direction_attribute = lstm.add_attribute();
  direction_attribute->set_name("direction");
  direction_attribute->set_type(onnx::AttributeProto::STRING);
  direction_attribute->set_s(direction);
}

// x [S, B, I] -> LSTM (hidden H, W, R, B) -> Y, Y_h, Y_c as `outputs` names them ("" leaves one out).
ModelBuilder OneLstm(int64_t seq, int64_t batch, int64_t input, int64_t hidden, const std::string& direction,
                     const std::vector<std::string>& outputs) {
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {seq, batch, input})
      .Initializer("w", onnx::TensorProto::FLOAT, {directions, 4 * hidden, input})
      .Initializer("r", onnx::TensorProto::FLOAT, {directions, 4 * hidden, hidden})
      .Initializer("b", onnx::TensorProto::FLOAT, {directions, 8 * hidden});
  AddLstm(builder, "x", hidden, direction, outputs);
  for (const std::string& output : outputs) {
    if (!output.empty()) builder.Output(output);
  }
  return builder;
}

TEST(OnnxRuntimeCpuTest, LstmHoldsItsGatesAndStates) {
  // uni_directional_lstm.cc's buffers, in floats: 2 H + 3 B H + 4 H B S + 4 H
  // (bias), and B int32 sequence lengths.
  absl::StatusOr<Analysis> forward = AnalyzeBuilt(OneLstm(32, 4, 64, 64, "forward", {"y", "y_h", "y_c"}), kOrt);
  ASSERT_TRUE(forward.ok()) << forward.status();
  const int64_t one_direction = 4 * (2 * 64 + 3 * 4 * 64 + 4 * 64 * 4 * 32 + 4 * 64) + 4 * 4;
  EXPECT_EQ(WorkspaceOf(*forward, "lstm"), AlignedTo64(one_direction));
  // Bidirectional: both directions at once, the reverse one with reversed
  // inputs and outputs (S B I + S B H floats); no Y_c: D B H floats of its own.
  absl::StatusOr<Analysis> both = AnalyzeBuilt(OneLstm(32, 4, 64, 64, "bidirectional", {"y", "y_h"}), kOrt);
  ASSERT_TRUE(both.ok()) << both.status();
  const int64_t reversed = 4 * (32 * 4 * 64 + 32 * 4 * 64);
  EXPECT_EQ(WorkspaceOf(*both, "lstm"), AlignedTo64(2 * one_direction + reversed + 4 * 2 * 4 * 64));
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(OneLstm(32, 4, 64, 64, "forward", {"y", "y_h", "y_c"}));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.workspace_bytes, 0);
}

// cond, x [16, 64]; y = If(cond): then MatMul(x, Transpose(w)), else
// MatMul(x, v), with w [128, 64] and v [64, 128] main-graph weights.
ModelBuilder IfReadingMainWeights(bool w_is_graph_input) {
  ModelBuilder then_branch;
  then_branch.Add("Transpose", {"w"}, {"wt"}, "then_transpose")
      .Add("MatMul", {"x", "wt"}, {"t"}, "then_matmul")
      .Output("t", onnx::TensorProto::FLOAT, {16, 128});
  then_branch.graph().set_name("then");
  ModelBuilder else_branch;
  else_branch.Add("MatMul", {"x", "v"}, {"e"}, "else_matmul").Output("e", onnx::TensorProto::FLOAT, {16, 128});
  else_branch.graph().set_name("else");
  ModelBuilder builder;
  builder.Input("cond", onnx::TensorProto::BOOL, {}).Input("x", onnx::TensorProto::FLOAT, {16, 64});
  if (w_is_graph_input) builder.Input("w", onnx::TensorProto::FLOAT, {128, 64});
  builder.Initializer("w", onnx::TensorProto::FLOAT, {128, 64}).Initializer("v", onnx::TensorProto::FLOAT, {64, 128});
  onnx::NodeProto& node = builder.Node("If", {"cond"}, {"y"}, "if");
  for (auto [name, branch] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    *attribute->mutable_g() = branch->Build().graph();
  }
  builder.Output("y");
  return builder;
}

TEST(OnnxRuntimeCpuTest, BodyNodesReadingMainWeightsFold) {
  const AnalyzeOptions folding = {.fold_constants = true, .runtime = "onnxruntime-cpu:avx2"};
  // ORT's ConstantFolding recurses into the branches and reads the main
  // graph's initializers as constants: the Transpose of w is a weight, and
  // the then branch holds only t (8 KiB), as the else branch does.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(IfReadingMainWeights(false), folding);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(*FindTensor(*ort, "if/body").bytes, 16 * 128 * 4);
  // Without --runtime the branches are planned as written: wt (32 KiB) and t.
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(IfReadingMainWeights(false), {.fold_constants = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*FindTensor(*plain, "if/body").bytes, 128 * 64 * 4 + 16 * 128 * 4);
  // An initializer that is also a graph input (IR >= 4) may be overridden at
  // run time: ORT does not fold what reads it.
  absl::StatusOr<Analysis> overridable = AnalyzeBuilt(IfReadingMainWeights(true), folding);
  ASSERT_TRUE(overridable.ok()) << overridable.status();
  EXPECT_EQ(*FindTensor(*overridable, "if/body").bytes, 128 * 64 * 4 + 16 * 128 * 4);
}

TEST(OnnxRuntimeCpuTest, BodyKernelsHoldTheirScratch) {
  // cond, x [32, 4, 64]; y = If(cond): then an LSTM (Y only) of Neg(x),
  // else Neg(x). ORT runs a branch's nodes with the same kernels: the LSTM's
  // buffers are in the then branch's peak with the runtime, not without. (The
  // LSTM reads a value of the branch, whose shape the branch's sizes know.)
  ModelBuilder then_branch;
  then_branch.Add("Neg", {"x"}, {"x1"}, "then_neg");
  AddLstm(then_branch, "x1", 64, "forward", {"t"});
  then_branch.Output("t", onnx::TensorProto::FLOAT, {32, 1, 4, 64});
  then_branch.graph().set_name("then");
  ModelBuilder else_branch;
  else_branch.Add("Neg", {"x"}, {"e"}, "else_neg").Output("e", onnx::TensorProto::FLOAT, {32, 4, 64});
  else_branch.graph().set_name("else");
  ModelBuilder builder;
  builder.Input("cond", onnx::TensorProto::BOOL, {})
      .Input("x", onnx::TensorProto::FLOAT, {32, 4, 64})
      .Initializer("w", onnx::TensorProto::FLOAT, {1, 256, 64})
      .Initializer("r", onnx::TensorProto::FLOAT, {1, 256, 64})
      .Initializer("b", onnx::TensorProto::FLOAT, {1, 512});
  onnx::NodeProto& node = builder.Node("If", {"cond"}, {"y"}, "if");
  for (auto [name, branch] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    *attribute->mutable_g() = branch->Build().graph();
  }
  builder.Output("y");
  const int64_t output = 32 * 4 * 64 * 4;
  // No Y_h and Y_c: D B H floats each besides the buffers of LstmHoldsItsGatesAndStates.
  const int64_t scratch = 4 * (2 * 64 + 3 * 4 * 64 + 4 * 64 * 4 * 32 + 4 * 64) + 4 * 4 + 2 * 4 * 4 * 64;
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(*FindTensor(*ort, "if/body").bytes, 2 * output + AlignedTo64(scratch));  // x1, t and the scratch.
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(*FindTensor(*plain, "if/body").bytes, 2 * output);
}

namespace isa {

const AnalyzeOptions kAvx2 = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx2"};
const AnalyzeOptions kAvx512 = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx512"};
const AnalyzeOptions kArm64 = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:arm64"};

// x [1, cin, 8, 8] -> Conv (filters, cin / group per filter, 3x3, pad 1, group) -> c.
ModelBuilder OneConv(int64_t cin, int64_t filters, int64_t group = 1) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, cin, 8, 8})
      .Initializer("w", onnx::TensorProto::FLOAT, {filters, cin / group, 3, 3});
  onnx::NodeProto& conv = builder.Node("Conv", {"x", "w"}, {"c"}, "conv");
  SetInts(conv, "pads", {1, 1, 1, 1});
  SetInt(conv, "group", group);
  builder.Output("c");
  return builder;
}

Analysis Analyze(const ModelBuilder& builder, const AnalyzeOptions& options) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, options);
  EXPECT_TRUE(analysis.ok()) << analysis.status();
  return analysis.ok() ? *std::move(analysis) : Analysis();
}

int64_t BlockedChannels(const Analysis& analysis, const std::string& name) {
  const TensorRecord& tensor = FindTensor(analysis, name);
  return tensor.shape.has_value() ? (*tensor.shape)[1].value.value_or(-1) : -1;
}

TEST(RuntimeIsaTest, ReportsNameTheIsa) {
  EXPECT_EQ(Analyze(OneConv(8, 8), kAvx512).modes.runtime_isa, "avx512");
  EXPECT_EQ(Analyze(OneConv(8, 8), kAvx2).modes.runtime_isa, "avx2");
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> host = MakeRuntimeModel("onnxruntime-cpu");
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<ort::CpuIsa> expected = ort::HostCpuIsa();
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ((*host)->isa(), ort::CpuIsaName(*expected));  // Plain onnxruntime-cpu: this machine's.
  EXPECT_TRUE(Analyze(OneConv(8, 8), {}).modes.runtime_isa.empty());
}

TEST(RuntimeIsaTest, UnknownIsaListsTheKnownOnes) {
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> sse = MakeRuntimeModel("onnxruntime-cpu:sse");
  ASSERT_FALSE(sse.ok());
  EXPECT_EQ(sse.status().message(),
            "onnxruntime-cpu takes an ISA, one of avx2, avx512, arm64, and noarena, got 'sse'");
  EXPECT_FALSE(MakeRuntimeModel("onnxruntime-cpu:avx2,avx512").ok());
}

TEST(RuntimeIsaTest, BlockIs8OnAvx2And16OnAvx512) {
  const ModelBuilder builder = OneConv(16, 4);  // 4 filters padded to one block.
  EXPECT_EQ(BlockedChannels(Analyze(builder, kAvx2), "c.nchwc"), 8);
  EXPECT_EQ(BlockedChannels(Analyze(builder, kAvx512), "c.nchwc"), 16);
  EXPECT_EQ(FindTensor(Analyze(builder, kAvx512), "c.nchwc").bytes, 16 * 8 * 8 * 4);
}

TEST(RuntimeIsaTest, InputOfFewerChannelsThanABlockIsReadAsItIs) {
  const ModelBuilder builder = OneConv(8, 16);  // Reordered at block 8, read as NCHW at 16.
  EXPECT_TRUE(IsArenaTensor(Analyze(builder, kAvx2), "x.nchwc"));
  const Analysis avx512 = Analyze(builder, kAvx512);
  EXPECT_FALSE(IsArenaTensor(avx512, "x.nchwc"));
  EXPECT_EQ(avx512.modes.layout_nodes, 1);
}

TEST(RuntimeIsaTest, InputChannelsArePaddedToBlocksWhenAMultipleOfFour) {
  // Cin 24: one ReorderInput to 3 blocks of 8, or to 2 blocks of 16.
  EXPECT_EQ(BlockedChannels(Analyze(OneConv(24, 32), kAvx2), "x.nchwc"), 24);
  EXPECT_EQ(BlockedChannels(Analyze(OneConv(24, 32), kAvx512), "x.nchwc"), 32);
  EXPECT_EQ(BlockedChannels(Analyze(OneConv(12, 32), kAvx2), "x.nchwc"), 16);
  // Cin 18: ReorderInput takes multiples of 4 only, so no NCHWc at either block.
  EXPECT_EQ(Analyze(OneConv(18, 32), kAvx2).modes.layout_nodes, 0);
  EXPECT_EQ(Analyze(OneConv(18, 32), kAvx512).modes.layout_nodes, 0);
}

TEST(RuntimeIsaTest, DepthwiseNeedsAMultipleOfFourChannels) {
  EXPECT_EQ(BlockedChannels(Analyze(OneConv(24, 24, 24), kAvx512), "c.nchwc"), 32);
  EXPECT_EQ(BlockedChannels(Analyze(OneConv(24, 24, 24), kAvx2), "c.nchwc"), 24);
  EXPECT_EQ(Analyze(OneConv(6, 6, 6), kAvx2).modes.layout_nodes, 0);
  EXPECT_EQ(Analyze(OneConv(6, 6, 6), kAvx512).modes.layout_nodes, 0);
}

TEST(RuntimeIsaTest, GroupsNeedWholeBlocksPerGroup) {
  const ModelBuilder builder = OneConv(32, 32, 4);  // 8 input and 8 output channels per group.
  EXPECT_EQ(Analyze(builder, kAvx2).modes.layout_nodes, 1);
  EXPECT_EQ(Analyze(builder, kAvx512).modes.layout_nodes, 0);
}

TEST(RuntimeIsaTest, PoolAndConcatNeedWholeBlocks) {
  ModelBuilder builder;  // Two Convs of 8 filters, a MaxPool of one, a Concat of both.
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 16, 8, 8})
      .Initializer("wa", onnx::TensorProto::FLOAT, {8, 16, 1, 1})
      .Initializer("wb", onnx::TensorProto::FLOAT, {8, 16, 1, 1});
  builder.Node("Conv", {"x", "wa"}, {"a"}, "conv_a");
  builder.Node("Conv", {"x", "wb"}, {"b"}, "conv_b");
  onnx::NodeProto& pool = builder.Node("MaxPool", {"a"}, {"p"}, "pool");
  SetInts(pool, "kernel_shape", {2, 2});
  SetInts(pool, "strides", {2, 2});
  SetInt(builder.Node("Concat", {"a", "b"}, {"cat"}, "concat"), "axis", 1);
  builder.Output("p").Output("cat");
  const Analysis avx2 = Analyze(builder, kAvx2);
  EXPECT_TRUE(IsArenaTensor(avx2, "p.nchwc"));
  EXPECT_TRUE(IsArenaTensor(avx2, "cat.nchwc"));
  const Analysis avx512 = Analyze(builder, kAvx512);
  EXPECT_FALSE(IsArenaTensor(avx512, "p.nchwc"));
  EXPECT_FALSE(IsArenaTensor(avx512, "cat.nchwc"));
  EXPECT_EQ(avx512.modes.layout_nodes, 2);  // The two Convs only.
}

TEST(RuntimeIsaTest, AGroupedOrBatchedIm2colConvTakesOneSegmentWithOneThread) {
  // 32 channels in 4 groups of 8 stay NCHW at block 16; ORT 1.30 (one
  // thread) measures 64 KiB of workspace for it (probe conv_group4_56), and
  // for a batch of 2 (conv_batch2_56), not max(OutputSize * K, ...) floats.
  auto conv = [](int64_t batch, int64_t channels, int64_t group) {
    ModelBuilder builder;
    builder.Input("x", onnx::TensorProto::FLOAT, {batch, channels, 56, 56})
        .Initializer("w", onnx::TensorProto::FLOAT, {channels, channels / group, 3, 3});
    onnx::NodeProto& node = builder.Node("Conv", {"x", "w"}, {"c"}, "conv");
    SetInts(node, "pads", {1, 1, 1, 1});
    SetInt(node, "group", group);
    builder.Output("c");
    return builder;
  };
  const Analysis grouped = Analyze(conv(1, 32, 4), kAvx512);
  EXPECT_EQ(grouped.modes.layout_nodes, 0);
  EXPECT_EQ(WorkspaceOf(grouped, "conv"), 128 * 128 * 4);
  const Analysis batched = Analyze(conv(2, 18, 1), kAvx512);
  EXPECT_EQ(batched.modes.layout_nodes, 0);
  EXPECT_EQ(WorkspaceOf(batched, "conv"), 128 * 128 * 4);
}

TEST(RuntimeIsaTest, Arm64HasNoNchwcAndADirectDepthwiseKernel) {
  const Analysis arm64 = Analyze(OneConv(16, 16, 16), kArm64);
  EXPECT_EQ(arm64.modes.layout_nodes + arm64.modes.reorder_nodes, 0);
  EXPECT_GE(WorkspaceOf(arm64, "conv"), (8 + 2) * 4);  // A zero row of the width + 2 floats, aligned.
  EXPECT_LT(WorkspaceOf(arm64, "conv"), 128);
  const Analysis dense = Analyze(OneConv(16, 16), kArm64);
  EXPECT_EQ(dense.modes.layout_nodes, 0);
  EXPECT_EQ(WorkspaceOf(dense, "conv"), 128 * 128 * 4);  // MLAS's im2col segment.
}

}  // namespace isa

// Five 1x1 Convs whose weights ConstantOfShape makes from shape initializers
// also listed as graph inputs (IR >= 4: overridable). c1 is freed when d is
// made; e, of c1's shape, comes two steps later. With every dim known ORT's
// planner hands c1's buffer to e and keeps it allocated in between, over h;
// with none known (ORT infers no dims from an overridable shape) nothing is
// reused, and the file's own value_info gives the dims back.
ModelBuilder OverridableShapesChain(bool declare_dims) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 64, 32, 32});
  const std::vector<std::vector<int64_t>> weights = {{64, 64, 1, 1}, {128, 64, 1, 1}, {128, 128, 1, 1},
                                                     {64, 128, 1, 1}, {32, 64, 1, 1}};
  const std::vector<std::string> chain = {"x", "c1", "d", "h", "e", "y"};
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    builder.Input("s" + n, onnx::TensorProto::INT64, {4}).Int64Initializer("s" + n, weights[i]);
    builder.Add("ConstantOfShape", {"s" + n}, {"w" + n}, "fill" + n);
    builder.Add("Conv", {chain[i], "w" + n}, {chain[i + 1]}, "conv" + n);
    if (!declare_dims) continue;
    builder.ValueInfo("w" + n, onnx::TensorProto::FLOAT, {weights[i][0], weights[i][1], 1, 1});
    if (i + 1 < weights.size()) builder.ValueInfo(chain[i + 1], onnx::TensorProto::FLOAT, {1, weights[i][0], 32, 32});
  }
  builder.Output("y", onnx::TensorProto::FLOAT, {1, 32, 32, 32});
  return builder;
}

TEST(OnnxRuntimeCpuTest, OverridableShapesHideDimsFromOrtsPlannerUnlessTheFileGivesThem) {
  absl::StatusOr<Analysis> hidden = AnalyzeBuilt(OverridableShapesChain(false), kOrt);
  ASSERT_TRUE(hidden.ok()) << hidden.status();
  absl::StatusOr<Analysis> declared = AnalyzeBuilt(OverridableShapesChain(true), kOrt);
  ASSERT_TRUE(declared.ok()) << declared.status();
  EXPECT_EQ(declared->memory.runtime_tensor_bytes - hidden->memory.runtime_tensor_bytes, 64 * 32 * 32 * 4);
  // The runtime-independent plan does not depend on value_info.
  absl::StatusOr<Analysis> plain_hidden = AnalyzeBuilt(OverridableShapesChain(false), {.fold_constants = true});
  absl::StatusOr<Analysis> plain_declared = AnalyzeBuilt(OverridableShapesChain(true), {.fold_constants = true});
  ASSERT_TRUE(plain_hidden.ok() && plain_declared.ok());
  EXPECT_EQ(plain_hidden->memory.arena_bytes, plain_declared->memory.arena_bytes);
}

}  // namespace
}  // namespace footprint
