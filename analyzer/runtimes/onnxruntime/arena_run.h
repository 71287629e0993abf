// What ONNX Runtime holds after the first run of a session with its default
// options (CPU arena and memory pattern on): MemoryFigures::
// runtime_reserved_bytes, the heap held after the run above what was held
// just before it, the outputs still referenced by the caller and the
// caller's inputs not counted.
//
// How ORT gets there (each step cites its source):
// - session creation may already have taken arena chunks: the pre-packed
//   weights a kernel allocates with alloc->Alloc (ConvTranspose's transposed
//   filter, conv_transpose.cc PrePack). They stay for the session; the
//   free rest of their regions serves the run;
// - the first run has no memory pattern yet: ExecutionFrame's constructor
//   (execution_frame.cc) finds none cached for the input shapes
//   (SessionState::GetMemoryPatternGroup), so it only traces, and every
//   tensor buffer of ORT's allocation plan is its own arena Alloc
//   (AllocateMLValueTensorSelfOwnBufferHelper), in the plan's order
//   (runtime_buffers.h replays it); kernels take their scratch from the same
//   arena (OpKernelContext::GetTempSpaceAllocator) and give it back before
//   the node ends; a buffer goes back to the arena after its last use, the
//   graph outputs after the caller has them. The pattern found is used from
//   the second run on (one block per run), which is not this figure;
// - the arena (bfc_arena.h) extends by whole regions and never gives them
//   back during or after a run, so the run leaves behind every region it
//   extended by;
// - measured with bench/ground_truth/ort_driver.js (onnxruntime-node 1.30,
//   arena_probes.py): each region also costs region/32 bytes of heap, its
//   AllocationRegion::handles_ array (one 8-byte ChunkHandle per 256 bytes,
//   bfc_arena.h); onnxruntime-node returns each output as a copy of its
//   own (held by the caller); and 3 KiB more are held after any run (one
//   Relu of 256 KiB to 6 MiB: 2,944-3,528 bytes above regions, handles and
//   output copies).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ARENA_RUN_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ARENA_RUN_H_

#include <cstdint>
#include <vector>

#include "analyzer/runtimes/onnxruntime/bfc_arena.h"

namespace footprint::ort {

// One allocation session creation makes from the arena (a kernel's PrePack).
struct CreateChunk {
  int64_t bytes = 0;        // Requested bytes.
  bool given_back = false;  // Freed right after it is taken: a buffer PrePack uses while packing.
};

// One buffer of ORT's allocation plan for a run (runtime_buffers.h).
struct ArenaBuffer {
  int64_t bytes = 0;  // Requested bytes.
  int64_t first = 0;  // The step whose node allocates it.
  int64_t last = 0;   // The step after which it goes back (steps - 1 and output: after the run).
  bool output = false;  // A graph output: back to the arena only once the caller has its copy.
};

// One run as the arena sees it.
struct ArenaRun {
  std::vector<CreateChunk> create_chunks;  // Taken at session creation, in order; kept unless given back.
  std::vector<ArenaBuffer> buffers;    // In the plan's allocation order (by first, then as planned).
  std::vector<std::vector<int64_t>> step_scratch;  // Per step: the scratch blocks, in order, taken after its outputs.
  std::vector<int64_t> final_chunks;   // Taken after the last node: weights the run copies into outputs.
  int64_t output_copy_bytes = 0;       // The caller's copies of the graph outputs.
};

struct ArenaFigures {
  int64_t create_region_bytes = 0;  // Regions the creation's chunks made the arena take.
  int64_t run_region_bytes = 0;     // Regions the first run added.
  int64_t reserved_bytes = 0;       // What ORT holds after the run above before it (see above).
};

// The heap each arena region costs besides its bytes: its handles_ array.
int64_t ArenaRegionHeapBytes(int64_t region_bytes);

// a + b for byte counts >= 0, saturating at 2^62 (the arena's largest size,
// bfc_arena.h) instead of overflowing.
int64_t AddBytesSaturated(int64_t a, int64_t b);

// Takes `chunks` from `arena` in order, giving back each transient one.
void TakeCreateChunks(const std::vector<CreateChunk>& chunks, BfcArena& arena);

// Replays `run` on a fresh default BFC arena.
ArenaFigures ReplayFirstRunOnArena(const ArenaRun& run);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_ARENA_RUN_H_
