// ORT's BFC arena (bfc_arena.h) on built sequences of allocations and frees,
// each with the regions and chunk sizes bfc_arena.cc gives, worked out by
// hand in the comments.
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace footprint::ort {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

TEST(BfcArenaTest, NothingAllocatedHoldsNothing) {
  BfcArena arena;
  EXPECT_EQ(arena.Alloc(0), BfcArena::kNoChunk);
  arena.Free(BfcArena::kNoChunk);
  EXPECT_TRUE(arena.regions().empty());
  EXPECT_EQ(arena.region_bytes(), 0);
}

TEST(BfcArenaTest, ASmallRequestTakesTheInitialMegabyteAndIsRoundedTo256) {
  BfcArena arena;
  const BfcArena::Handle a = arena.Alloc(100);
  EXPECT_EQ(arena.regions(), std::vector<int64_t>{kMiB});
  EXPECT_EQ(arena.chunk_bytes(a), 256);  // 1 MiB >= 2 x 256: split.
  const BfcArena::Handle b = arena.Alloc(257);
  EXPECT_EQ(arena.chunk_bytes(b), 512);
  EXPECT_EQ(arena.in_use_bytes(), 768);
}

TEST(BfcArenaTest, SmallRequestsExtendBy1Then2Then4MiB) {
  // 768 KiB each. 1st: region 1 MiB (the next will be 2 MiB), less than
  // twice the request, so given whole. 2nd: region 2 MiB (next 4 MiB), split
  // into 768 KiB + 1.25 MiB free. 3rd: the 1.25 MiB chunk, whole. 4th: 4 MiB.
  BfcArena arena;
  std::vector<BfcArena::Handle> handles;
  for (int i = 0; i < 4; ++i) handles.push_back(arena.Alloc(768 * kKiB));
  EXPECT_EQ(arena.regions(), (std::vector<int64_t>{kMiB, 2 * kMiB, 4 * kMiB}));
  EXPECT_EQ(arena.chunk_bytes(handles[0]), kMiB);
  EXPECT_EQ(arena.chunk_bytes(handles[1]), 768 * kKiB);
  EXPECT_EQ(arena.chunk_bytes(handles[2]), 1280 * kKiB);
  EXPECT_EQ(arena.chunk_bytes(handles[3]), 768 * kKiB);
  EXPECT_EQ(arena.region_bytes(), 7 * kMiB);
}

TEST(BfcArenaTest, ALargeFirstRequestDoublesTheRegionUntilItFitsAndTheNextRegionIsAsLarge) {
  // 3 MiB: 1 -> 2 -> 4 MiB, and as the size had to grow, the next region is
  // 4 MiB again (it doubles only after a region it did not grow for).
  BfcArena arena;
  const BfcArena::Handle a = arena.Alloc(3 * kMiB);
  EXPECT_EQ(arena.chunk_bytes(a), 4 * kMiB);  // 4 < 2 x 3: whole.
  arena.Alloc(3 * kMiB);
  arena.Alloc(3 * kMiB);
  EXPECT_EQ(arena.regions(), (std::vector<int64_t>{4 * kMiB, 4 * kMiB, 8 * kMiB}));
}

TEST(BfcArenaTest, FreedNeighboursMergeSoALargerRequestFitsWithoutExtending) {
  BfcArena arena;
  const BfcArena::Handle a = arena.Alloc(256 * kKiB);
  const BfcArena::Handle b = arena.Alloc(256 * kKiB);
  arena.Free(a);
  arena.Free(b);  // a + b + the rest: the whole 1 MiB free again.
  const BfcArena::Handle c = arena.Alloc(900 * kKiB);
  EXPECT_EQ(arena.regions(), std::vector<int64_t>{kMiB});
  EXPECT_EQ(arena.chunk_bytes(c), kMiB);  // 1 MiB < 2 x 900 KiB: whole.
}

TEST(BfcArenaTest, FreeChunksApartDoNotMergeAndARequestLargerThanEachExtends) {
  // a 300 KiB (split off 1 MiB), b 300 KiB (split off the 724 KiB rest),
  // c 300 KiB takes the last 424 KiB whole (< 600 KiB). Freeing a and c with
  // b between them leaves 300 and 424 KiB apart: 500 KiB needs a new region.
  BfcArena arena;
  const BfcArena::Handle a = arena.Alloc(300 * kKiB);
  const BfcArena::Handle b = arena.Alloc(300 * kKiB);
  const BfcArena::Handle c = arena.Alloc(300 * kKiB);
  EXPECT_EQ(arena.chunk_bytes(c), 424 * kKiB);
  arena.Free(a);
  arena.Free(c);
  arena.Alloc(500 * kKiB);
  EXPECT_EQ(arena.regions(), (std::vector<int64_t>{kMiB, 2 * kMiB}));
  arena.Free(b);  // Now a, b, c merge: 1 MiB free, never given back.
  EXPECT_EQ(arena.region_bytes(), 3 * kMiB);
}

TEST(BfcArenaTest, TheSmallestFittingChunkIsTakenNotTheFirstFreed) {
  // In the 1 MiB region: a, b, c 256 KiB each (split off), d the last
  // 256 KiB whole. Free b; a 1 MiB request extends by 2 MiB and, freed,
  // leaves a 2 MiB free chunk next to b's 256 KiB: a 200 KiB request takes
  // b's chunk (the smallest that fits), so the 2 MiB region stays whole for
  // a 1.5 MiB request.
  BfcArena arena;
  arena.Alloc(256 * kKiB);
  const BfcArena::Handle b = arena.Alloc(256 * kKiB);
  arena.Alloc(256 * kKiB);
  arena.Alloc(256 * kKiB);
  arena.Free(b);
  arena.Free(arena.Alloc(kMiB));
  EXPECT_EQ(arena.regions(), (std::vector<int64_t>{kMiB, 2 * kMiB}));
  const BfcArena::Handle small = arena.Alloc(200 * kKiB);
  EXPECT_EQ(arena.chunk_bytes(small), 256 * kKiB);
  arena.Alloc(1536 * kKiB);
  EXPECT_EQ(arena.region_bytes(), 3 * kMiB);
}

TEST(BfcArenaTest, AChunkWastingMoreThanMaxDeadBytesIsSplitEvenUnderTwiceTheRequest) {
  // A 1 MiB initial chunk and max_dead 64 KiB: a 900 KiB request leaves
  // 124 KiB, over 64 KiB: split despite < 2x. A 100 KiB request then takes
  // that 124 KiB whole (24 KiB of waste, under both limits).
  BfcArena arena({.initial_chunk_bytes = kMiB, .max_dead_bytes_per_chunk = 64 * kKiB});
  const BfcArena::Handle a = arena.Alloc(900 * kKiB);
  EXPECT_EQ(arena.chunk_bytes(a), 900 * kKiB);
  const BfcArena::Handle b = arena.Alloc(100 * kKiB);
  EXPECT_EQ(arena.regions(), std::vector<int64_t>{kMiB});  // b fits in the split-off rest.
  EXPECT_EQ(arena.chunk_bytes(b), 124 * kKiB);
}

}  // namespace
TEST(BfcArenaTest, RegionsStopDoublingAtMaxPowerOfTwoExtendBytes) {
  // 2,100 requests of 1 MiB kept: regions 1, 2, ..., 512 MiB (1,023 MiB),
  // then the cap, 1 GiB, twice. Without the cap the last would be 2 GiB.
  BfcArena arena;
  for (int i = 0; i < 2100; ++i) arena.Alloc(kMiB);
  std::vector<int64_t> expected;
  for (int64_t region = kMiB; region <= 512 * kMiB; region *= 2) expected.push_back(region);
  expected.push_back(1024 * kMiB);
  expected.push_back(1024 * kMiB);
  EXPECT_EQ(arena.regions(), expected);
}

TEST(BfcArenaTest, ASmallerCapStopsTheRegionsThere) {
  // Cap 8 MiB: 1, 2, 4 MiB, then 8 MiB (4 is not below half the cap), then 8 MiB again.
  BfcArena arena({.max_power_of_two_extend_bytes = 8 * kMiB});
  for (int i = 0; i < 24; ++i) arena.Alloc(kMiB);
  EXPECT_EQ(arena.regions(), (std::vector<int64_t>{kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB, 8 * kMiB, 8 * kMiB}));
}

TEST(BfcArenaTest, AnAbsurdRequestEndsWithASaturatedRegionInsteadOfOverflowing) {
  // 3 x 2^61 bytes: doubling from 1 MiB would pass 2^63; the region stops at 2^62.
  BfcArena arena;
  const BfcArena::Handle handle = arena.Alloc(int64_t{3} << 61);
  EXPECT_NE(handle, BfcArena::kNoChunk);
  EXPECT_EQ(arena.region_bytes(), int64_t{1} << 62);
  arena.Alloc(int64_t{3} << 61);  // A second: the sum of the regions saturates too.
  EXPECT_EQ(arena.region_bytes(), int64_t{1} << 62);
}

}  // namespace footprint::ort
