#include "planner/sections.h"

#include <algorithm>

namespace footprint::planner {

Sections ComputeSections(const Problem& problem) {
  const std::vector<Buffer>& buffers = problem.buffers;
  // Section boundaries: every step where some buffer starts, and every step
  // right after some buffer ends (lifespans are closed intervals).
  std::vector<Step> points;
  points.reserve(buffers.size() * 2);
  for (const Buffer& buffer : buffers) {
    if (buffer.size == 0) continue;
    points.push_back(buffer.lifespan.first);
    points.push_back(buffer.lifespan.last + 1);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  Sections sections;
  sections.count = points.empty() ? 0 : static_cast<int>(points.size()) - 1;
  sections.buffer_range.resize(buffers.size());
  sections.members.resize(sections.count);
  sections.live_bytes.assign(sections.count, 0);
  auto index_of = [&](Step step) {
    return static_cast<int>(std::lower_bound(points.begin(), points.end(), step) - points.begin());
  };
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& buffer = buffers[i];
    if (buffer.size == 0) continue;
    SectionRange range = {.begin = index_of(buffer.lifespan.first), .end = index_of(buffer.lifespan.last + 1)};
    sections.buffer_range[i] = range;
    for (int s = range.begin; s < range.end; ++s) {
      sections.members[s].push_back(static_cast<int>(i));
      sections.live_bytes[s] += buffer.size;
    }
  }
  return sections;
}

std::optional<std::vector<std::vector<int>>> ComputeOverlaps(const Problem& problem, const Sections& sections,
                                                             int64_t max_pairs) {
  // Two buffers intersect exactly when one of them is live in the other's
  // first section; so each pair is found once from the later-starting one.
  const std::vector<Buffer>& buffers = problem.buffers;
  std::vector<std::vector<int>> overlaps(buffers.size());
  int64_t pairs = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    const SectionRange range = sections.buffer_range[i];
    for (int other : sections.members[range.begin]) {
      if (other == static_cast<int>(i)) continue;
      const SectionRange other_range = sections.buffer_range[other];
      // Count the pair only from the buffer that starts later (ties: higher index).
      if (other_range.begin > range.begin || (other_range.begin == range.begin && other > static_cast<int>(i))) {
        continue;
      }
      if (++pairs > max_pairs) return std::nullopt;
      overlaps[i].push_back(other);
      overlaps[other].push_back(static_cast<int>(i));
    }
  }
  return overlaps;
}

}  // namespace footprint::planner
