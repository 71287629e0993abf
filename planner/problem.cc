#include "planner/problem.h"

#include <algorithm>

namespace footprint::planner {

Bytes ArenaSize(const Problem& problem, const Solution& solution) {
  Bytes arena = 0;
  for (size_t i = 0; i < problem.buffers.size() && i < solution.offsets.size(); ++i) {
    if (problem.buffers[i].size == 0) continue;
    arena = std::max(arena, solution.offsets[i] + problem.buffers[i].size);
  }
  return arena;
}

}  // namespace footprint::planner
