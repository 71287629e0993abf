// Small models that tests of several stages share, each with the figures it
// is built to give.
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_TEST_MODELS_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_TEST_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/testing/model_builder.h"

namespace footprint::testing {

// x [1, width] -> Add(w [width]) -> a<b>&"c" -> Relu -> y, serialized. The
// middle tensor's name needs escaping in every format; weights are 4 * width bytes.
std::string AddReluModel(int64_t width = 16);

// x [batch, 8] -> Relu -> y with `batch` left unbound: the figures are incomplete.
std::string UnboundBatchModel();

// x [1,16] (64 B) -MatMul-> a [1,64] (256 B) -op1-> b -op2-> c -MatMul-> y [1,16] (64 B).
// Baseline, every step: mm0 x+a 320, op1 a+b 512, op2 b+c 512, mm1 c+y 320: LB 512.
// With a, b and c in one group (alias or in-place): 320, 256, 256, 320: LB 320.
// `op1_extra`/`op2_extra` are further inputs ("shape" is an int64 [1, 64] initializer).
ModelBuilder MatMulChain(const std::string& op1, const std::vector<std::string>& op1_extra, const std::string& op2,
                         const std::vector<std::string>& op2_extra);

// An FPN's top-down adds, as detectors (DBNet, YOLO necks) write them:
// x [1, 3, height, width] -> Conv 3x3 s2 p1 (8 channels) -> c2 -> Conv s2
// -> c4 (-> Conv s2 -> c8 with `levels` 2) -> from the coarsest, Resize
// nearest x2 and Add the finer level ("fpn_add_4" at stride 4, "fpn_add"
// at stride 2) -> Relu -> y. Each add needs a level twice the coarser one:
// with one level ceil(height / 2) even (480 and 483 fit, 481 does not);
// with two, ceil(height / 2) a multiple of 4 (480 and 487 fit).
ModelBuilder FpnAddModel(int levels = 1);

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_TEST_MODELS_H_
