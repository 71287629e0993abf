// ONNX Runtime's CPU arena (BFCArena, core/framework/bfc_arena.{h,cc}),
// replayed over a sequence of allocations and frees: which free chunk each
// request takes, when the arena extends and by how much.
//
// Why: with ORT's default session options every tensor of a run is a chunk
// of this arena, and the arena's regions are never given back (BFCArena only
// frees them in Shrink(), which runs only when the caller asks for it with a
// run option). What ORT holds after a run is therefore the sum of the regions
// the run's sequence made it extend by, not the run's live peak: regions grow
// by powers of two, and a chunk at most twice the request is given whole.
//
// The rules, each from bfc_arena.cc (function named):
// - a request is rounded up to a multiple of 256 bytes (RoundedBytes); 0 bytes
//   allocates nothing (AllocateRawInternal);
// - free chunks sit in 21 bins by size: bin b holds sizes [256 << b,
//   256 << (b + 1)), the last bin everything larger (BinNumForSize); within a
//   bin they are ordered by size, then address (Bin::ChunkComparator);
// - a request takes the first chunk at least its size, searching from its
//   own bin upwards, smallest first (FindChunkPtr);
// - the chunk is split at the request when it is at least twice the request
//   or would waste at least max_dead_bytes_per_chunk (128 MiB); else the
//   request gets it whole (SplitFreeChunkFromBin);
// - a freed chunk merges with its free neighbours in the same region
//   (FreeAndMaybeCoalesce, Coalesce);
// - with no fitting chunk the arena extends by one region
//   (Extend, kNextPowerOfTwo): the region size starts at the initial chunk
//   (1 MiB) and doubles until it holds the request; when it did not have to
//   double, it doubles after this region, so that successive regions of
//   small requests go 1, 2, 4, 8 MiB..., up to max_power_of_two_extend_bytes
//   (1 GiB), where they stay (ORT 1.16 and later, microsoft/onnxruntime#15983;
//   its plugin arena's copy states the rule: double while below half the cap,
//   else the cap);
// - sizes saturate at 2^62 bytes instead of overflowing, so that a replay of
//   absurd sizes ends (the analysis refuses them in its own figures);
// - Reserve() bypasses the chunks: a separate block of the device allocator,
//   freed when the caller frees it (Reserve, Free).
// Not modelled: addresses across regions come from malloc/mmap; here a new
// region lies above the ones before it, which only orders equal-sized free
// chunks of different regions.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_BFC_ARENA_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_BFC_ARENA_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace footprint::ort {

struct BfcArenaOptions {
  int64_t initial_chunk_bytes = int64_t{1} << 20;         // DEFAULT_INITIAL_CHUNK_SIZE_BYTES.
  int64_t max_dead_bytes_per_chunk = int64_t{128} << 20;  // DEFAULT_MAX_DEAD_BYTES_PER_CHUNK.
  int64_t max_power_of_two_extend_bytes = int64_t{1} << 30;  // DEFAULT_MAX_POWER_OF_TWO_EXTEND_BYTES (1 GiB).
};

class BfcArena {
 public:
  using Handle = int64_t;
  static constexpr Handle kNoChunk = -1;  // What Alloc(0) returns (ORT: nullptr).

  explicit BfcArena(BfcArenaOptions options = {});

  // Takes a chunk of at least `bytes` (> 0), extending the arena when no
  // free chunk fits; kNoChunk for 0 bytes.
  Handle Alloc(int64_t bytes);
  // Gives a chunk back (kNoChunk: nothing); it merges with free neighbours.
  void Free(Handle handle);

  // The regions, in the order the arena extended by them (bytes each).
  const std::vector<int64_t>& regions() const { return regions_; }
  // Their sum: what the arena holds from the device allocator.
  int64_t region_bytes() const { return region_bytes_; }
  // The bytes of the chunks in use (their full sizes; saturating at 2^62 like every size here).
  int64_t in_use_bytes() const { return in_use_bytes_; }
  // The size of the chunk behind `handle`.
  int64_t chunk_bytes(Handle handle) const { return chunks_[handle].size; }

 private:
  struct Chunk {
    int64_t address = 0;  // Synthetic: the region's base + the offset in it.
    int64_t size = 0;
    bool in_use = false;
    Handle prev = kNoChunk;  // The chunk just below in the same region.
    Handle next = kNoChunk;  // The chunk just above in the same region.
  };
  using BinEntry = std::pair<std::pair<int64_t, int64_t>, Handle>;  // ((size, address), chunk).

  static int BinFor(int64_t bytes);
  void Insert(Handle handle);
  void Remove(Handle handle);
  Handle FindFit(int64_t rounded);
  void Extend(int64_t rounded);
  Handle NewChunk(const Chunk& chunk);

  BfcArenaOptions options_;
  int64_t next_region_bytes_;  // curr_region_allocation_bytes_.
  std::vector<int64_t> regions_;
  int64_t region_bytes_ = 0;
  int64_t in_use_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<Handle> spare_;  // Merged-away chunk records, reused.
  std::vector<std::set<BinEntry>> bins_;
};

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_BFC_ARENA_H_
