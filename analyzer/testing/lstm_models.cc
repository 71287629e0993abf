// SileroLstmModel (lstm_models.h): the structure torch.onnx writes for
// Silero VAD v5, names shortened.
#include "analyzer/testing/lstm_models.h"

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/testing/value_models.h"

namespace footprint::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;
constexpr int64_t kHidden = 128;

// y = Conv1d(x) with kernel `k`, padding k / 2, `stride`, c_in -> c_out, and bias.
void Conv1d(ModelBuilder& b, const std::string& x, int64_t c_in, int64_t c_out, int64_t k, int64_t stride,
            const std::string& y) {
  b.Initializer(y + "_w", kFloat, {c_out, c_in, k}).Initializer(y + "_b", kFloat, {c_out});
  onnx::NodeProto& conv = b.Node("Conv", {x, y + "_w", y + "_b"}, {y});
  SetInts(conv, "kernel_shape", {k});
  SetInts(conv, "pads", {k / 2, k / 2});
  SetInts(conv, "strides", {stride});
}

// If `cond`: then_op(x, axes) (Squeeze or Unsqueeze), else Identity(x), into y.
void MaybeReshapeIf(ModelBuilder& b, const std::string& cond, const std::string& op, const std::string& x,
                    int64_t axis, const std::string& y) {
  ModelBuilder then_body, else_body;
  ConstantInt64(then_body, y + "_axes", {axis}, {1});
  then_body.Add(op, {x, y + "_axes"}, {y + "_then"});
  else_body.Add("Identity", {x}, {y + "_else"});
  AddIf(b, y + "_if", cond, Branch(then_body, y + "_then_body", {y + "_then"}),
        Branch(else_body, y + "_else_body", {y + "_else"}), {y});
}

// not_batched = Cast(Not(Size(Shape(x)) == 2)): PyTorch's LSTMCell export
// testing whether its input has a batch dim.
void NotBatched(ModelBuilder& b, const std::string& x, const std::string& p) {
  b.Add("Shape", {x}, {p + "shape"}).Add("Size", {p + "shape"}, {p + "rank"});
  ConstantInt64(b, p + "two", {2}, {});
  b.Add("Equal", {p + "rank", p + "two"}, {p + "batched"}).Add("Not", {p + "batched"}, {p + "not_batched_raw"});
  SetInt(b.Node("Cast", {p + "not_batched_raw"}, {p + "not_batched"}), "to", kBool);
}

// The LSTMCell as PyTorch exports it, into `b`: x [batch, 128] (or
// unbatched), h and c from outside; writes p + "h" and p + "c".
void LstmCell(ModelBuilder& b, const std::string& x, const std::string& h, const std::string& c, const std::string& p) {
  NotBatched(b, x, p);
  MaybeReshapeIf(b, p + "not_batched", "Unsqueeze", x, 0, p + "x2");
  MaybeReshapeIf(b, p + "not_batched", "Unsqueeze", h, 0, p + "h2");
  MaybeReshapeIf(b, p + "not_batched", "Unsqueeze", c, 0, p + "c2");
  ConstantInt64(b, p + "axis0", {0}, {1});
  for (const char* v : {"x2", "h2", "c2"}) b.Add("Unsqueeze", {p + v, p + "axis0"}, {p + v + "_seq"});
  b.Initializer(p + "W", kFloat, {1, 4 * kHidden, kHidden}).Initializer(p + "R", kFloat, {1, 4 * kHidden, kHidden});
  b.Initializer(p + "B", kFloat, {1, 8 * kHidden});
  onnx::NodeProto& lstm = b.Node("LSTM", {p + "x2_seq", p + "W", p + "R", p + "B", "", p + "h2_seq", p + "c2_seq"},
                                 {p + "Y", p + "Y_h", p + "Y_c"}, p + "LSTM");
  SetInt(lstm, "hidden_size", kHidden);
  b.Add("Squeeze", {p + "Y_h", p + "axis0"}, {p + "h1"}).Add("Squeeze", {p + "Y_c", p + "axis0"}, {p + "c1"});
  // Unbatched again: Squeeze(0) only where dim 0 is 1 (PyTorch's squeeze(0)).
  ModelBuilder unbatch;
  for (const char* v : {"h1", "c1"}) {
    const std::string q = p + v;
    unbatch.Add("Shape", {q}, {q + "_shape"});
    ConstantInt64(unbatch, q + "_zero", {0}, {1});
    unbatch.Add("Gather", {q + "_shape", q + "_zero"}, {q + "_dim0"});
    ConstantInt64(unbatch, q + "_one", {1}, {1});
    unbatch.Add("Equal", {q + "_dim0", q + "_one"}, {q + "_is_one"});
    MaybeReshapeIf(unbatch, q + "_is_one", "Squeeze", q, 0, q + "_unbatched");
  }
  ModelBuilder as_is;
  as_is.Add("Identity", {p + "h1"}, {p + "h1_as_is"}).Add("Identity", {p + "c1"}, {p + "c1_as_is"});
  AddIf(b, p + "unbatch", p + "not_batched", Branch(unbatch, p + "unbatch_then", {p + "h1_unbatched", p + "c1_unbatched"}),
        Branch(as_is, p + "unbatch_else", {p + "h1_as_is", p + "c1_as_is"}), {p + "h", p + "c"});
}

// One sample rate's network, reading the main graph's input and state;
// writes p + "output" [batch, 1] and p + "stateN" [2, batch, 128].
onnx::GraphProto RateBranch(const std::string& p, int64_t window, int64_t hop) {
  ModelBuilder b;
  TorchPad(b, "input", 2, {0, window / 4}, "reflect", p + "padded");
  ConstantInt64(b, p + "axis1", {1}, {1});
  b.Add("Unsqueeze", {p + "padded", p + "axis1"}, {p + "signal"});
  const int64_t bins = window / 2 + 1;
  b.Initializer(p + "basis", kFloat, {2 * bins, 1, window});
  SetInts(b.Node("Conv", {p + "signal", p + "basis"}, {p + "spectrum"}), "strides", {hop});
  ConstantInt64(b, p + "zero", {0}, {1});
  ConstantInt64(b, p + "bins", {bins}, {1});
  ConstantInt64(b, p + "all", {2 * bins}, {1});
  b.Add("Slice", {p + "spectrum", p + "zero", p + "bins", p + "axis1"}, {p + "real"});
  b.Add("Slice", {p + "spectrum", p + "bins", p + "all", p + "axis1"}, {p + "imag"});
  b.Add("Mul", {p + "real", p + "real"}, {p + "real2"}).Add("Mul", {p + "imag", p + "imag"}, {p + "imag2"});
  b.Add("Add", {p + "real2", p + "imag2"}, {p + "power"}).Add("Sqrt", {p + "power"}, {p + "magnitude"});
  std::string x = p + "magnitude";
  int64_t channels = bins;
  const int64_t widths[] = {128, 64, 64, 128}, strides[] = {1, 2, 2, 1};
  for (int i = 0; i < 4; ++i) {
    const std::string conv = p + "enc" + std::to_string(i);
    Conv1d(b, x, channels, widths[i], 3, strides[i], conv);
    b.Add("Relu", {conv}, {conv + "_relu"});
    x = conv + "_relu";
    channels = widths[i];
  }
  // Squeeze the frames axis when there is one frame (PyTorch's squeeze(-1)).
  b.Add("Shape", {x}, {p + "enc_shape"});
  ConstantInt64(b, p + "last", {-1}, {1});
  b.Add("Gather", {p + "enc_shape", p + "last"}, {p + "frames"});
  ConstantInt64(b, p + "one", {1}, {1});
  b.Add("Equal", {p + "frames", p + "one"}, {p + "one_frame"});
  MaybeReshapeIf(b, p + "one_frame", "Squeeze", x, -1, p + "features");
  // The state given (a Cast of its dim 0 to bool), else zeros.
  b.Add("Shape", {"state"}, {p + "state_shape"});
  b.Add("Gather", {p + "state_shape", p + "zero"}, {p + "state_dim0"});
  b.Add("Squeeze", {p + "state_dim0", p + "zero"}, {p + "state_len"});
  SetInt(b.Node("Cast", {p + "state_len"}, {p + "has_state"}), "to", kBool);
  ModelBuilder given;
  ConstantInt64(given, p + "first", {0}, {});
  ConstantInt64(given, p + "second", {1}, {});
  given.Add("Gather", {"state", p + "first"}, {p + "h0"}).Add("Gather", {"state", p + "second"}, {p + "c0"});
  LstmCell(given, p + "features", p + "h0", p + "c0", p + "rnn_");
  ModelBuilder zeros;
  zeros.Add("Shape", {p + "features"}, {p + "features_shape"});
  zeros.Add("Gather", {p + "features_shape", p + "zero"}, {p + "batch"});
  ConstantInt64(zeros, p + "width", {kHidden}, {1});
  SetInt(zeros.Node("Concat", {p + "batch", p + "width"}, {p + "zeros_shape"}), "axis", 0);
  zeros.Add("ConstantOfShape", {p + "zeros_shape"}, {p + "zeros"});
  LstmCell(zeros, p + "features", p + "zeros", p + "zeros", p + "rnn1_");
  AddIf(b, p + "pick_state", p + "has_state", Branch(given, p + "given", {p + "rnn_h", p + "rnn_c"}),
        Branch(zeros, p + "fresh", {p + "rnn1_h", p + "rnn1_c"}), {p + "h", p + "c"});
  ConstantInt64(b, p + "axis0", {0}, {1});
  b.Add("Unsqueeze", {p + "h", p + "axis0"}, {p + "h_row"}).Add("Unsqueeze", {p + "c", p + "axis0"}, {p + "c_row"});
  SetInt(b.Node("Concat", {p + "h_row", p + "c_row"}, {p + "stateN"}), "axis", 0);
  b.Add("Relu", {p + "h"}, {p + "h_relu"});
  ConstantInt64(b, p + "axis_last", {-1}, {1});
  b.Add("Unsqueeze", {p + "h_relu", p + "axis_last"}, {p + "h_col"});
  Conv1d(b, p + "h_col", kHidden, 1, 1, 1, p + "head");
  b.Add("Sigmoid", {p + "head"}, {p + "prob"});
  b.Add("Squeeze", {p + "prob", p + "axis1"}, {p + "output"});
  return Branch(b, p + "net", {p + "output", p + "stateN"});
}

}  // namespace

ModelBuilder SileroLstmModel() {
  ModelBuilder builder;
  builder.Opset("", 16);
  builder.Input("input", kFloat, {"batch", "samples"}).Input("state", kFloat, {2, "batch", kHidden});
  builder.Input("sr", onnx::TensorProto::INT64, {});
  ConstantInt64(builder, "rate_16k", {16000}, {});
  builder.Add("Equal", {"sr", "rate_16k"}, {"is_16k"});
  AddIf(builder, "If_0", "is_16k", RateBranch("w_", 256, 128), RateBranch("n_", 128, 64), {"output", "stateN"});
  builder.Output("output").Output("stateN");
  return builder;
}

}  // namespace footprint::testing
