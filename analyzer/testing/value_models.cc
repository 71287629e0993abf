// The value-dependent test models (value_models.h).
#include "analyzer/testing/value_models.h"

#include <limits>

namespace footprint::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

void GraphAttribute(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
}

// A branch: the graph a builder built, returning `output` (its type left to inference).
onnx::GraphProto Branch(const ModelBuilder& builder, const std::string& name, const std::string& output) {
  onnx::GraphProto graph = builder.Build().graph();
  graph.set_name(name);
  graph.clear_output();
  graph.add_output()->set_name(output);
  return graph;
}

// If(cond) with the two branches, writing `output`.
void AddIf(ModelBuilder& builder, const std::string& name, const std::string& cond, const onnx::GraphProto& then_branch,
           const onnx::GraphProto& else_branch, const std::string& output) {
  onnx::NodeProto& node = builder.Node("If", {cond}, {output}, name);
  GraphAttribute(node, "then_branch", then_branch);
  GraphAttribute(node, "else_branch", else_branch);
}

// An STFT of x [1, 1, 1600] as torch exports it, then an LSTM, into `y`.
onnx::GraphProto StftLstmBranch(const std::string& name, int64_t window, int64_t hop, const std::string& y) {
  ModelBuilder b;
  const std::string p = name + "_";
  TorchPad(b, "x", 3, {window / 2, window / 2}, "reflect", p + "padded");
  const int64_t bins = window / 2 + 1;
  b.Initializer(p + "filters", kFloat, {2 * bins, 1, window});
  onnx::NodeProto& conv = b.Node("Conv", {p + "padded", p + "filters"}, {p + "spectrum"});
  SetInts(conv, "strides", {hop});
  ConstantInt64(b, p + "zero", {0}, {1});
  ConstantInt64(b, p + "bins", {bins}, {1});
  ConstantInt64(b, p + "one", {1}, {1});
  b.Add("Slice", {p + "spectrum", p + "zero", p + "bins", p + "one"}, {p + "real"});
  onnx::NodeProto& transpose = b.Node("Transpose", {p + "real"}, {p + "frames"});
  SetInts(transpose, "perm", {2, 0, 1});
  b.Initializer(p + "w", kFloat, {1, 4 * 64, bins}).Initializer(p + "r", kFloat, {1, 4 * 64, 64});
  onnx::NodeProto& lstm = b.Node("LSTM", {p + "frames", p + "w", p + "r"}, {y});
  SetInt(lstm, "hidden_size", 64);
  return Branch(b, name, y);
}

}  // namespace

void ConstantInt64(ModelBuilder& builder, const std::string& name, const std::vector<int64_t>& values,
                   const std::vector<int64_t>& dims) {
  onnx::NodeProto& node = builder.Node("Constant", {}, {name});
  onnx::AttributeProto* value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = value->mutable_t();
  t->set_data_type(kInt64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

void TorchPad(ModelBuilder& builder, const std::string& x, int64_t rank, const std::vector<int64_t>& torch_pads,
              const std::string& mode, const std::string& y) {
  const std::string p = y + "_";
  ConstantInt64(builder, p + "pad", torch_pads, {static_cast<int64_t>(torch_pads.size())});
  builder.Add("Shape", {p + "pad"}, {p + "pad_shape"});
  ConstantInt64(builder, p + "zero", {0}, {1});
  builder.Add("Gather", {p + "pad_shape", p + "zero"}, {p + "pad_len"});
  ConstantInt64(builder, p + "rank", {rank}, {});
  ConstantInt64(builder, p + "two", {2}, {});
  builder.Add("Mul", {p + "rank", p + "two"}, {p + "twice_rank"});
  builder.Add("Sub", {p + "twice_rank", p + "pad_len"}, {p + "extension"});
  onnx::NodeProto& zeros = builder.Node("ConstantOfShape", {p + "extension"}, {p + "zeros"});
  onnx::AttributeProto* fill = zeros.add_attribute();
  fill->set_name("value");
  fill->set_type(onnx::AttributeProto::TENSOR);
  fill->mutable_t()->set_data_type(kInt64);
  fill->mutable_t()->add_dims(1);
  fill->mutable_t()->add_int64_data(0);
  onnx::NodeProto& concat = builder.Node("Concat", {p + "pad", p + "zeros"}, {p + "padded"});
  SetInt(concat, "axis", 0);
  ConstantInt64(builder, p + "pairs_shape", {-1, 2}, {2});
  builder.Add("Reshape", {p + "padded", p + "pairs_shape"}, {p + "pairs"});
  ConstantInt64(builder, p + "start", {-1}, {1});
  ConstantInt64(builder, p + "end", {std::numeric_limits<int64_t>::min()}, {1});
  ConstantInt64(builder, p + "axis", {0}, {1});
  ConstantInt64(builder, p + "step", {-1}, {1});
  builder.Add("Slice", {p + "pairs", p + "start", p + "end", p + "axis", p + "step"}, {p + "reversed"});
  onnx::NodeProto& transpose = builder.Node("Transpose", {p + "reversed"}, {p + "columns"});
  SetInts(transpose, "perm", {1, 0});
  ConstantInt64(builder, p + "flat", {-1}, {1});
  builder.Add("Reshape", {p + "columns", p + "flat"}, {p + "onnx_pads"});
  onnx::NodeProto& cast = builder.Node("Cast", {p + "onnx_pads"}, {p + "pads"});
  SetInt(cast, "to", kInt64);
  onnx::NodeProto& pad = builder.Node("Pad", {x, p + "pads"}, {y});
  onnx::AttributeProto* mode_attribute = pad.add_attribute();
  mode_attribute->set_name("mode");
  mode_attribute->set_type(onnx::AttributeProto::STRING);
  mode_attribute->set_s(mode);
}

ModelBuilder SampleRateIfModel() {
  ModelBuilder builder;
  builder.Input("sr", kInt64, {}).Input("x", kFloat, {1, 512});
  ConstantInt64(builder, "rate_16k", {16000}, {});
  builder.Add("Equal", {"sr", "rate_16k"}, {"is_16k"});
  ModelBuilder then_builder, else_builder;
  SetInt(then_builder.Node("Concat", {"x", "x"}, {"doubled"}), "axis", 1);
  else_builder.Add("Identity", {"x"}, {"same"});
  AddIf(builder, "pick_rate", "is_16k", Branch(then_builder, "then", "doubled"), Branch(else_builder, "else", "same"),
        "y");
  builder.Add("Relu", {"y"}, {"out"}).Output("out");
  return builder;
}

ModelBuilder CacheBranchModel() {
  ModelBuilder builder;
  builder.Input("use_cache_branch", kBool, {1}).Input("x", kFloat, {8, 16}).Input("state", kFloat, {"past", 16});
  // The cache branch: two Ifs on the state's shape.
  ModelBuilder cache;
  cache.Add("Shape", {"state"}, {"state_shape"});
  ConstantInt64(cache, "first", {0}, {});
  cache.Add("Gather", {"state_shape", "first"}, {"state_length"});
  ConstantInt64(cache, "none", {0}, {});
  cache.Add("Equal", {"state_length", "none"}, {"state_empty"});
  ModelBuilder fresh, append;
  fresh.Add("Identity", {"x"}, {"fresh_out"});
  SetInt(append.Node("Concat", {"state", "x"}, {"appended"}), "axis", 0);
  AddIf(cache, "state_is_empty", "state_empty", Branch(fresh, "fresh", "fresh_out"),
        Branch(append, "append", "appended"), "cached");
  cache.Add("Size", {"state_shape"}, {"state_rank"});
  cache.Add("Equal", {"state_rank", "none"}, {"state_scalar"});
  ModelBuilder scalar_state, ranked_state;
  scalar_state.Add("Identity", {"x"}, {"scalar_out"});
  ranked_state.Add("Identity", {"state"}, {"ranked_out"});
  AddIf(cache, "state_is_scalar", "state_scalar", Branch(scalar_state, "scalar", "scalar_out"),
        Branch(ranked_state, "ranked", "ranked_out"), "state_copy");
  onnx::GraphProto cache_branch = Branch(cache, "cache", "cached");
  cache_branch.add_output()->set_name("state_copy");
  ModelBuilder no_cache;
  no_cache.Add("Identity", {"x"}, {"plain"});
  no_cache.Add("Identity", {"state"}, {"state_plain"});
  onnx::GraphProto no_cache_branch = Branch(no_cache, "no_cache", "plain");
  no_cache_branch.add_output()->set_name("state_plain");
  onnx::NodeProto& node = builder.Node("If", {"use_cache_branch"}, {"y", "state_out"}, "use_cache");
  GraphAttribute(node, "then_branch", cache_branch);
  GraphAttribute(node, "else_branch", no_cache_branch);
  builder.Output("y").Output("state_out");
  return builder;
}

ModelBuilder StftLstmModel() {
  ModelBuilder builder;
  builder.Opset("", 13).Input("sr", kInt64, {}).Input("x", kFloat, {1, 1, 1600});
  ConstantInt64(builder, "rate_16k", {16000}, {});
  builder.Add("Equal", {"sr", "rate_16k"}, {"is_16k"});
  AddIf(builder, "pick_window", "is_16k", StftLstmBranch("wide", 512, 128, "wide_y"),
        StftLstmBranch("narrow", 256, 64, "narrow_y"), "y");
  builder.Output("y");
  return builder;
}

}  // namespace footprint::testing
