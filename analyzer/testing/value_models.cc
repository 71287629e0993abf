// The value-dependent test models (value_models.h).
#include "analyzer/testing/value_models.h"

#include <limits>

namespace footprint::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

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
  return Branch(b, name, {y});
}

}  // namespace

void GraphAttribute(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
}

onnx::GraphProto Branch(const ModelBuilder& builder, const std::string& name, const std::vector<std::string>& outputs) {
  onnx::GraphProto graph = builder.Build().graph();
  graph.set_name(name);
  graph.clear_output();
  for (const std::string& output : outputs) graph.add_output()->set_name(output);
  return graph;
}

void AddIf(ModelBuilder& builder, const std::string& name, const std::string& cond, const onnx::GraphProto& then_branch,
           const onnx::GraphProto& else_branch, const std::vector<std::string>& outputs) {
  onnx::NodeProto& node = builder.Node("If", {cond}, outputs, name);
  GraphAttribute(node, "then_branch", then_branch);
  GraphAttribute(node, "else_branch", else_branch);
}


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
  AddIf(builder, "pick_rate", "is_16k", Branch(then_builder, "then", {"doubled"}), Branch(else_builder, "else", {"same"}),
        {"y"});
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
  AddIf(cache, "state_is_empty", "state_empty", Branch(fresh, "fresh", {"fresh_out"}),
        Branch(append, "append", {"appended"}), {"cached"});
  cache.Add("Size", {"state_shape"}, {"state_rank"});
  cache.Add("Equal", {"state_rank", "none"}, {"state_scalar"});
  ModelBuilder scalar_state, ranked_state;
  scalar_state.Add("Identity", {"x"}, {"scalar_out"});
  ranked_state.Add("Identity", {"state"}, {"ranked_out"});
  AddIf(cache, "state_is_scalar", "state_scalar", Branch(scalar_state, "scalar", {"scalar_out"}),
        Branch(ranked_state, "ranked", {"ranked_out"}), {"state_copy"});
  onnx::GraphProto cache_branch = Branch(cache, "cache", {"cached"});
  cache_branch.add_output()->set_name("state_copy");
  ModelBuilder no_cache;
  no_cache.Add("Identity", {"x"}, {"plain"});
  no_cache.Add("Identity", {"state"}, {"state_plain"});
  onnx::GraphProto no_cache_branch = Branch(no_cache, "no_cache", {"plain"});
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
        StftLstmBranch("narrow", 256, 64, "narrow_y"), {"y"});
  builder.Output("y");
  return builder;
}

namespace {

// VoiceActivityModel's 16 kHz branch: an If on the state's batch dim, decided by its shape.
onnx::GraphProto VoiceActivityWideBranch() {
  ModelBuilder wide;
  wide.Add("Shape", {"state"}, {"w_shape"});
  ConstantInt64(wide, "w_batch_axis", {1}, {});
  wide.Add("Gather", {"w_shape", "w_batch_axis"}, {"w_batch"});
  ConstantInt64(wide, "w_zero", {0}, {});
  wide.Add("Equal", {"w_batch", "w_zero"}, {"w_empty"});
  ModelBuilder wide_fresh, wide_kept;
  wide_fresh.Add("ConstantOfShape", {"w_shape"}, {"w_zeros"});
  wide_kept.Add("Identity", {"state"}, {"w_kept"});
  AddIf(wide, "state_is_empty_16k", "w_empty", Branch(wide_fresh, "w_fresh", {"w_zeros"}),
        Branch(wide_kept, "w_kept", {"w_kept"}), {"w_state"});
  wide.Initializer("w_weights", kFloat, {512, 128});
  wide.Add("MatMul", {"input", "w_weights"}, {"w_encoded"});
  ConstantInt64(wide, "w_axis0", {0}, {1});
  wide.Add("Unsqueeze", {"w_encoded", "w_axis0"}, {"w_step"});
  wide.Add("Add", {"w_state", "w_step"}, {"w_sum"});
  wide.Add("Tanh", {"w_sum"}, {"w_stateN"});
  onnx::NodeProto& wide_mean = wide.Node("ReduceMean", {"w_stateN"}, {"w_mean"});
  SetInts(wide_mean, "axes", {0, 2});
  SetInt(wide_mean, "keepdims", 0);
  ConstantInt64(wide, "w_axis1", {1}, {1});
  wide.Add("Unsqueeze", {"w_mean", "w_axis1"}, {"w_output"});
  ConstantInt64(wide, "w_start", {-64}, {1});
  ConstantInt64(wide, "w_end", {std::numeric_limits<int64_t>::max()}, {1});
  wide.Add("Slice", {"input", "w_start", "w_end", "w_axis1"}, {"w_context"});
  return Branch(wide, "wide", {"w_output", "w_stateN", "w_context"});
}

// VoiceActivityModel's 8 kHz branch: the state sliced to sr / 125 channels, then Ifs on that
// slice's length.
onnx::GraphProto VoiceActivityNarrowBranch() {
  ModelBuilder narrow;
  ConstantInt64(narrow, "n_125", {125}, {});
  narrow.Add("Div", {"sr", "n_125"}, {"n_per_rate"});
  ConstantInt64(narrow, "n_64", {64}, {});
  narrow.Add("Min", {"n_per_rate", "n_64"}, {"n_channels"});
  ConstantInt64(narrow, "n_axis0", {0}, {1});
  narrow.Add("Unsqueeze", {"n_channels", "n_axis0"}, {"n_end"});
  ConstantInt64(narrow, "n_begin", {0}, {1});
  ConstantInt64(narrow, "n_axis2", {2}, {1});
  narrow.Add("Slice", {"state", "n_begin", "n_end", "n_axis2"}, {"n_sliced"});
  narrow.Add("Shape", {"n_sliced"}, {"n_shape"});
  ConstantInt64(narrow, "n_two", {2}, {});
  narrow.Add("Gather", {"n_shape", "n_two"}, {"n_length"});
  ConstantInt64(narrow, "n_zero", {0}, {});
  narrow.Add("Equal", {"n_length", "n_zero"}, {"n_empty"});
  ModelBuilder narrow_fresh, narrow_kept;
  narrow_fresh.Add("Shape", {"state"}, {"n_state_shape"});
  ConstantInt64(narrow_fresh, "n_batch_axis", {1}, {1});
  narrow_fresh.Add("Gather", {"n_state_shape", "n_batch_axis"}, {"n_batch"});
  ConstantInt64(narrow_fresh, "n_lead", {2}, {1});
  ConstantInt64(narrow_fresh, "n_width", {64}, {1});
  SetInt(narrow_fresh.Node("Concat", {"n_lead", "n_batch", "n_width"}, {"n_zeros_shape"}), "axis", 0);
  narrow_fresh.Add("ConstantOfShape", {"n_zeros_shape"}, {"n_zeros"});
  narrow_kept.Add("Identity", {"n_sliced"}, {"n_kept"});
  AddIf(narrow, "state_is_empty_8k", "n_empty", Branch(narrow_fresh, "n_fresh", {"n_zeros"}),
        Branch(narrow_kept, "n_kept", {"n_kept"}), {"n_state"});
  ConstantInt64(narrow, "n_32", {32}, {});
  narrow.Add("Greater", {"n_length", "n_32"}, {"n_long"});
  ModelBuilder flat, kept;
  SetInt(flat.Node("Flatten", {"n_state"}, {"n_flat_then"}), "axis", 1);
  kept.Add("Identity", {"n_state"}, {"n_flat_else"});
  AddIf(narrow, "flatten_8k", "n_long", Branch(flat, "n_flat", {"n_flat_then"}), Branch(kept, "n_as_is", {"n_flat_else"}),
        {"n_flat"});
  ConstantInt64(narrow, "n_pairs", {2, -1, 64}, {3});
  narrow.Add("Reshape", {"n_flat", "n_pairs"}, {"n_hidden"});
  narrow.Initializer("n_weights", kFloat, {512, 64});
  narrow.Add("MatMul", {"input", "n_weights"}, {"n_encoded"});
  narrow.Add("Unsqueeze", {"n_encoded", "n_axis0"}, {"n_step"});
  narrow.Add("Add", {"n_hidden", "n_step"}, {"n_sum"});
  SetInt(narrow.Node("Concat", {"n_sum", "n_sum"}, {"n_stateN"}), "axis", 2);
  onnx::NodeProto& narrow_mean = narrow.Node("ReduceMean", {"n_sum"}, {"n_mean"});
  SetInts(narrow_mean, "axes", {0, 2});
  SetInt(narrow_mean, "keepdims", 0);
  ConstantInt64(narrow, "n_axis1", {1}, {1});
  narrow.Add("Unsqueeze", {"n_mean", "n_axis1"}, {"n_output"});
  ConstantInt64(narrow, "n_start", {-32}, {1});
  ConstantInt64(narrow, "n_stop", {std::numeric_limits<int64_t>::max()}, {1});
  narrow.Add("Slice", {"input", "n_start", "n_stop", "n_axis1"}, {"n_context"});
  return Branch(narrow, "narrow", {"n_output", "n_stateN", "n_context"});
}

}  // namespace

ModelBuilder VoiceActivityModel() {
  ModelBuilder builder;
  builder.Input("input", kFloat, {"batch", 512}).Input("sr", kInt64, {}).Input("state", kFloat, {2, "batch", 128});
  ConstantInt64(builder, "rate_16k", {16000}, {});
  builder.Add("Equal", {"sr", "rate_16k"}, {"is_16k"});
  AddIf(builder, "pick_rate", "is_16k", VoiceActivityWideBranch(), VoiceActivityNarrowBranch(),
        {"output", "stateN", "context"});
  builder.Add("Relu", {"context"}, {"context_out"});
  builder.Output("output").Output("stateN").Output("context_out");
  return builder;
}

ModelBuilder TripCountIfModel() {
  ModelBuilder builder;
  builder.Input("flag", kBool, {}).Input("x", kFloat, {4});
  ModelBuilder three, five;
  ConstantInt64(three, "three", {3}, {});
  ConstantInt64(five, "five", {5}, {});
  AddIf(builder, "pick_trips", "flag", Branch(three, "few", {"three"}), Branch(five, "many", {"five"}), {"trips"});
  ModelBuilder body;
  body.Input("iteration", kInt64, {}).Input("keep_going", kBool, {});
  body.Add("Identity", {"keep_going"}, {"keep_going_out"}).Add("Identity", {"x"}, {"row"});
  onnx::GraphProto body_graph = body.Build().graph();
  body_graph.set_name("repeat_body");
  body_graph.clear_output();
  body_graph.add_output()->set_name("keep_going_out");
  body_graph.add_output()->set_name("row");
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", ""}, {"rows"}, "repeat");
  GraphAttribute(loop, "body", body_graph);
  builder.Add("Relu", {"rows"}, {"out"}).Output("out");
  return builder;
}

}  // namespace footprint::testing
