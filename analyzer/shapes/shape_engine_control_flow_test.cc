// If, Loop, Scan and nested bodies, and sequences, on graphs small enough to
// check by hand.
#include "analyzer/shapes/shape_engine.h"

#include "analyzer/shapes/shape_engine_test_util.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {
namespace {

using ::footprint::testing::ModelBuilder;

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

}  // namespace
}  // namespace footprint::symbolic::engine_test
