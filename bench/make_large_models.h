// Builds the large models the benchmarks and end-to-end timings use, at run
// time, so that no big file is ever committed.
//
// Why a streaming writer: a model with GiB of inline weights must not need
// GiB of memory to write. The graph is serialized by protobuf without its
// initializers, and each initializer's raw_data is then streamed after its
// header (a GraphProto's fields may come in any order on the wire).
#ifndef ONNX_FOOTPRINT_BENCH_MAKE_LARGE_MODELS_H_
#define ONNX_FOOTPRINT_BENCH_MAKE_LARGE_MODELS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace footprint::bench {

enum class ModelKind {
  kInline1G,    // 16 MatMul layers, 4096x4096 float weights inline: 1 GiB of raw_data.
  kInline3G,    // 48 such layers: 3 GiB, past protobuf's 2 GiB message limit.
  kExternal8G,  // 32 MatMul layers, 8192x8192 float weights in a sparse weights.bin: 8 GiB.
  kBlocks,      // `blocks` transformer-like blocks of 9 ops (LayerNormalization, MatMul, Add,
                // Sigmoid, Mul, MatMul, Add, Mul, residual Add): 2,000 blocks = 18,000 nodes.
};

struct MakeOptions {
  ModelKind kind = ModelKind::kBlocks;  // What to build.
  std::string output;                   // The .onnx path; external data goes beside it.
  int blocks = 2000;                    // kBlocks: number of blocks (9 nodes each).
  int hidden = 64;                      // kBlocks: hidden size H (the MLP is H -> 2H -> H).
  bool symbolic_dims = false;           // kBlocks: input and output [batch, sequence, H] instead of [1, 128, H].
};

// Writes the model (and for kExternal8G its sparse weights.bin).
absl::Status MakeModel(const MakeOptions& options);

// The exact bytes of weights the model holds (initializers by dims and type).
int64_t ExpectedWeightsBytes(const MakeOptions& options);

}  // namespace footprint::bench

#endif  // ONNX_FOOTPRINT_BENCH_MAKE_LARGE_MODELS_H_
