// The first run with ORT's default options on its BFC arena (arena_run.h).
#include "analyzer/runtimes/onnxruntime/arena_run.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/runtimes/onnxruntime/bfc_arena.h"

namespace footprint::ort {
namespace {

// AllocationRegion::handles_ (bfc_arena.h): one ChunkHandle (size_t) per
// kMinAllocationSize (256) bytes of the region.
constexpr int64_t kHandleBytesPer256 = 8;
// Held after any run besides regions and output copies (measured, arena_run.h;
// both printed by bench/ground_truth/fit_constants.py, ctest onnxruntime_constants).
constexpr int64_t kRunFixedBytes = 3 * 1024;

}  // namespace

int64_t ArenaRegionHeapBytes(int64_t region_bytes) {
  return region_bytes + region_bytes / 256 * kHandleBytesPer256;  // At most 2^62 + 2^57 (bfc_arena.h): no overflow.
}

int64_t AddBytesSaturated(int64_t a, int64_t b) {
  constexpr int64_t kLargest = int64_t{1} << 62;
  a = std::min(a, kLargest);
  b = std::min(b, kLargest);
  return a > kLargest - b ? kLargest : a + b;
}

void TakeCreateChunks(const std::vector<CreateChunk>& chunks, BfcArena& arena) {
  for (const CreateChunk& chunk : chunks) {
    const BfcArena::Handle handle = arena.Alloc(chunk.bytes);
    if (chunk.given_back) arena.Free(handle);
  }
}

ArenaFigures ReplayFirstRunOnArena(const ArenaRun& run) {
  BfcArena arena;
  TakeCreateChunks(run.create_chunks, arena);
  ArenaFigures figures;
  figures.create_region_bytes = arena.region_bytes();
  const int64_t steps = static_cast<int64_t>(run.step_scratch.size());
  // Buffers by the step that allocates them and the step after which they
  // go back; outputs go back after the run, which adds no region.
  std::vector<std::vector<size_t>> allocated_at(steps), freed_after(steps);
  for (size_t i = 0; i < run.buffers.size(); ++i) {
    const ArenaBuffer& buffer = run.buffers[i];
    if (buffer.first < 0 || buffer.first >= steps) continue;
    allocated_at[buffer.first].push_back(i);
    if (!buffer.output && buffer.last >= buffer.first && buffer.last < steps) freed_after[buffer.last].push_back(i);
  }
  std::vector<BfcArena::Handle> handle_of(run.buffers.size(), BfcArena::kNoChunk);
  for (int64_t step = 0; step < steps; ++step) {
    // The node's outputs (OpKernelContext::Output), then its scratch block
    // by block, all given back when it returns, then what this step read
    // for the last time (SequentialExecutor releases them after the node).
    for (size_t i : allocated_at[step]) handle_of[i] = arena.Alloc(run.buffers[i].bytes);
    std::vector<BfcArena::Handle> scratch;
    for (int64_t bytes : run.step_scratch[step]) scratch.push_back(arena.Alloc(bytes));
    for (BfcArena::Handle handle : scratch) arena.Free(handle);
    for (size_t i : freed_after[step]) arena.Free(handle_of[i]);
  }
  // A graph output that is a weight is copied into an output buffer of the
  // arena once the nodes have run (utils.cc, the fetches not produced by a node).
  for (int64_t bytes : run.final_chunks) arena.Alloc(bytes);
  figures.run_region_bytes = arena.region_bytes() - figures.create_region_bytes;
  figures.reserved_bytes = AddBytesSaturated(
      AddBytesSaturated(ArenaRegionHeapBytes(figures.run_region_bytes), run.output_copy_bytes), kRunFixedBytes);
  return figures;
}

}  // namespace footprint::ort
