#include "planner/validator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace footprint::planner {
namespace {

std::string Describe(const Buffer& buffer, Bytes offset) {
  return absl::StrCat("'", buffer.id, "' (offset ", offset, ", size ", buffer.size, ", steps ",
                      buffer.lifespan.first, "..", buffer.lifespan.last, ")");
}

}  // namespace

absl::Status ValidateProblem(const Problem& problem) {
  // Every sum the planners and the lower bound take (offsets, live bytes) is
  // at most the total of sizes plus alignment padding: bounding it here keeps
  // them all free of overflow.
  Bytes total = 0;
  for (const Buffer& buffer : problem.buffers) {
    if (buffer.size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", buffer.id, "' has negative size ", buffer.size));
    }
    if (buffer.alignment < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer '", buffer.id, "' has alignment ", buffer.alignment, " (must be >= 1)"));
    }
    const Bytes pinned_end = buffer.pinned_offset.value_or(0);
    if (__builtin_add_overflow(total, buffer.size, &total) ||
        __builtin_add_overflow(total, buffer.alignment - 1, &total) ||
        (pinned_end > 0 && __builtin_add_overflow(total, pinned_end, &total))) {
      return absl::OutOfRangeError(
          absl::StrCat("the buffers' total size overflows 64 bits (at buffer '", buffer.id, "')"));
    }
    if (buffer.lifespan.first > buffer.lifespan.last) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", buffer.id, "' ends (step ", buffer.lifespan.last,
                                                     ") before it starts (step ", buffer.lifespan.first, ")"));
    }
    if (buffer.pinned_offset.has_value() &&
        (*buffer.pinned_offset < 0 || *buffer.pinned_offset % buffer.alignment != 0)) {
      return absl::InvalidArgumentError(absl::StrCat("buffer '", buffer.id, "' is pinned at offset ",
                                                     *buffer.pinned_offset, ", not a non-negative multiple of ",
                                                     buffer.alignment));
    }
  }
  // Pinned buffers cannot move: two of them that collide make the problem unsolvable.
  Problem pinned;
  Solution offsets;
  for (const Buffer& buffer : problem.buffers) {
    if (!buffer.pinned_offset.has_value()) continue;
    pinned.buffers.push_back(buffer);
    offsets.offsets.push_back(*buffer.pinned_offset);
  }
  if (absl::Status status = ValidateSolution(pinned, offsets); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("pinned buffers collide: ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateSolution(const Problem& problem, const Solution& solution) {
  const std::vector<Buffer>& buffers = problem.buffers;
  if (solution.offsets.size() != buffers.size()) {
    return absl::InternalError(absl::StrCat("plan has ", solution.offsets.size(), " offsets for ", buffers.size(),
                                            " buffers"));
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& buffer = buffers[i];
    const Bytes offset = solution.offsets[i];
    if (offset < 0) return absl::InternalError(absl::StrCat("negative offset for ", Describe(buffer, offset)));
    if (buffer.alignment > 0 && offset % buffer.alignment != 0) {
      return absl::InternalError(
          absl::StrCat("offset not a multiple of ", buffer.alignment, " for ", Describe(buffer, offset)));
    }
    if (buffer.pinned_offset.has_value() && *buffer.pinned_offset != offset) {
      return absl::InternalError(
          absl::StrCat("pinned at ", *buffer.pinned_offset, " but placed elsewhere: ", Describe(buffer, offset)));
    }
    if (problem.capacity.has_value() && offset + buffer.size > *problem.capacity) {
      return absl::InternalError(
          absl::StrCat("exceeds the capacity of ", *problem.capacity, " bytes: ", Describe(buffer, offset)));
    }
  }

  // Sweep in order of first step; live buffers sit in `live_by_offset` keyed
  // by offset. As long as the plan is valid they are disjoint, so a new buffer
  // can only collide with its neighbours in offset order.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].lifespan.first < buffers[b].lifespan.first;
  });
  std::map<Bytes, size_t> live_by_offset;
  using Expiry = std::pair<Step, size_t>;  // (last step, buffer index)
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<>> expiries;
  for (size_t index : order) {
    const Buffer& buffer = buffers[index];
    if (buffer.size == 0) continue;
    while (!expiries.empty() && expiries.top().first < buffer.lifespan.first) {
      live_by_offset.erase(solution.offsets[expiries.top().second]);
      expiries.pop();
    }
    const Bytes begin = solution.offsets[index];
    const Bytes end = begin + buffer.size;
    auto next = live_by_offset.lower_bound(begin);
    if (next != live_by_offset.end() && next->first < end) {
      return absl::InternalError(absl::StrCat("overlap: ", Describe(buffer, begin), " and ",
                                              Describe(buffers[next->second], next->first)));
    }
    if (next != live_by_offset.begin()) {
      auto previous = std::prev(next);
      if (previous->first + buffers[previous->second].size > begin) {
        return absl::InternalError(absl::StrCat("overlap: ", Describe(buffer, begin), " and ",
                                                Describe(buffers[previous->second], previous->first)));
      }
    }
    live_by_offset.emplace(begin, index);
    expiries.emplace(buffer.lifespan.last, index);
  }
  return absl::OkStatus();
}

}  // namespace footprint::planner
