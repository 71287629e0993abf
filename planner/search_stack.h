// A thread with a stack sized for the exact search.
//
// Why: the exact search (exact.cc) recurses once per buffer it places, so its
// depth is the size of the largest independent part, up to
// kMaxExactPartitionBuffers. Measured with g++ 12 (-fstack-usage): 464 bytes a
// level at -O3, 8256 under AddressSanitizer. The caller's stack is not ours to
// size: a library user's worker thread may have 512 KiB (musl: 128 KiB), and a
// sanitizer build overflows even the 8 MiB main thread on a patched schedule.
// The search therefore runs on a thread of its own whose stack fits the depth,
// and the caller waits for it: same results, nothing shared but the closure.
//
// Usage:
//   if (!RunWithSearchStack(problem.buffers.size(), [&] { result = Search(); })) {
//     // No thread could be started: keep the heuristic plan.
//   }
#ifndef ONNX_FOOTPRINT_PLANNER_SEARCH_STACK_H_
#define ONNX_FOOTPRINT_PLANNER_SEARCH_STACK_H_

#include <cstddef>

#include "absl/functional/function_ref.h"

namespace footprint::planner {

// Stack bytes for a search `depth` levels deep: a fixed reserve plus a margin
// over the measured bytes per level.
size_t SearchStackBytes(size_t depth);

// Runs `work` on a new thread with SearchStackBytes(depth) of stack and waits
// for it. Returns false, without running `work`, if the thread cannot start.
bool RunWithSearchStack(size_t depth, absl::FunctionRef<void()> work);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_SEARCH_STACK_H_
