// Models whose shapes depend on values known before running, as exporters
// write them: PyTorch's F.pad pads chain, an If on a sample-rate input, an If
// on a bool use-cache input with nested Ifs on a state's shape, and an STFT
// (Pad + Conv + Slice) feeding an LSTM. Shared by the shape engine's, the
// analysis' and the CLI's tests.
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_VALUE_MODELS_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_VALUE_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/testing/model_builder.h"

namespace footprint::testing {

// Sets graph attribute `name` of `node` (an If's branch, a Loop's body).
void GraphAttribute(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph);

// A body: the graph a builder built, named `name`, returning `outputs`
// (their types left to inference).
onnx::GraphProto Branch(const ModelBuilder& builder, const std::string& name, const std::vector<std::string>& outputs);

// If(cond) named `name` with the two branches, writing `outputs`.
void AddIf(ModelBuilder& builder, const std::string& name, const std::string& cond, const onnx::GraphProto& then_branch,
           const onnx::GraphProto& else_branch, const std::vector<std::string>& outputs);

// A Constant node writing an int64 tensor of `dims` (a scalar when empty).
void ConstantInt64(ModelBuilder& builder, const std::string& name, const std::vector<int64_t>& values,
                   const std::vector<int64_t>& dims);

// y = F.pad(x, torch_pads, mode) as torch.onnx exports it at opsets 11-17:
// Shape/Gather/Mul/Sub/ConstantOfShape/Concat -> Reshape([-1, 2]) ->
// Slice(starts -1, ends INT64_MIN, steps -1) -> Transpose -> Reshape([-1]) ->
// Cast -> Pad. Helper values are named "<y>_...", the ONNX pads "<y>_pads".
void TorchPad(ModelBuilder& builder, const std::string& x, int64_t rank, const std::vector<int64_t>& torch_pads,
              const std::string& mode, const std::string& y);

// sr (int64 scalar), x float [1, 512] -> If(sr == 16000, node "pick_rate"):
// then Concat(x, x) [1, 1024], else Identity(x) [1, 512] -> y -> Relu -> out.
// y is 4096 B at 16000, 2048 B at 8000; 4096 B bound when sr is unknown.
ModelBuilder SampleRateIfModel();

// use_cache_branch (bool [1]), x float [8, 16], state float [past, 16] ->
// If "use_cache" (use_cache_branch):
//   then: If "state_is_empty" (Gather(Shape(state), 0) == 0):
//           then Identity(x) [8, 16]; else Concat(state, x) [past + 8, 16];
//         If "state_is_scalar" (Size(Shape(state)) == 0): then Identity(x), else Identity(state)
//   else: Identity(x) [8, 16]
// -> y. With past = 4: y is [12, 16] (768 B) when use_cache_branch = 1,
// [8, 16] (512 B) when 0, and [12, 16] bound when unknown.
ModelBuilder CacheBranchModel();

// x float [1, 1, 1600] -> If "pick_window" (sr == 16000):
//   then STFT(window 512, hop 128), else STFT(window 256, hop 64), each
//   TorchPad(reflect, window/2 each side) -> Conv (2 x (window/2 + 1)
//   filters) -> Slice(the first window/2 + 1 channels) -> Transpose to
//   [frames, 1, bins] -> LSTM(hidden 64) -> Y [frames, 1, 1, 64]
// -> y. 16000: 13 frames (3328 B); 8000: 26 frames (6656 B).
ModelBuilder StftLstmModel();

// A voice-activity model shaped like Silero VAD's export: input float
// [batch, 512], sr (int64 scalar), state float [2, batch, 128] ->
// If "pick_rate" (sr == 16000) -> output [batch, 1], stateN [2, batch, 128],
// context -> Relu -> context_out.
//   then (16 kHz): If "state_is_empty_16k" (Gather(Shape(state), 1) == 0):
//     zeros or state; + MatMul(input) -> Tanh -> stateN; context [batch, 64].
//   else (8 kHz): Slice(state, 0:min(sr/125, 64) on axis 2) (64 channels at
//     8000, unknown without sr: that slice stays unsized) -> If "state_is_empty_8k" (its length == 0): then
//     zeros [2, batch, 64], else the slice -> If "flatten_8k" (its length > 32):
//     then Flatten(axis 1) [2, batch*64], else as is [2, batch, 64] (ranks
//     differ) -> Reshape [2, -1, 64] + MatMul(input) -> Concat -> stateN;
//     context [batch, 32].
// Without sr, the 8 kHz branch's nested Ifs are undecided: one has a branch
// of unknown size, the other branches of different ranks.
ModelBuilder VoiceActivityModel();

// flag (bool scalar), x float [4] -> If "pick_trips" (flag): then 3, else 5
// -> trips -> Loop "repeat" (trips) whose body writes x each iteration ->
// rows [trips, 4] -> Relu -> out. Without flag: 5 trips, a bound.
ModelBuilder TripCountIfModel();

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_VALUE_MODELS_H_
