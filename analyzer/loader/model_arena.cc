#include "analyzer/loader/model_arena.h"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace footprint {
namespace {

// The arena's blocks (see SharedModel): from the heap while small; from
// 2 MiB up, mappings aligned to 2 MiB and advised for transparent huge pages.
// Where the kernel gives no huge pages, they are plain anonymous mappings.
constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t RoundUpToHugePage(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

void* AllocateBlock(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new(bytes);
  const size_t length = RoundUpToHugePage(bytes);
  void* mapped = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  // Keep the 2 MiB-aligned `length` bytes inside the mapping; unmap the rest.
  char* const begin = static_cast<char*>(mapped);
  char* const aligned = reinterpret_cast<char*>(RoundUpToHugePage(reinterpret_cast<uintptr_t>(begin)));
  if (aligned != begin) munmap(begin, static_cast<size_t>(aligned - begin));
  char* const end = begin + length + kHugePageBytes;
  if (aligned + length != end) munmap(aligned + length, static_cast<size_t>(end - (aligned + length)));
  madvise(aligned, length, MADV_HUGEPAGE);
  return aligned;
}

void FreeBlock(void* block, size_t bytes) {
  if (bytes < kHugePageBytes) {
    ::operator delete(block);
  } else {
    munmap(block, RoundUpToHugePage(bytes));
  }
}

// A file of a few MiB can hold a structure of that size: its arena starts
// on a huge page. A smaller one starts with a block from the heap, since a
// model of a few KiB would spend more mapping and zeroing 2 MiB than it saves.
constexpr uint64_t kHugeArenaFromFileBytes = 4 << 20;

}  // namespace

google::protobuf::ArenaOptions ModelArenaOptions(uint64_t file_bytes) {
  google::protobuf::ArenaOptions options;
  options.start_block_size = file_bytes >= kHugeArenaFromFileBytes ? kHugePageBytes : 64 << 10;
  options.max_block_size = 8 << 20;  // Blocks double up to 8 MiB.
  options.block_alloc = &AllocateBlock;
  options.block_dealloc = &FreeBlock;
  return options;
}

}  // namespace footprint
