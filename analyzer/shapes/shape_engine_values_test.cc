// Values known before running: the pads chain PyTorch exports for F.pad,
// values of graph inputs (--input-value), and If conditions decided by them
// or by shapes.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shape_engine_test_util.h"
#include "analyzer/shapes/shapes.h"
#include "analyzer/testing/lstm_models.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/value_models.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::TestDim;

// The engine's tables for a built model with --input-value bindings.
ShapeTables InferWithValues(const onnx::ModelProto& model, const std::map<std::string, std::string>& values) {
  absl::StatusOr<InputValues> parsed = ParseInputValues(values, model);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<ShapeTables> tables = InferSymbolicShapes(model, {}, {}, true, parsed.ok() ? *parsed : InputValues{});
  EXPECT_TRUE(tables.ok()) << tables.status();
  return tables.ok() ? *std::move(tables) : ShapeTables{};
}

// "1,1024" for the main graph's value `name` ("unranked", "missing").
std::string ShapeOf(const ShapeTables& tables, const onnx::ModelProto& model, const std::string& name) {
  const SymValue* v = tables.graphs.at(&model.graph()).Find(name);
  if (v == nullptr) return "missing";
  if (!v->shape.has_value()) return "unranked";
  return absl::StrJoin(*v->shape, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
}

// "node:branch" per If, in the order met.
std::string Decisions(const ShapeTables& tables) {
  return absl::StrJoin(tables.if_decisions, " ", [](std::string* out, const IfDecision& d) {
    absl::StrAppend(out, d.node, ":", d.branch, d.decided_by.empty() ? "" : "(" + d.decided_by + ")");
  });
}

TEST(ValuesTest, TorchPadChainIsFollowedAtEveryRank) {
  for (const std::string mode : {"reflect", "constant"}) {
    for (int64_t rank = 2; rank <= 5; ++rank) {
      SCOPED_TRACE(absl::StrCat(mode, " rank ", rank));
      std::vector<TestDim> dims;
      std::string expected;
      for (int64_t d = 0; d < rank; ++d) {
        dims.push_back(d == 0 ? TestDim("batch") : TestDim(int64_t{10 + d}));
        // Torch pads (2, 3) the last dim and (1, 1) the one before it.
        int64_t size = 10 + d;
        if (d == rank - 1) size += 5;
        if (d == rank - 2 && d > 0) size += 2;
        absl::StrAppend(&expected, d == 0 ? "" : ",", d == 0 ? (rank == 2 ? "batch+2" : "batch") : absl::StrCat(size));
      }
      ModelBuilder builder;
      builder.Opset("", 13).Input("x", kFloat, dims);
      TorchPad(builder, "x", rank, {2, 3, 1, 1}, mode, "y");
      builder.Output("y");
      Engine engine(builder);
      std::string begins, ends;
      for (int64_t d = 0; d < rank - 2; ++d) {
        absl::StrAppend(&begins, "0,");
        absl::StrAppend(&ends, "0,");
      }
      EXPECT_EQ(engine.Ints("y_pads"), absl::StrCat(begins, "1,2,", ends, "1,3"));
      EXPECT_EQ(engine.Shape("y"), expected) << engine.Value("y").reason;
    }
  }
}


TEST(ValuesTest, InputValueDecidesAnIfOnASampleRate) {
  const onnx::ModelProto model = ::footprint::testing::SampleRateIfModel().Build();
  ShapeTables at_16k = InferWithValues(model, {{"sr", "16000"}});
  EXPECT_EQ(ShapeOf(at_16k, model, "y"), "1,1024");
  EXPECT_EQ(ShapeOf(at_16k, model, "out"), "1,1024");
  EXPECT_EQ(Decisions(at_16k), "pick_rate:then");
  ShapeTables at_8k = InferWithValues(model, {{"sr", "8000"}});
  EXPECT_EQ(ShapeOf(at_8k, model, "y"), "1,512");
  EXPECT_EQ(Decisions(at_8k), "pick_rate:else");
  EXPECT_FALSE(at_8k.graphs.at(&model.graph()).Find("y")->max_over_branches);
}

TEST(ValuesTest, UnknownConditionSizesTheLargerBranchAndSaysWhatDecidesIt) {
  const onnx::ModelProto model = ::footprint::testing::SampleRateIfModel().Build();
  ShapeTables tables = InferWithValues(model, {});
  EXPECT_EQ(ShapeOf(tables, model, "y"), "1,1024");
  EXPECT_TRUE(tables.graphs.at(&model.graph()).Find("y")->max_over_branches);
  EXPECT_EQ(Decisions(tables), "pick_rate:undecided(--input-value sr=...)");
  ASSERT_FALSE(tables.warnings.empty());
  EXPECT_NE(tables.warnings.back().find("If 'pick_rate'"), std::string::npos) << tables.warnings.back();
  EXPECT_NE(tables.warnings.back().find("--input-value sr=..."), std::string::npos) << tables.warnings.back();
}

TEST(ValuesTest, DifferingBranchesTakeTheOneWithMoreElements) {
  // x [4, 8]; then: rows 0:2 -> [2, 8] (16 elements), else: columns 0:2 -> [4, 2] (8).
  // Each dim's larger would be [4, 8], twice the larger branch.
  using ::footprint::testing::ConstantInt64;
  auto branch = [](const std::string& name, int64_t axis) {
    ModelBuilder b;
    ConstantInt64(b, name + "_start", {0}, {1});
    ConstantInt64(b, name + "_end", {2}, {1});
    ConstantInt64(b, name + "_axis", {axis}, {1});
    b.Add("Slice", {"x", name + "_start", name + "_end", name + "_axis"}, {name + "_out"});
    onnx::GraphProto graph = b.Build().graph();
    graph.set_name(name);
    graph.add_output()->set_name(name + "_out");
    return graph;
  };
  ModelBuilder builder;
  builder.Input("flag", kBool, {}).Input("x", kFloat, {4, 8});
  onnx::NodeProto& node = builder.Node("If", {"flag"}, {"y"}, "pick");
  SetGraph(node, "then_branch", branch("rows", 0));
  SetGraph(node, "else_branch", branch("columns", 1));
  builder.Output("y");
  const onnx::ModelProto model = builder.Build();
  EXPECT_EQ(ShapeOf(InferWithValues(model, {}), model, "y"), "2,8");
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"flag", "0"}}), model, "y"), "4,2");
}

TEST(ValuesTest, NestedIfsOnAStatesShapeAreDecidedFromTheShape) {
  const onnx::ModelProto model = ::footprint::testing::CacheBranchModel().Build();
  // The bool input given, the state's length bound: every If is decided.
  ShapeTables cached = InferWithValues(model, {{"use_cache_branch", "1"}});
  // "past" is a symbol: Equal(past, 0) stays unknown; past >= 1 is not assumed.
  EXPECT_EQ(Decisions(cached),
            "state_is_empty:undecided(--dim past=...) state_is_scalar:else use_cache:then");
  onnx::ModelProto bound = model;
  ASSERT_TRUE(ApplyInputBindings({.input_shapes = {{"state", {4, 16}}}}, bound).ok());
  ShapeTables decided = InferWithValues(bound, {{"use_cache_branch", "true"}});
  EXPECT_EQ(Decisions(decided), "state_is_empty:else state_is_scalar:else use_cache:then");
  EXPECT_EQ(ShapeOf(decided, bound, "y"), "12,16");
  EXPECT_FALSE(decided.graphs.at(&bound.graph()).Find("y")->max_over_branches);
  ShapeTables no_cache = InferWithValues(bound, {{"use_cache_branch", "0"}});
  EXPECT_EQ(ShapeOf(no_cache, bound, "y"), "8,16");
  ShapeTables unknown = InferWithValues(bound, {});
  EXPECT_EQ(ShapeOf(unknown, bound, "y"), "12,16");
  EXPECT_TRUE(unknown.graphs.at(&bound.graph()).Find("y")->max_over_branches);
  EXPECT_EQ(Decisions(unknown),
            "state_is_empty:else state_is_scalar:else use_cache:undecided(--input-value use_cache_branch=...)");
}

TEST(ValuesTest, StftFeedingAnLstmIsSizedInEachBranch) {
  const onnx::ModelProto model = ::footprint::testing::StftLstmModel().Build();
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"sr", "16000"}}), model, "y"), "13,1,1,64");
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"sr", "8000"}}), model, "y"), "26,1,1,64");
  ShapeTables unknown = InferWithValues(model, {});
  EXPECT_EQ(ShapeOf(unknown, model, "y"), "26,1,1,64");
  EXPECT_TRUE(unknown.graphs.at(&model.graph()).Find("y")->max_over_branches);
}

// A value of any graph (bodies included) by name; nullptr when none has it.
const SymValue* FindAnywhere(const ShapeTables& tables, const std::string& name) {
  for (const auto& [graph, shapes] : tables.graphs) {
    if (const SymValue* v = shapes.Find(name)) return v;
  }
  return nullptr;
}

// The names of tensors, in every graph, whose byte count is not known.
std::vector<std::string> UnsizedTensors(const ShapeTables& tables) {
  std::vector<std::string> names;
  for (const auto& [graph, shapes] : tables.graphs) {
    for (const auto& [name, index] : shapes.index) {
      const SymValue& v = shapes.values[index];
      if (v.kind != SymValue::Kind::kSequence && !BytesOf(v).known()) names.emplace_back(name);
    }
  }
  return names;
}

std::string BodyShape(const ShapeTables& tables, const std::string& name) {
  const SymValue* v = FindAnywhere(tables, name);
  if (v == nullptr) return "missing";
  if (!v->shape.has_value()) return "unranked";
  return absl::StrJoin(*v->shape, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
}

TEST(ValuesTest, VoiceActivityModelIsSizedWithAndWithoutItsSampleRate) {
  onnx::ModelProto model = ::footprint::testing::VoiceActivityModel().Build();
  ASSERT_TRUE(BindDims({{"batch", 2}}, model).ok());
  ShapeTables at_16k = InferWithValues(model, {{"sr", "16000"}});
  EXPECT_EQ(UnsizedTensors(at_16k), std::vector<std::string>{});
  EXPECT_EQ(ShapeOf(at_16k, model, "context_out"), "2,64");
  EXPECT_FALSE(at_16k.graphs.at(&model.graph()).Find("context_out")->max_over_branches);
  ShapeTables at_8k = InferWithValues(model, {{"sr", "8000"}});
  EXPECT_EQ(UnsizedTensors(at_8k), std::vector<std::string>{});
  EXPECT_EQ(ShapeOf(at_8k, model, "context_out"), "2,32");
  EXPECT_EQ(Decisions(at_8k), "state_is_empty_16k:else state_is_empty_8k:else flatten_8k:then pick_rate:else");
  EXPECT_FALSE(FindAnywhere(at_8k, "n_stateN")->max_over_branches);

  // Without sr: the 8 kHz branch's Ifs are undecided. The slice whose length
  // is sr's value keeps the state's extent (128 channels, a bound), and the
  // Ifs on its length stay undecided: every tensor is sized.
  ShapeTables unknown = InferWithValues(model, {});
  EXPECT_EQ(UnsizedTensors(unknown), std::vector<std::string>{});
  EXPECT_EQ(Decisions(unknown),
            "state_is_empty_16k:else state_is_empty_8k:undecided(--input-value sr=...) "
            "flatten_8k:undecided(--input-value sr=...) pick_rate:undecided(--input-value sr=...)");
  EXPECT_EQ(BodyShape(unknown, "n_sliced"), "2,2,128");
  EXPECT_TRUE(FindAnywhere(unknown, "n_sliced")->extent_bound);
  EXPECT_FALSE(FindAnywhere(unknown, "n_sliced")->max_over_branches);
  // The kept slice has more bytes than the zeros: it bounds the If's output.
  EXPECT_EQ(BodyShape(unknown, "n_state"), "2,2,128");
  EXPECT_TRUE(FindAnywhere(unknown, "n_state")->max_over_branches);
  // Ranks differ, bytes equal: one branch's shape (the then branch's), and what follows from it.
  EXPECT_EQ(BodyShape(unknown, "n_flat"), "2,256");
  // [2, 4, 64] + [1, 2, 64]: the bound's dim against the exact one, the larger.
  EXPECT_EQ(BodyShape(unknown, "n_sum"), "2,4,64");
  EXPECT_EQ(BodyShape(unknown, "n_stateN"), "2,4,128");
  EXPECT_TRUE(FindAnywhere(unknown, "n_stateN")->max_over_branches);
  EXPECT_EQ(ShapeOf(unknown, model, "stateN"), "2,4,128");
  EXPECT_EQ(ShapeOf(unknown, model, "context_out"), "2,64");
  EXPECT_TRUE(unknown.graphs.at(&model.graph()).Find("context_out")->max_over_branches);
  const std::string warnings = absl::StrJoin(unknown.warnings, "\n");
  EXPECT_NE(warnings.find("If 'state_is_empty_8k'"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("If 'flatten_8k'"), std::string::npos) << warnings;
}

// A Slice whose end is not known keeps its input's extent only inside an
// undecided If's branch: elsewhere it stays unsized, as before.
TEST(ValuesTest, SliceOfUnknownEndIsBoundedOnlyInUndecidedBranches) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4, 16}).Input("end", kInt64, {1});
  ::footprint::testing::ConstantInt64(builder, "begin", {0}, {1});
  ::footprint::testing::ConstantInt64(builder, "axis", {1}, {1});
  builder.Add("Slice", {"x", "begin", "end", "axis"}, {"head"}).Add("Relu", {"head"}, {"y"}).Output("y");
  const onnx::ModelProto model = builder.Build();
  ShapeTables tables = InferWithValues(model, {});
  EXPECT_EQ(ShapeOf(tables, model, "y"), "4,?");
  EXPECT_FALSE(tables.graphs.at(&model.graph()).Find("y")->extent_bound);
}

// An undecided If whose branches give sequences of known elements: the one
// with more bytes sizes the output, a bound; equal sequences are not one.
TEST(ValuesTest, UndecidedIfOfSequencesTakesTheOneWithMoreBytes) {
  auto model_with = [](int then_copies, int else_copies) {
    ModelBuilder then_builder, else_builder;
    then_builder.Add("SequenceConstruct", std::vector<std::string>(then_copies, "x"), {"few"});
    else_builder.Add("SequenceConstruct", std::vector<std::string>(else_copies, "x"), {"many"});
    auto graph_of = [](const ModelBuilder& b, const std::string& name, const std::string& output) {
      onnx::GraphProto graph = b.Build().graph();
      graph.set_name(name);
      graph.add_output()->set_name(output);
      return graph;
    };
    ModelBuilder builder;
    builder.Input("flag", kBool, {}).Input("x", kFloat, {4, 8});
    onnx::NodeProto& node = builder.Node("If", {"flag"}, {"seq"}, "pick");
    SetGraph(node, "then_branch", graph_of(then_builder, "then", "few"));
    SetGraph(node, "else_branch", graph_of(else_builder, "else", "many"));
    builder.Output("seq");
    return builder.Build();
  };
  const onnx::ModelProto differing = model_with(1, 2);
  ShapeTables tables = InferWithValues(differing, {});
  const SymValue* seq = tables.graphs.at(&differing.graph()).Find("seq");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(BytesOf(*seq).AsConstant(), std::optional<int64_t>(2 * 4 * 8 * 4));
  EXPECT_TRUE(seq->max_over_branches);
  const onnx::ModelProto same = model_with(2, 2);
  ShapeTables same_tables = InferWithValues(same, {});
  const SymValue* same_seq = same_tables.graphs.at(&same.graph()).Find("seq");
  ASSERT_NE(same_seq, nullptr);
  EXPECT_EQ(BytesOf(*same_seq).AsConstant(), std::optional<int64_t>(2 * 4 * 8 * 4));
  EXPECT_FALSE(same_seq->max_over_branches);
}

TEST(ValuesTest, UndecidedIfDecidesALoopsTripCountByItsLargerValue) {
  const onnx::ModelProto model = ::footprint::testing::TripCountIfModel().Build();
  ShapeTables unknown = InferWithValues(model, {});
  EXPECT_EQ(ShapeOf(unknown, model, "rows"), "5,4");
  EXPECT_EQ(ShapeOf(unknown, model, "out"), "5,4");
  EXPECT_TRUE(unknown.graphs.at(&model.graph()).Find("trips")->max_over_branches);
  EXPECT_TRUE(unknown.graphs.at(&model.graph()).Find("out")->max_over_branches);
  EXPECT_EQ(unknown.if_decisions.at(0).bound_branch, "else");
  ShapeTables few = InferWithValues(model, {{"flag", "1"}});
  EXPECT_EQ(ShapeOf(few, model, "out"), "3,4");
  EXPECT_FALSE(few.graphs.at(&model.graph()).Find("out")->max_over_branches);
  EXPECT_EQ(few.if_decisions.at(0).bound_branch, "");
}

TEST(ValuesTest, BranchesOfDifferentRankTakeTheOneWithMoreBytes) {
  // x [n, 4]: then Unsqueeze -> [1, n, 4] (16n bytes), else Concat(x, x) -> [2n, 4] (32n bytes).
  auto model_with = [](const std::string& else_op) {
    ModelBuilder then_builder, else_builder;
    ::footprint::testing::ConstantInt64(then_builder, "zero", {0}, {1});
    then_builder.Add("Unsqueeze", {"x", "zero"}, {"lifted"});
    if (else_op == "Concat") {
      SetInt(else_builder.Node("Concat", {"x", "x"}, {"other"}), "axis", 0);
    } else {
      else_builder.Add("Identity", {"y"}, {"other"});  // [m]: more or fewer bytes than [1, n, 4], by n and m.
    }
    auto graph_of = [](const ModelBuilder& b, const std::string& name, const std::string& output) {
      onnx::GraphProto graph = b.Build().graph();
      graph.set_name(name);
      graph.add_output()->set_name(output);
      return graph;
    };
    ModelBuilder builder;
    builder.Input("flag", kBool, {}).Input("x", kFloat, {"n", 4}).Input("y", kFloat, {"m"});
    onnx::NodeProto& node = builder.Node("If", {"flag"}, {"z"}, "pick");
    SetGraph(node, "then_branch", graph_of(then_builder, "lift", "lifted"));
    SetGraph(node, "else_branch", graph_of(else_builder, "other", "other"));
    builder.Add("Relu", {"z"}, {"out"}).Output("out");
    return builder.Build();
  };
  const onnx::ModelProto larger_else = model_with("Concat");
  ShapeTables tables = InferWithValues(larger_else, {});
  EXPECT_EQ(ShapeOf(tables, larger_else, "z"), "2*n,4");
  EXPECT_EQ(ShapeOf(tables, larger_else, "out"), "2*n,4");
  EXPECT_TRUE(tables.graphs.at(&larger_else.graph()).Find("out")->max_over_branches);
  // [1, n, 4] against [m]: which is larger depends on n and m; binding them decides.
  const onnx::ModelProto incomparable = model_with("Identity");
  const ShapeTables incomparable_tables = InferWithValues(incomparable, {});  // Outlives z.
  const SymValue* z = incomparable_tables.graphs.at(&incomparable.graph()).Find("z");
  ASSERT_NE(z, nullptr);
  EXPECT_FALSE(z->shape.has_value());
  EXPECT_NE(z->reason.find("depends on the unbound dims"), std::string::npos) << z->reason;
  onnx::ModelProto bound = incomparable;
  ASSERT_TRUE(BindDims({{"n", 2}, {"m", 100}}, bound).ok());
  EXPECT_EQ(ShapeOf(InferWithValues(bound, {}), bound, "z"), "100");
}

TEST(ValuesTest, InputValuesAreCheckedAgainstTheInput) {
  ::footprint::testing::ModelBuilder builder;
  builder.Input("sr", kInt64, {}).Input("ids", kInt64, {3}).Input("scale", kFloat, {})
      .Input("flag", kBool, {1}).Input("image", kFloat, {1, 3}).Input("text", onnx::TensorProto::STRING, {});
  const onnx::ModelProto model = builder.Build();
  auto error = [&](const std::string& name, const std::string& value) {
    absl::StatusOr<InputValues> parsed = ParseInputValues({{name, value}}, model);
    return parsed.ok() ? std::string("ok") : std::string(parsed.status().message());
  };
  EXPECT_EQ(error("sr", "16000"), "ok");
  EXPECT_EQ(error("ids", "1,2,3"), "ok");
  EXPECT_EQ(error("scale", "0.5"), "ok");
  EXPECT_EQ(error("flag", "true"), "ok");
  EXPECT_EQ(error("nope", "1"), "--input-value nope: no graph input named 'nope' (inputs: sr, ids, scale, flag, image, text)");
  EXPECT_EQ(error("sr", "1.5"), "--input-value sr: '1.5' is not an integer (the input is INT64)");
  EXPECT_EQ(error("sr", "1,2"), "--input-value sr: the input is a scalar, but 2 values were given");
  EXPECT_EQ(error("ids", "1,2"), "--input-value ids: the input has 3 elements, but 2 values were given");
  EXPECT_EQ(error("flag", "2"), "--input-value flag: '2' is not a bool (0, 1, true, false) (the input is BOOL)");
  EXPECT_EQ(error("image", "1,2,3"), "--input-value image: the input has rank 2; --input-value takes a scalar or a 1-D input");
  EXPECT_EQ(error("text", "a"), "--input-value text: the input's element type is STRING; --input-value takes integer, float or bool inputs");
  absl::StatusOr<InputValues> ids = ParseInputValues({{"ids", "1,2,3"}}, model);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->at("ids").ConcreteShape(), (std::vector<int64_t>{3}));
  onnx::ModelProto bound = model;
  ASSERT_TRUE(ApplyInputBindings({.input_values = {{"sr", "16000"}}}, bound).ok());
  EXPECT_EQ(bound.graph().input(0).type().tensor_type().shape().dim_size(), 0);
  onnx::ModelProto clash = model;
  EXPECT_FALSE(ApplyInputBindings({.input_shapes = {{"ids", {2}}}, .input_values = {{"ids", "1,2,3"}}}, clash).ok());
}


TEST(ValuesTest, UnsizedReasonNamesTheFirstUnknownValueAndTheOpThatNeedsIt) {
  // The pads chain, its torch pads a graph input instead of a Constant.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 8, 100}).Input("torch_pads", kInt64, {2});
  ::footprint::testing::TorchPad(builder, "x", 3, {0, 0}, "reflect", "y");
  onnx::NodeProto& pad_constant = *builder.graph().mutable_node(0);
  ASSERT_EQ(pad_constant.output(0), "y_pad");
  pad_constant.set_op_type("Identity");
  pad_constant.clear_attribute();
  pad_constant.add_input("torch_pads");
  builder.Output("y");
  const onnx::ModelProto model = builder.Build();
  ShapeTables unknown = InferWithValues(model, {});
  const std::string& reason = unknown.graphs.at(&model.graph()).Find("y")->reason;
  EXPECT_NE(reason.find("Pad needs the value of 'y_pads', computed from 'torch_pads', a graph input: bind it with "
                        "--input-value torch_pads=..."),
            std::string::npos)
      << reason;
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"torch_pads", "3,4"}}), model, "y"), "1,8,107");
}


TEST(ValuesTest, InputValueGivesALoopItsTripCount) {
  // Loop(n, cond, acc [4]) -> body (i, cond, acc) -> (cond, acc, acc as a scan output): [n, 4].
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = Info("i", kInt64, {});
  *body.add_input() = Info("cond_in", kBool, {});
  body.add_input()->set_name("acc_in");
  for (const auto& [in, out] : {std::pair{"cond_in", "cond_out"}, std::pair{"acc_in", "acc_out"},
                                std::pair{"acc_in", "scanned"}}) {
    onnx::NodeProto* node = body.add_node();
    node->set_op_type("Identity");
    node->add_input(in);
    node->add_output(out);
  }
  for (const char* name : {"cond_out", "acc_out", "scanned"}) body.add_output()->set_name(name);
  ModelBuilder builder;
  builder.Input("n", kInt64, {}).Input("go", kBool, {}).Input("acc", kFloat, {4});
  onnx::NodeProto& loop = builder.Node("Loop", {"n", "go", "acc"}, {"acc_final", "stacked"}, "loop");
  SetGraph(loop, "body", body);
  builder.Output("stacked");
  const onnx::ModelProto model = builder.Build();
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"n", "5"}}), model, "stacked"), "5,4");
  EXPECT_EQ(ShapeOf(InferWithValues(model, {}), model, "stacked"), "loop.trip_count,4");
}

// An undecided If whose branches give equally large values that are a
// Slice's start (2 or 800): the larger number gives the smaller slice, so
// neither branch's number bounds what follows. It stays unsized (the
// report names the deciding input) rather than a too-small "bound".
TEST(ValuesTest, UndecidedIfValuesThatAreNotSizesAreNotCarried) {
  auto branch = [](const std::string& name, int64_t start) {
    ModelBuilder b;
    ::footprint::testing::ConstantInt64(b, name + "_start", {start}, {1});
    onnx::GraphProto graph = b.Build().graph();
    graph.set_name(name);
    graph.add_output()->set_name(name + "_start");
    return graph;
  };
  ModelBuilder builder;
  builder.Input("flag", kBool, {}).Input("x", kFloat, {1600});
  onnx::NodeProto& node = builder.Node("If", {"flag"}, {"start"}, "pick_start");
  SetGraph(node, "then_branch", branch("near", 2));
  SetGraph(node, "else_branch", branch("far", 800));
  ::footprint::testing::ConstantInt64(builder, "end", {1600}, {1});
  builder.Add("Slice", {"x", "start", "end"}, {"tail"}).Add("Relu", {"tail"}, {"y"}).Output("y");
  const onnx::ModelProto model = builder.Build();
  ShapeTables undecided = InferWithValues(model, {});
  EXPECT_EQ(ShapeOf(undecided, model, "y"), "?");
  // Decided, each branch sizes it.
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"flag", "1"}}), model, "y"), "1598");
  EXPECT_EQ(ShapeOf(InferWithValues(model, {{"flag", "0"}}), model, "y"), "800");
}

// The If's decision on `node` (its ruled-out branch after a '|').
std::string DecisionOf(const ShapeTables& tables, const std::string& node) {
  for (const IfDecision& decision : tables.if_decisions) {
    if (decision.node == node) return absl::StrCat(decision.branch, "|", decision.ruled_out);
  }
  return "missing";
}

// SileroLstmModel's 8 kHz branch names its values "n_...".
std::vector<std::string> OutsideThe8kBranch(std::vector<std::string> names) {
  names.erase(std::remove_if(names.begin(), names.end(), [](const std::string& n) { return n.rfind("n_", 0) == 0; }),
              names.end());
  return names;
}

TEST(ValuesTest, ABranchThatCannotRunIsRuledOut) {
  // Silero VAD's structure at 512 samples: the 8 kHz branch's LSTM would get
  // rank 5, so without sr only the 16 kHz branch counts, as sr=16000 says.
  onnx::ModelProto model = ::footprint::testing::SileroLstmModel().Build();
  ASSERT_TRUE(BindDims({{"batch", 1}, {"samples", 512}}, model).ok());
  ShapeTables without_sr = InferWithValues(model, {});
  EXPECT_EQ(OutsideThe8kBranch(UnsizedTensors(without_sr)), std::vector<std::string>{});
  EXPECT_EQ(DecisionOf(without_sr, "If_0"),
            "then|else: LSTM 'n_rnn_LSTM': ONNX's check: first input tensor must have rank 3");
  EXPECT_EQ(ShapeOf(without_sr, model, "output"), "1,1");
  EXPECT_EQ(ShapeOf(without_sr, model, "stateN"), "2,1,128");
  EXPECT_FALSE(without_sr.graphs.at(&model.graph()).Find("stateN")->max_over_branches);
  EXPECT_FALSE(without_sr.contradictions.contains(&model.graph()));
  ShapeTables at_16k = InferWithValues(model, {{"sr", "16000"}});
  EXPECT_EQ(OutsideThe8kBranch(UnsizedTensors(at_16k)), std::vector<std::string>{});
  EXPECT_EQ(DecisionOf(at_16k, "If_0"), "then|");
  EXPECT_EQ(Decisions(at_16k), Decisions(without_sr));
  // sr=8000 at 512 samples: the model cannot run at all, and says where.
  ShapeTables at_8k = InferWithValues(model, {{"sr", "8000"}});
  ASSERT_TRUE(at_8k.contradictions.contains(&model.graph()));
  EXPECT_EQ(at_8k.contradictions.at(&model.graph()).line,
            "LSTM 'n_rnn_LSTM': ONNX's check: first input tensor must have rank 3");
}

TEST(ValuesTest, BothBranchesThatCanRunStayUndecided) {
  onnx::ModelProto model = ::footprint::testing::SileroLstmModel().Build();
  ASSERT_TRUE(BindDims({{"batch", 1}, {"samples", 256}}, model).ok());
  ShapeTables without_sr = InferWithValues(model, {});
  EXPECT_EQ(UnsizedTensors(without_sr), std::vector<std::string>{});
  EXPECT_EQ(DecisionOf(without_sr, "If_0"), "undecided|");
  EXPECT_EQ(ShapeOf(without_sr, model, "stateN"), "2,1,128");
  EXPECT_TRUE(without_sr.contradictions.empty());
}

}  // namespace
}  // namespace footprint::symbolic::engine_test
