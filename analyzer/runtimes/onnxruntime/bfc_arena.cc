// ORT's BFCArena replayed (bfc_arena.h); each rule names the function of
// core/framework/bfc_arena.cc it follows.
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace footprint::ort {
namespace {

constexpr int kNumBins = 21;            // BFCArena::kNumBins.
constexpr int64_t kMinAllocation = 256;  // kMinAllocationSize (1 << kMinAllocationBits).

// Sizes past this are not replayed exactly: a size saturates here rather
// than overflow (no machine has 2^62 bytes; the analysis refuses such sizes
// in its own figures, and a replay must end, not wrap).
constexpr int64_t kLargest = int64_t{1} << 62;

// RoundedBytes: a multiple of 256.
int64_t Rounded(int64_t bytes) {
  return std::min(kLargest, (std::min(bytes, kLargest) + kMinAllocation - 1) / kMinAllocation * kMinAllocation);
}

}  // namespace

BfcArena::BfcArena(BfcArenaOptions options)
    : options_(options), next_region_bytes_(Rounded(options.initial_chunk_bytes)), bins_(kNumBins) {}

// BinNumForSize: floor(log2(max(bytes, 256) / 256)), at most the last bin.
int BfcArena::BinFor(int64_t bytes) {
  const uint64_t v = static_cast<uint64_t>(std::max<int64_t>(bytes, kMinAllocation)) >> 8;
  return std::min(kNumBins - 1, static_cast<int>(std::bit_width(v)) - 1);
}

void BfcArena::Insert(Handle handle) {
  const Chunk& chunk = chunks_[handle];
  bins_[BinFor(chunk.size)].insert({{chunk.size, chunk.address}, handle});
}

void BfcArena::Remove(Handle handle) {
  const Chunk& chunk = chunks_[handle];
  bins_[BinFor(chunk.size)].erase({{chunk.size, chunk.address}, handle});
}

BfcArena::Handle BfcArena::NewChunk(const Chunk& chunk) {
  if (!spare_.empty()) {
    const Handle handle = spare_.back();
    spare_.pop_back();
    chunks_[handle] = chunk;
    return handle;
  }
  chunks_.push_back(chunk);
  return static_cast<Handle>(chunks_.size()) - 1;
}

// FindChunkPtr + SplitFreeChunkFromBin.
BfcArena::Handle BfcArena::FindFit(int64_t rounded) {
  for (int bin = BinFor(rounded); bin < kNumBins; ++bin) {
    for (const BinEntry& entry : bins_[bin]) {
      if (entry.first.first < rounded) continue;
      const Handle handle = entry.second;
      Remove(handle);
      Chunk& chunk = chunks_[handle];
      // size >= 2 x rounded, written so that it cannot overflow.
      if (chunk.size / 2 >= rounded || chunk.size - rounded >= options_.max_dead_bytes_per_chunk) {
        // SplitChunk: the request keeps the low end, the rest is a free chunk above it.
        Chunk rest{.address = chunk.address + rounded, .size = chunk.size - rounded, .prev = handle,
                   .next = chunk.next};
        const Handle rest_handle = NewChunk(rest);
        Chunk& split = chunks_[handle];  // NewChunk may have moved the records.
        if (split.next != kNoChunk) chunks_[split.next].prev = rest_handle;
        split.next = rest_handle;
        split.size = rounded;
        Insert(rest_handle);
      }
      chunks_[handle].in_use = true;
      const int64_t size = chunks_[handle].size;
      in_use_bytes_ = in_use_bytes_ > kLargest - size ? kLargest : in_use_bytes_ + size;  // Saturating.
      return handle;
    }
  }
  return kNoChunk;
}

// Extend with kNextPowerOfTwo: double the region size until it holds the
// request; if it did not have to grow, the next region is twice this one,
// but at most max_power_of_two_extend_bytes (once there, it stays there,
// and a region grown past it for a large request is followed by one of it).
void BfcArena::Extend(int64_t rounded) {
  bool increased = false;
  while (rounded > next_region_bytes_) {
    next_region_bytes_ = next_region_bytes_ >= kLargest / 2 ? kLargest : next_region_bytes_ * 2;
    increased = true;
  }
  const int64_t bytes = next_region_bytes_;
  if (!increased) {
    next_region_bytes_ = next_region_bytes_ < options_.max_power_of_two_extend_bytes / 2
                             ? next_region_bytes_ * 2
                             : options_.max_power_of_two_extend_bytes;
  }
  const Handle handle = NewChunk({.address = region_bytes_, .size = bytes});
  regions_.push_back(bytes);
  region_bytes_ = region_bytes_ > kLargest - bytes ? kLargest : region_bytes_ + bytes;  // Saturating.
  Insert(handle);
}

// AllocateRawInternal: the best fit, else extend once and take it.
BfcArena::Handle BfcArena::Alloc(int64_t bytes) {
  if (bytes <= 0) return kNoChunk;
  const int64_t rounded = Rounded(bytes);
  Handle handle = FindFit(rounded);
  if (handle == kNoChunk) {
    Extend(rounded);
    handle = FindFit(rounded);
  }
  return handle;
}

// FreeAndMaybeCoalesce + Coalesce: merge with the next chunk, then the
// previous one, when free.
void BfcArena::Free(Handle handle) {
  if (handle == kNoChunk) return;
  Chunk& chunk = chunks_[handle];
  chunk.in_use = false;
  in_use_bytes_ = std::max<int64_t>(0, in_use_bytes_ - chunk.size);
  auto merge_next = [this](Handle low) {
    Chunk& lower = chunks_[low];
    const Handle high = lower.next;
    Chunk& upper = chunks_[high];
    lower.size += upper.size;
    lower.next = upper.next;
    if (lower.next != kNoChunk) chunks_[lower.next].prev = low;
    spare_.push_back(high);
  };
  if (chunk.next != kNoChunk && !chunks_[chunk.next].in_use) {
    Remove(chunk.next);
    merge_next(handle);
  }
  Handle result = handle;
  const Handle prev = chunks_[handle].prev;
  if (prev != kNoChunk && !chunks_[prev].in_use) {
    Remove(prev);
    merge_next(prev);
    result = prev;
  }
  Insert(result);
}

}  // namespace footprint::ort
