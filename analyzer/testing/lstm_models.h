// A voice-activity model with the structure torch.onnx writes for Silero
// VAD v5 (opset 16): an If on the sample rate around the whole network, and
// in each branch the decoder's LSTMCell as PyTorch exports it, Ifs on
// shapes included. Shared by the shape engine's and the CLI's tests.
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_LSTM_MODELS_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_LSTM_MODELS_H_

#include "analyzer/testing/model_builder.h"

namespace footprint::testing {

// input float [batch, samples], state float [2, batch, 128], sr int64 scalar
// -> If "If_0" (sr == 16000) -> output [batch, 1], stateN [2, batch, 128].
// Each branch (16 kHz: window 256, hop 128; 8 kHz: window 128, hop 64):
//   STFT: Pad(reflect, window / 4 on the right) -> Unsqueeze -> Conv(2 x
//     (window / 2 + 1) filters, stride hop) -> Slice real and imaginary
//     halves -> magnitude (Pow, Add, Sqrt);
//   encoder: Conv k3 (strides 1, 2, 2, 1) + Relu, to 128 channels;
//   decoder: If (last dim == 1): Squeeze(-1), else Identity; If (Cast of
//     state's dim 0 to bool): the given h = state[0], c = state[1], else
//     zeros; each an LSTMCell: If (rank != 2) Unsqueeze(0) the input and
//     the state, then Unsqueeze(0) again -> LSTM (hidden 128) -> Squeeze(0)
//     of Y_h and Y_c -> If (rank != 2): If (dim 0 == 1) Squeeze(0), else
//     Identity; stateN = Concat of h and c; Relu -> Conv 1x1 -> Sigmoid.
// At 512 samples the 8 kHz branch's encoder ends with 2 frames, the decoder
// keeps rank 3 and the LSTM gets rank 5: that branch cannot run (ONNX
// Runtime fails there too), so without sr only the 16 kHz branch counts.
// At 256 samples both branches run.
ModelBuilder SileroLstmModel();

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_LSTM_MODELS_H_
