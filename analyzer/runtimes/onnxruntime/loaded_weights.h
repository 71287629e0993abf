// The weights ONNX Runtime holds once a session is created from a path
// (MemoryFigures::runtime_weights_bytes): the initializers after its folding,
// fusions and layout conversions, and the copies its kernels pre-pack, with
// the originals freed where ORT frees them.
//
// The rules, read in ORT's source and each checked with a probe of
// bench/ground_truth/arena_probes.py (onnxruntime-node 1.30):
// - every initializer is an allocation of its own: ORT turns each into an
//   OrtValue before partitioning (Graph::ConvertInitializersIntoOrtValues) and
//   SessionState keeps those buffers (session_state_utils.cc,
//   SaveInitializedTensors, data "in memory"), with or without the memory
//   pattern; one no node reads any more is dropped (Graph::Resolve);
// - a value folded at load is kept as the OrtValue folding made
//   (constant_folding.cc), its inputs dropped when nothing else reads them;
// - a Conv that takes in a BatchNormalization, or a Mul or Add of a
//   per-channel weight (conv_bn_fusion.cc, conv_mul_fusion.cc,
//   conv_add_fusion.cc), gets a new filter of the same bytes and a bias of
//   one value per output channel; the old ones go when nothing else reads them;
// - a Conv run in NCHWc (nchwc_transformer.cc, TransformConv) gets its filter
//   reordered into a new initializer with the output channels padded to the
//   block (ReorderFilter_OIHWBiBo / OIHWBo), and its bias padded likewise;
// - pre-packing (session_state.cc, PrepackConstantInitializedTensors): a
//   kernel packs a constant input; when every reader of an initializer has
//   packed it (its use count, ComputeConstantInitializerUseCount, reaches 0)
//   the initializer is erased and its buffer freed:
//   - MatMul and Gemm (float, B 2-D): MlasGemmPackBSize(N, K) bytes, N padded
//     to 16 (MLAS_SGEMM_STRIDEN_THREAD_ALIGN) and the total to 64, allocated
//     with Reserve (gemm.cc GemmPackBFp32: MakeUniquePtr(..., use_reserve)),
//     so never an arena chunk; one copy however many kernels pack the same B
//     (measured: two MatMuls on one B hold one packed copy);
//   - com.microsoft Attention (float, 2-D weights): per head of Q, K and V,
//     MlasGemmPackBSize(head_size, input hidden), reserved (attention.cc
//     PrePack): a head under 16 columns padded to 16;
//   - ConvTranspose (float, filter of rank > 2, neither K nor N 1): the
//     filter transposed, same bytes, with alloc->Alloc (conv_transpose.cc
//     PrePack): under ORT's default options an arena chunk (arena_run.h);
// - ORT's common subexpression elimination runs before folding and takes
//   constant initializers of <= 8 elements (float, float16, double, int32,
//   int64) of equal value as one value (measured: two Adds of equal 8-float
//   addends keep one, of 9 floats two): nodes of one op, equal attributes
//   and such inputs become one, so equal ConstantOfShape fold into one
//   weight, held once and reordered for NCHWc once;
// - the session's own structures (graph, kernels, plans): a linear model
//   measured on probe chains (session_bytes): a fixed part, per node (and
//   per dim of its output), per attribute it carries once ORT fills its
//   schema's defaults, per initializer held, per node and initializer the
//   rewrites took out (ORT does not give all of them back), per value_info
//   entry, per character of names too long for the string itself.
// - QLinearConv's packed filter (quantized_workspaces.h QLinearConvPackOf),
//   from the session's allocator: the symmetric conv's from the arena's
//   regions under the default options (their bytes without the arena), the
//   others reserved beside them (their bytes either way); the original
//   filter freed when no other kernel reads it as it is.
// - a weight in an external data file ORT keeps as it is: mapped from the
//   file (tensorprotoutils.cc GetFileContent: MapFileIntoMemory), never
//   heap (measured: 8 x 4 MiB external, 0.1 MiB held), so counted apart
//   (mapped_bytes); a copy ORT makes of it (a fused, reordered, packed or
//   float32 one) is heap like any other.
// Not modelled: other pre-packing kernels (the other quantized ones,
// LSTM/GRU), initializers shared between sessions.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOADED_WEIGHTS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOADED_WEIGHTS_H_

#include <cstdint>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/load_peak.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

struct LoadedWeights {
  int64_t held_bytes = 0;             // Initializers kept, new filters and biases, Reserve'd packed copies.
  std::vector<CreateChunk> arena_chunks;  // Packed copies from the session allocator, in node order.
  int64_t session_bytes = 0;          // The session's own structures.
  int64_t packed_copies = 0;          // Initializers some kernel packs.
  int64_t mapped_bytes = 0;           // Weights kept in an external data file ORT maps (not heap, not in held_bytes).
  // The buffers of weights session creation holds, makes and frees, in
  // ORT's order (load_peak.h replays them).
  std::vector<LoadBuffer> load_buffers;
};

// The weights of `graph` (the main graph after the runtime's rewrites) once
// ORT's CPU session is created on `isa` (the quantized kernels pack by it).
LoadedWeights WeightsAfterLoad(CpuIsa isa, const IrGraph& graph, const GraphRewrite& rewrite,
                               const ShapeLookup& shape_of);

// The bytes of weight `id` (an initializer, Constant or folded value), 0
// when not known.
int64_t WeightBytes(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of, ValueId id);

// The bytes LoadedWeights stands for: with the arena (ORT's default options)
// the arena chunks cost the regions they make the arena take, else each its
// own bytes.
int64_t LoadedWeightsBytes(const LoadedWeights& weights, bool arena);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOADED_WEIGHTS_H_
