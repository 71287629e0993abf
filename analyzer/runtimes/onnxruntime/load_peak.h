// The heap's high-water while ONNX Runtime creates a session from a path
// (MemoryFigures::runtime_load_peak_bytes), replayed from the buffers of
// weights it holds, makes and frees on the way (loaded_weights.h builds the
// list from the rewritten graph).
//
// Why it matters: a process is killed at its highest point, and for a model
// whose weights ORT rewrites at load that point is during creation, when
// the old and the new weights are alive together, not during a run.
//
// The steps, each read in ORT's source (onnxruntime a86d86ad1, which 1.30
// contains) and measured with bench/ground_truth/load_probes.py (ORT 1.30,
// AVX-512, heap high-water above the heap before creation, warm process):
// - reading: the file is parsed into one ModelProto (model.cc Load(fd):
//   ParseFromZeroCopyStream, no copy of the whole file), then every
//   initializer becomes an OrtValue one at a time, the parsed bytes freed
//   right after (graph.cc ConvertInitializersIntoOrtValues): all the file's
//   weights plus its largest once more (8 x 4 MiB: 36.1 MiB; 2 x 16 MiB:
//   48.1 MiB). External data is mapped, never heap (tensorprotoutils.cc
//   GetFileContent: MapFileIntoMemory): 0.1 MiB for the same weights;
// - each later stage is one optimizer pass or a step of SessionState; a
//   pass frees the weights it replaced only at its end (graph_transformer.cc:
//   one Graph::Resolve after the pass), so what a stage makes is alive
//   beside everything it replaces, plus the copies its rewrite of one
//   weight takes and frees (largest such rewrite):
//   - constant folding (constant_folding.cc): each folded value, with a
//     copy of each of its node's inputs (OptimizerExecutionFrame); its
//     inputs and any folded value only another fold read go at the pass's
//     end (a 16 MiB weight folded: 48.1 MiB inline, 32.1 MiB external);
//   - Conv fusions (conv_bn_fusion.cc, conv_mul_fusion.cc, conv_add_fusion.cc):
//     the new filter, with the Initializer's copy and its proto (2 more);
//   - float16 weights ORT runs in float32 (fuse_initializers_transformer.cc,
//     level 4): the float32 copy, with the Initializer's float16 copy;
//   - NCHWc filters (nchwc_transformer.cc TransformConv): the reordered
//     filter, with the Initializer's copy of the old one, the reordered
//     vector and its proto (4 Convs of 9 MiB: 36 + 36 + 27 = 99.1 MiB;
//     external filters: 63.1 MiB; after a BatchNormalization fusion, or
//     from float16 filters, the same 99.1 MiB);
//   - pre-packing (session_state.cc PrepackConstantInitializedTensors),
//     kernel by kernel in node order: each packed copy is made while its
//     original is alive, and the original goes as soon as its last reader
//     has packed it (4 MatMuls on 16 MiB weights: 64 + 16 = 80.1 MiB;
//     external: 64.1 MiB); packs from the session's arena cost the
//     regions they make it take (arena_run.h), a buffer packing uses and
//     gives back is alive beside its pack;
// - the session's own structures (loaded_weights.h, session_bytes) are
//   counted throughout.
// Not modelled: protobuf's growth of a single initializer over 50 MB while
// parsing (up to 1.5x it, briefly), initializers inside If/Loop bodies (ORT
// holds their node's copy too), Constant nodes' copies while the graph is
// built, a kernel's pack that another byte-identical pack replaces.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOAD_PEAK_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOAD_PEAK_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace footprint::ort {

// The stages of session creation that hold, make and free weights, in ORT's
// order (float16 conversion runs at level 4, and the level-3 NCHWc pass
// reruns on the float32 filters it made, so it comes before NCHWc here).
enum class LoadStage { kReading, kFolding, kFusion, kFloat16, kNchwc, kPrePack };

// What a report says for `stage` ("NCHWc filters").
std::string_view LoadStageName(LoadStage stage);

// One buffer of weights during creation: one of the file's weights, held
// from the start, or one a stage makes.
struct LoadBuffer {
  LoadStage made_at = LoadStage::kReading;  // kReading: the file's own.
  int64_t bytes = 0;            // Heap bytes it holds (0: mapped from an external data file).
  int64_t transient_bytes = 0;  // Copies alive beside it while it is made, freed right after.
  bool transient_in_arena = false;  // That copy is a chunk of the session's arena (default options).
  bool arena = false;           // A chunk of the session's arena (ORT's default options).
  bool kept = false;            // Still held once the session is created.
  std::vector<int> replaces;    // Earlier buffers (indices) it stands in for.
};

// Where creation peaks: its bytes above the heap before it, and the stage.
struct LoadPeak {
  int64_t bytes = 0;
  LoadStage stage = LoadStage::kReading;
};

// Replays `buffers` (the file's first, then each stage's in the order ORT
// makes them): a buffer another replaces goes at the end of the stage of
// the last buffer replacing it (in pre-packing: right after that buffer)
// unless it is kept. `arena`: ORT's default options (packs from the arena
// cost its regions); `session_bytes` is held throughout.
LoadPeak ReplayLoad(const std::vector<LoadBuffer>& buffers, bool arena, int64_t session_bytes);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_LOAD_PEAK_H_
