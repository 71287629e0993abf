// The function bodies ORT inlines for float16 ops (fp16_function_bodies.h).
// The bodies follow the ONNX schemas' FunctionBody (onnx/defs/math/defs.cc,
// nn/defs.cc, reduction/defs.cc, logical/defs.cc) as ORT 1.30's optimized
// models of single float16 ops show them, node for node, on an AVX-512 host
// (bench/ground_truth/fp16_probes.py, "function bodies").
#include "analyzer/runtimes/onnxruntime/passes/fp16_function_bodies.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;     // TensorProto.FLOAT.
constexpr int32_t kInt64 = 7;     // TensorProto.INT64.
constexpr int32_t kBool = 9;      // TensorProto.BOOL.
constexpr int32_t kFloat16 = 10;  // TensorProto.FLOAT16.
constexpr int64_t kAnyLater = 1 << 30;

// An operand of a body step: the node's input 0 or 1, its inputs from 1 on
// (a reduction's axes), or the output of an earlier step (>= 0).
constexpr int kX = -1;
constexpr int kSecond = -2;
constexpr int kRest = -3;

// What a step writes: the node's output (the last step), or a new value
// with the dims of the node's input 0 in its type, in bool or in float32, or
// with the output's dims and type, or a value of a few elements (a
// reduction's, such as GroupNormalization's [N, groups, 1] mean) sized as
// the node's input 1, in the type of the step's first operand, or a Shape's
// int64 output sized as the node's input 1 (the input's rank in ORT: a few
// bytes more here).
enum class Writes { kOutput, kLikeInput, kBoolLikeInput, kFloatLikeInput, kLikeOutput, kSmall, kShape };

struct Step {
  const char* op;             // Default-domain op.
  std::vector<int> operands;  // kX, kSecond, kRest or an earlier step; scalar constants left out.
  Writes writes;              // Its output.
  PlannerShape planner = PlannerShape::kAsSized;  // The output's dims as ORT's planner sees them (a new value's).
};

struct Body {
  int64_t first_opset;      // The opsets ORT 1.30 inlines it at (measured).
  int64_t last_opset;       // kAnyLater: every later one measured (to 23).
  std::vector<Step> steps;  // In the order ORT runs them (its optimized model), which its node indices give.
};

using Bodies = absl::flat_hash_map<std::string, std::vector<Body>>;

const Bodies& KnownBodies() {
  using W = Writes;
  static const auto* const kBodies = new Bodies{
      {"Relu", {{18, 18, {{"Max", {kX}, W::kOutput}}}}},  // Max has a float16 kernel.
      {"LeakyRelu",
       {{16, 18,
         {{"Mul", {kX}, W::kLikeInput}, {"Less", {kX}, W::kBoolLikeInput}, {"Where", {1, 0, kX}, W::kOutput}}}}},
      {"PRelu",
       {{16, 18,
         {{"Mul", {kSecond, kX}, W::kLikeOutput},
          {"Less", {kX}, W::kBoolLikeInput},
          {"Where", {1, 0, kX}, W::kOutput}}}}},
      {"HardSigmoid",
       {{18, 18,
         {{"Mul", {kX}, W::kLikeInput},
          {"Add", {0}, W::kLikeInput},
          {"Min", {1}, W::kLikeInput},
          {"Max", {2}, W::kOutput}}}}},
      {"HardSwish", {{14, kAnyLater, {{"HardSigmoid", {kX}, W::kLikeInput}, {"Mul", {kX, 0}, W::kOutput}}}}},
      {"Elu",
       {{18, 18,
         {{"Exp", {kX}, W::kLikeInput},
          {"Sub", {0}, W::kLikeInput},
          {"Mul", {1}, W::kLikeInput},
          {"Less", {kX}, W::kBoolLikeInput},
          {"Where", {3, 2, kX}, W::kOutput}}}}},
      {"Selu",
       {{18, 18,
         {{"Less", {kX}, W::kBoolLikeInput},
          {"Mul", {kX}, W::kLikeInput},
          {"Exp", {kX}, W::kLikeInput},
          {"Mul", {2}, W::kLikeInput},
          {"Sub", {3}, W::kLikeInput},
          {"Mul", {4}, W::kLikeInput},
          {"Where", {0, 5, 1}, W::kOutput}}}}},
      {"Softplus",
       {{18, 18, {{"Exp", {kX}, W::kLikeInput}, {"Add", {0}, W::kLikeInput}, {"Log", {1}, W::kOutput}}}}},
      {"Softsign",
       {{18, 18, {{"Abs", {kX}, W::kLikeInput}, {"Add", {0}, W::kLikeInput}, {"Div", {kX, 1}, W::kOutput}}}}},
      {"ThresholdedRelu", {{18, 18, {{"Less", {kX}, W::kBoolLikeInput}, {"Where", {0, kX}, W::kOutput}}}}},
      {"Mish",
       {{18, kAnyLater,
         {{"Softplus", {kX}, W::kLikeInput}, {"Tanh", {0}, W::kLikeInput}, {"Mul", {kX, 1}, W::kOutput}}}}},
      {"GreaterOrEqual",
       {{12, 12, {{"Equal", {kX, kSecond}, W::kLikeOutput}, {"Greater", {kX, kSecond}, W::kLikeOutput},
                  {"Or", {1, 0}, W::kOutput}}},
        {16, 18, {{"Equal", {kX, kSecond}, W::kLikeOutput}, {"Greater", {kX, kSecond}, W::kLikeOutput},
                  {"Or", {1, 0}, W::kOutput}}}}},
      {"LessOrEqual",
       {{12, 12, {{"Equal", {kX, kSecond}, W::kLikeOutput}, {"Less", {kX, kSecond}, W::kLikeOutput},
                  {"Or", {1, 0}, W::kOutput}}},
        {16, 18, {{"Equal", {kX, kSecond}, W::kLikeOutput}, {"Less", {kX, kSecond}, W::kLikeOutput},
                  {"Or", {1, 0}, W::kOutput}}}}},
      {"ReduceL1", {{18, kAnyLater, {{"Abs", {kX}, W::kLikeInput}, {"ReduceSum", {0, kRest}, W::kOutput}}}}},
      {"ReduceSumSquare",
       {{18, kAnyLater, {{"Mul", {kX, kX}, W::kLikeInput}, {"ReduceSum", {0, kRest}, W::kOutput}}}}},
      {"ReduceL2",
       {{18, 18,
         {{"Mul", {kX, kX}, W::kLikeInput}, {"ReduceSum", {0, kRest}, W::kLikeOutput}, {"Sqrt", {1}, W::kOutput}}}}},
      {"ReduceLogSumExp",
       {{18, 18,
         {{"Exp", {kX}, W::kLikeInput}, {"ReduceSum", {0, kRest}, W::kLikeOutput}, {"Log", {1}, W::kOutput}}}}},
      {"ReduceLogSum", {{18, kAnyLater, {{"ReduceSum", {kX, kRest}, W::kLikeOutput}, {"Log", {0}, W::kOutput}}}}},
  };
  return *kBodies;
}

// The Gelu bodies (opset 20 on) differ by the approximate attribute.
const std::vector<Step>& GeluSteps(bool tanh) {
  using W = Writes;
  // In the body's own order (onnx/defs/math/defs.cc): Mul(Half, X) comes
  // just before the last Mul. ORT numbers the inlined nodes in that order,
  // so it runs that Mul first (measured: the profile of big_Gelu_20_mid
  // runs Mul_12 before Div_9; execution_order.h).
  static const auto* const kExact = new std::vector<Step>{{"Div", {kX}, W::kLikeInput},
                                                          {"Erf", {0}, W::kLikeInput},
                                                          {"Sum", {1}, W::kLikeInput},
                                                          {"Mul", {kX}, W::kLikeInput},
                                                          {"Mul", {3, 2}, W::kOutput}};
  static const auto* const kTanh = new std::vector<Step>{
      {"Pow", {kX}, W::kLikeInput},  {"Mul", {0}, W::kLikeInput},  {"Sum", {kX, 1}, W::kLikeInput},
      {"Mul", {2}, W::kLikeInput},   {"Tanh", {3}, W::kLikeInput}, {"Sum", {4}, W::kLikeInput},
      {"Mul", {kX}, W::kLikeInput},  {"Mul", {6, 5}, W::kOutput}};
  return tanh ? *kTanh : *kExact;
}

// com.microsoft's Gelu and FastGelu, functions of ORT's own contrib schemas
// (core/graph/contrib_ops/bert_defs.cc), inlined at any opset: measured,
// single float16 ops. FastGelu's optional bias is its body's first node,
// X_bias = Add(X, bias), which the other nodes read where they read X
// without it (measured: the fp16 tiny-random-gpt2's optimized model, and a
// chain of biased float16 FastGelus, on an AVX-512 host).
const std::vector<Step>* ContribBodyOf(const onnx::NodeProto& node) {
  using W = Writes;
  static const auto* const kGelu = new std::vector<Step>{{"Mul", {kX}, W::kLikeInput},
                                                         {"Erf", {0}, W::kLikeInput},
                                                         {"Add", {1}, W::kLikeInput},
                                                         {"Mul", {2}, W::kLikeInput},
                                                         {"Mul", {kX, 3}, W::kOutput}};
  static const auto* const kFastGelu = new std::vector<Step>{
      {"Mul", {kX, kX}, W::kLikeInput}, {"Mul", {0}, W::kLikeInput},     {"Add", {1}, W::kLikeInput},
      {"Mul", {kX, 2}, W::kLikeInput},  {"Tanh", {3}, W::kLikeInput},    {"Add", {4}, W::kLikeInput},
      {"Mul", {kX, 5}, W::kLikeInput},  {"Mul", {6}, W::kOutput}};
  static const auto* const kFastGeluWithBias = new std::vector<Step>{
      {"Add", {kX, kSecond}, W::kLikeInput}, {"Mul", {0, 0}, W::kLikeInput}, {"Mul", {1}, W::kLikeInput},
      {"Add", {2}, W::kLikeInput},           {"Mul", {0, 3}, W::kLikeInput}, {"Tanh", {4}, W::kLikeInput},
      {"Add", {5}, W::kLikeInput},           {"Mul", {0, 6}, W::kLikeInput}, {"Mul", {7}, W::kOutput}};
  if (node.op_type() == "Gelu") return kGelu;
  if (node.op_type() != "FastGelu") return nullptr;
  const bool has_bias = node.input_size() >= 2 && !node.input(1).empty();
  return has_bias ? kFastGeluWithBias : kFastGelu;
  return nullptr;
}

// The Constant nodes of the body ORT inlines for float16 `node`, which it
// adds as float16 initializers (graph.cc InlineFunctionProto:
// AddConstantProtoAsInitializer); each read by one node run in float32, so
// each becomes a FusedBack_ float32 initializer (fuse_initializers_
// transformer.cc), the float16 one and its Cast taken out. Counted for
// FastGelu only, whose a, b, c and one (bert_defs.cc) ORT's optimized fp16
// tiny-random-gpt2 and the FastGelu chain probes show; the other bodies'
// constants are not counted yet.
int64_t Float16BodyConstants(const onnx::NodeProto& node) {
  return node.domain() == "com.microsoft" && node.op_type() == "FastGelu" ? 4 : 0;
}

// GroupNormalization has no CPU kernel in any type: ORT always runs its
// body (onnx/defs/nn/defs.cc, measured: ORT 1.30's optimized models of
// float and float16 GroupNormalization at opsets 18 and 21). The mean and
// variance come from the input and its square, so the input, its deviation
// and its square are live together: four full tensors with the node's
// input and output, where one op holds two. From opset 21 the body computes
// in float32 (stash_type) between two Casts, real copies in a float32 model
// too (ORT inlines at partitioning, after its level-1 passes, which are not
// run again: core/session/inference_session.cc, TransformGraph). Its
// Reshapes (views) are kept, as ORT's NCHWc pass does not take a Mul that
// reads a Reshape; the scale and bias's Cast and Reshape and the shape
// arithmetic (a few bytes) are left out.
//
// What ORT's allocation planner sees (core/framework/allocation_planner.cc,
// FindReusableTensor, SameShape: a freed buffer goes only to a value of the
// same static shape, every dim known): the body reshapes its input to
// Concat(Shape(X)[0], groups, C / groups, Shape(X)[2:]), never folded (level
// 1 is over), so the grouped view and every value computed from it
// (deviation, square, normalized, scaled, biased at opset 18) have no static
// shape. They never take a freed buffer and theirs is never taken; the
// freed buffers of the tensors around the body stay with the plan, held,
// until a later tensor of their shape takes them. From opset 21 the
// normalized values go back through Reshape(Shape(XU)) (known again) and
// Reshape([0, 0, -1]) to [N, C, H*W], in which its Cast, Mul and Add are
// planned. Measured: heap traces of the resblock probes (GroupNormalization,
// SiLU, Conv, twice, and a residual Add) give ORT's malloc and free sequence
// as these rules do, and their run peaks (0.57-0.80 of ORT's before).
const std::vector<Step>* GroupNormalizationSteps(int64_t opset) {
  using W = Writes;
  constexpr PlannerShape kNone = PlannerShape::kUnknown;
  constexpr PlannerShape kFlat = PlannerShape::kFlattenedSpatial;
  // In the body's own order (onnx/defs/nn/defs.cc), which ORT's node
  // indices follow (execution_order.h): the deviation's Sub comes after the
  // variance, so ORT runs it first (measured: groupnorm_opset21_float16's
  // profile runs Sub_22 right after ReduceMean_15). The Shape that gives the
  // output's dims comes second in the body, so ORT runs it just before the
  // Reshape that reads it: the input (at opset 21 its float32 copy) is live
  // to there (measured: the resblock probes' profiles). At opset 18 the two
  // Reshapes to [N, groups, C / groups, H, W] and [N, groups, rest] stay
  // apart: the first's reader has a float16 kernel, so in a float16 model
  // neither runs in float32 and the body's input is a float16 tensor (a
  // float32 one is cast back first), cast to float32 after them.
  static const auto* const kOpset18 = new std::vector<Step>{
      {"Shape", {kX}, W::kShape},              {"Reshape", {kX}, W::kLikeInput, kNone},
      {"Reshape", {1}, W::kLikeInput, kNone},  {"ReduceMean", {2}, W::kSmall},
      {"Mul", {2, 2}, W::kLikeInput, kNone},   {"ReduceMean", {4}, W::kSmall},
      {"Mul", {3, 3}, W::kSmall},              {"Sub", {5, 6}, W::kSmall},
      {"Add", {7}, W::kSmall},                 {"Sqrt", {8}, W::kSmall},
      {"Sub", {2, 3}, W::kLikeInput, kNone},   {"Div", {10, 9}, W::kLikeInput, kNone},
      {"Mul", {11}, W::kLikeInput, kNone},     {"Add", {12}, W::kLikeInput, kNone},
      {"Reshape", {13, 0}, W::kOutput}};
  // At opset 21 the grouped shape comes from Shapes of the input itself, not
  // of its float32 copy (ORT's optimized models), so a float16 input has a
  // reader besides Casts.
  static const auto* const kOpset21 = new std::vector<Step>{
      {"Cast", {kX}, W::kFloatLikeInput},             {"Shape", {0}, W::kShape},
      {"Shape", {kX}, W::kShape},                     {"Reshape", {0, 2}, W::kFloatLikeInput, kNone},
      {"ReduceMean", {3}, W::kSmall},                 {"Mul", {3, 3}, W::kFloatLikeInput, kNone},
      {"ReduceMean", {5}, W::kSmall},                 {"Mul", {4, 4}, W::kSmall},
      {"Sub", {6, 7}, W::kSmall},                     {"Add", {8}, W::kSmall},
      {"Sqrt", {9}, W::kSmall},                       {"Sub", {3, 4}, W::kFloatLikeInput, kNone},
      {"Div", {11, 10}, W::kFloatLikeInput, kNone},   {"Reshape", {12, 1}, W::kFloatLikeInput, kFlat},
      {"Cast", {13}, W::kLikeInput, kFlat},           {"Mul", {14}, W::kLikeInput, kFlat},
      {"Add", {15}, W::kLikeInput, kFlat},            {"Reshape", {16, 1}, W::kOutput}};
  if (opset < 18) return nullptr;
  return opset < 21 ? kOpset18 : kOpset21;
}

// The body ORT inlines for `node` at `opset` whatever its element type (ops
// with no CPU kernel at all), or nullptr.
const std::vector<Step>* AnyTypeBodyOf(const onnx::NodeProto& node, int64_t opset) {
  if (IsDefaultDomain(node) && node.op_type() == "GroupNormalization") return GroupNormalizationSteps(opset);
  return nullptr;
}

// The body ORT inlines for `node` at `opset`, or nullptr.
const std::vector<Step>* BodyOf(const onnx::NodeProto& node, int64_t opset) {
  if (node.domain() == "com.microsoft") return ContribBodyOf(node);
  if (!IsDefaultDomain(node)) return nullptr;
  if (node.op_type() == "Gelu") {
    if (opset < 20) return nullptr;
    const onnx::AttributeProto* approximate = FindAttribute(node, "approximate");
    return &GeluSteps(approximate != nullptr && approximate->s() == "tanh");
  }
  auto it = KnownBodies().find(node.op_type());
  if (it == KnownBodies().end()) return nullptr;
  for (const Body& body : it->second) {
    if (opset >= body.first_opset && opset <= body.last_opset) return &body.steps;
  }
  return nullptr;
}

class Inliner {
 public:
  Inliner(PassContext& context, IrGraph& graph) : opset_(context.model.opset), context_(context), graph_(graph) {}

  void Run() {
    bool any = false;
    std::vector<IrNode> nodes;
    nodes.reserve(graph_.nodes.size());
    for (IrNode& node : graph_.nodes) any = Expand(std::move(node), nodes) || any;
    graph_.nodes = std::move(nodes);
    if (any) RelinkValues(graph_);
  }

 private:
  int32_t TypeOf(ValueId id) const {
    const std::optional<ValueShape> shape = ShapeOfValue(graph_, context_, id);
    return shape.has_value() ? shape->data_type : 0;
  }

  // The element type `id` is held in: a value this pass added has its own.
  int32_t ElementType(ValueId id) const {
    const int32_t added = HeldAs(context_.rewrite, id).data_type;
    return added != 0 ? added : TypeOf(id);
  }

  // Appends `node` to `out`, or the nodes of its body (each expanded in
  // turn); whether it had one.
  bool Expand(IrNode node, std::vector<IrNode>& out) {
    const bool inlinable = node.bodies.empty() && !node.inputs.empty() && node.outputs.size() == 1;
    bool float16_input = false;
    for (ValueId input : node.inputs) float16_input = float16_input || TypeOf(input) == kFloat16;
    const std::vector<Step>* steps = inlinable ? AnyTypeBodyOf(*node.proto, opset_) : nullptr;
    if (inlinable && steps == nullptr && float16_input) {
      steps = BodyOf(*node.proto, opset_);
      if (steps != nullptr) context_.rewrite.float16_body_constants += Float16BodyConstants(*node.proto);
    }
    const bool needs_second = steps != nullptr && UsesSecond(*steps);
    if (steps == nullptr || (needs_second && node.inputs.size() < 2)) {
      out.push_back(std::move(node));
      return false;
    }
    const ValueId x = node.inputs[0];
    const ValueId y = node.outputs[0];
    const std::string prefix = "_inlfunc_" + node.proto->op_type() + "_" + node.display_name;
    std::vector<ValueId> written;
    for (size_t index = 0; index < steps->size(); ++index) {
      const Step& step = (*steps)[index];
      std::vector<ValueId> inputs;
      for (int operand : step.operands) {
        if (operand == kX) {
          inputs.push_back(x);
        } else if (operand == kSecond) {
          inputs.push_back(node.inputs[1]);
        } else if (operand == kRest) {
          inputs.insert(inputs.end(), node.inputs.begin() + 1, node.inputs.end());
        } else {
          inputs.push_back(written[operand]);
        }
      }
      const ValueId output =
          step.writes == Writes::kOutput
              ? y
              : AddBodyValue(prefix + "/" + std::to_string(index), step.writes, x, y,
                             node.inputs.size() > 1 ? node.inputs[1] : x, inputs.empty() ? x : inputs.front());
      if (step.writes != Writes::kOutput) MutableHeld(graph_, context_.rewrite, output).planner_shape = step.planner;
      written.push_back(output);
      Expand(MakeNode(prefix + "/" + step.op + "_" + std::to_string(index), step.op, std::move(inputs), output), out);
    }
    return true;
  }

  static bool UsesSecond(const std::vector<Step>& steps) {
    for (const Step& step : steps) {
      if (step.writes == Writes::kSmall || step.writes == Writes::kShape) return true;
      for (int operand : step.operands) {
        if (operand == kSecond) return true;
      }
    }
    return false;
  }

  // `second` is the node's input 1 (when it has one), `operand` the step's
  // first input.
  ValueId AddBodyValue(const std::string& name, Writes writes, ValueId x, ValueId y, ValueId second,
                       ValueId operand) {
    const ValueId like = writes == Writes::kLikeOutput                          ? y
                         : writes == Writes::kSmall || writes == Writes::kShape ? second
                                                                                : x;
    int32_t data_type = writes == Writes::kBoolLikeInput    ? kBool
                        : writes == Writes::kFloatLikeInput ? kFloat
                        : writes == Writes::kShape          ? kInt64
                        : writes == Writes::kSmall          ? ElementType(operand)
                                                            : TypeOf(like);
    if (data_type == 0) data_type = kFloat16;
    return AddValue(graph_, context_.rewrite, IrValue{.name = name, .origin = ValueOrigin::kNodeOutput},
                    HeldValue{.sized_as = like, .data_type = data_type});
  }

  IrNode MakeNode(const std::string& name, const char* op, std::vector<ValueId> inputs, ValueId output) {
    std::vector<std::string> input_names;
    for (ValueId input : inputs) input_names.push_back(graph_.values[input].name);
    auto proto = NewNodeProto(op, "", name, input_names, {graph_.values[output].name});
    if (std::string_view(op) == "Cast") {  // A body's Cast (GroupNormalization's stash_type): what it casts to.
      onnx::AttributeProto* to = proto->add_attribute();
      to->set_name("to");
      to->set_type(onnx::AttributeProto::INT);
      to->set_i(ElementType(output));
    }
    return MadeNode(context_.rewrite, std::move(proto), std::move(inputs), {output});
  }

  const int64_t opset_;
  PassContext& context_;
  IrGraph& graph_;
};

}  // namespace

bool InlinesFloat16Body(const std::string& op, int64_t opset) {
  onnx::NodeProto node;
  node.set_op_type(op);
  return AnyTypeBodyOf(node, opset) != nullptr || BodyOf(node, opset) != nullptr;
}

namespace {

// Replaces each default-domain node with a float16 input for which
// InlinesFloat16Body holds, and each GroupNormalization, by its body's nodes
// (new protos), repeatedly, as a body may hold such an op (HardSwish's
// HardSigmoid at opset 18). The body's scalar constants, folded by ORT into
// a few bytes of weights, are left out. Intermediate values are new values
// sized as the node's input or output (HeldValue::sized_as) in the node's
// element type, or bool. Runs before the Casts (fp16_casts.cc) and before
// any fusion that could take in the op (a Conv + LeakyRelu), as ORT
// partitions before its level-2 passes.
PassChange InlineFloat16FunctionBodies(IrGraph& graph, PassContext& context) {
  Inliner(context, graph).Run();
  return {};
}

}  // namespace

const Pass kInlineFloat16Functions = {.name = "function inlining (float16 ops without a float16 kernel)",
                                      .stage = OrtStage::kPartitioning,
                                      .source = "core/framework/graph_partitioner.cc, core/graph/function_utils.cc",
                                      .apply = &InlineFloat16FunctionBodies};

}  // namespace footprint::ort
