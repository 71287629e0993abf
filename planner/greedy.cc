#include "planner/greedy.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace footprint::planner {
namespace {

Bytes AlignUp(Bytes value, Bytes alignment) {
  if (alignment <= 1) return value;
  const Bytes remainder = value % alignment;
  return remainder == 0 ? value : value + (alignment - remainder);
}

}  // namespace

std::vector<int> OrderBySizeDescending(const Problem& problem) {
  std::vector<int> order(problem.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Buffer& x = problem.buffers[a];
    const Buffer& y = problem.buffers[b];
    if (x.size != y.size) return x.size > y.size;
    const Step x_length = x.lifespan.last - x.lifespan.first;
    const Step y_length = y.lifespan.last - y.lifespan.first;
    return x_length > y_length;
  });
  return order;
}

Solution PlaceBestFit(const Problem& problem, const std::vector<int>& order) {
  const std::vector<Buffer>& buffers = problem.buffers;
  Solution solution;
  solution.offsets.assign(buffers.size(), 0);
  std::vector<int> placed;
  placed.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].pinned_offset.has_value()) {
      solution.offsets[i] = *buffers[i].pinned_offset;
      placed.push_back(static_cast<int>(i));
    }
  }
  std::vector<std::pair<Bytes, Bytes>> occupied;  // [begin, end) of conflicting placed buffers.
  for (int index : order) {
    const Buffer& buffer = buffers[index];
    if (buffer.pinned_offset.has_value()) continue;
    occupied.clear();
    for (int other : placed) {
      const Buffer& placed_buffer = buffers[other];
      if (placed_buffer.size == 0 || !placed_buffer.lifespan.Intersects(buffer.lifespan)) continue;
      occupied.emplace_back(solution.offsets[other], solution.offsets[other] + placed_buffer.size);
    }
    std::sort(occupied.begin(), occupied.end());
    Bytes best_offset = -1;
    Bytes best_gap = std::numeric_limits<Bytes>::max();
    Bytes cursor = 0;  // Lowest byte above every occupied range seen so far.
    for (const auto& [begin, end] : occupied) {
      const Bytes candidate = AlignUp(cursor, buffer.alignment);
      if (begin > cursor && candidate + buffer.size <= begin) {
        const Bytes gap = begin - cursor;
        if (gap < best_gap) {
          best_gap = gap;
          best_offset = candidate;
        }
      }
      cursor = std::max(cursor, end);
    }
    solution.offsets[index] = best_offset >= 0 ? best_offset : AlignUp(cursor, buffer.alignment);
    placed.push_back(index);
  }
  return solution;
}

Solution GreedyBySize(const Problem& problem) {
  return PlaceBestFit(problem, OrderBySizeDescending(problem));
}

}  // namespace footprint::planner
