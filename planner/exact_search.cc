#include "planner/exact_search.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "planner/problem.h"
#include "planner/sections.h"

namespace footprint::planner {

ExactSearcher::ExactSearcher(const Problem& problem) : problem_(problem) {
  const std::vector<Buffer>& buffers = problem.buffers;
  const int n = static_cast<int>(buffers.size());
  sections_ = ComputeSections(problem);
  std::optional<std::vector<std::vector<int>>> overlaps = ComputeOverlaps(problem, sections_, kMaxExactOverlaps);
  if (!overlaps.has_value()) return;
  overlaps_ = std::move(*overlaps);
  size_.resize(n);
  align_.resize(n);
  for (int i = 0; i < n; ++i) {
    size_[i] = buffers[i].size;
    align_[i] = buffers[i].alignment;
    if (buffers[i].size == 0) continue;
    if (buffers[i].pinned_offset.has_value()) {
      has_pinned_ = true;
      pinned_end_ = std::max(pinned_end_, *buffers[i].pinned_offset + buffers[i].size);
    } else {
      free_.push_back(i);
    }
  }
  // The search recurses once per placed buffer of an independent part: bound
  // the largest part so that the depth stays far within the thread's stack.
  {
    std::vector<int> spanning(std::max(sections_.count - 1, 0), 0);
    std::vector<int> starting(sections_.count, 0);
    for (int i : free_) {
      const SectionRange range = sections_.buffer_range[i];
      ++starting[range.begin];
      for (int k = range.begin; k + 1 < range.end; ++k) ++spanning[k];
    }
    // Buffers that alone (or nearly) hold two halves of the problem together:
    // once they are placed, the search splits there.
    linking_.assign(n, false);
    for (int i : free_) {
      const SectionRange range = sections_.buffer_range[i];
      for (int k = range.begin; k + 1 < range.end && !linking_[i]; ++k) linking_[i] = spanning[k] <= kLinkingSpan;
    }
    int part = 0;
    for (int s = 0; s < sections_.count; ++s) {
      part += starting[s];
      if (part > kMaxExactPartitionBuffers) return;
      if (s + 1 == sections_.count || spanning[s] == 0) part = 0;
    }
  }
  if (has_pinned_) {
    pinned_overlaps_.resize(n);
    for (int i : free_) {
      for (int other : overlaps_[i]) {
        if (buffers[other].pinned_offset.has_value()) pinned_overlaps_[i].push_back(other);
      }
      std::sort(pinned_overlaps_[i].begin(), pinned_overlaps_[i].end(),
                [&](int a, int b) { return *buffers[a].pinned_offset < *buffers[b].pinned_offset; });
    }
  }
  // Static preorders.
  peak_.assign(n, 0);
  width_.assign(n, 0);
  area_.assign(n, 0);
  for (int i : free_) {
    const SectionRange range = sections_.buffer_range[i];
    for (int s = range.begin; s < range.end; ++s) peak_[i] = std::max(peak_[i], sections_.live_bytes[s]);
    width_[i] = buffers[i].lifespan.last - buffers[i].lifespan.first + 1;
    area_[i] = size_[i] * width_[i];
  }
  for (int p = 0; p < static_cast<int>(kPreorders.size()); ++p) {
    std::vector<int> order = free_;
    SortByPreorder(p, order);
    preorders_.push_back(std::move(order));
  }
  offset_.assign(n, kUnplaced);
  min_offset_.assign(n, 0);
  solution_.offsets.assign(n, 0);
  total_.assign(sections_.count, 0);
  section_floor_.assign(sections_.count, kInfinity);
  section_stamp_.assign(sections_.count, 0);
  cuts_.assign(std::max(sections_.count - 1, 0), 0);
  usable_ = true;
}

void ExactSearcher::SetGuide(const Solution& guide) {
  guide_ = guide.offsets;
  for (int i : free_) {
    if (linking_[i]) guide_[i] = -1;
  }
  std::vector<int> order = free_;
  SortByPreorder(kGuided, order);
  if (preorders_.size() > kPreorders.size()) preorders_.pop_back();
  preorders_.push_back(std::move(order));
}

void ExactSearcher::SortByPreorder(int preorder, std::vector<int>& order) const {
  if (preorder == kGuided) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (guide_[a] != guide_[b]) return guide_[a] < guide_[b];
      return size_[a] > size_[b];
    });
    return;
  }
  const char* keys = kPreorders[preorder];
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    for (const char* key = keys; *key != '\0'; ++key) {
      const std::vector<Bytes>& values = *key == 'T' ? peak_ : *key == 'W' ? width_ : *key == 'A' ? area_ : size_;
      if (values[a] != values[b]) return values[a] > values[b];
    }
    return a < b;
  });
}

bool ExactSearcher::Reset(Bytes capacity) {
  capacity_ = capacity;
  for (size_t i = 0; i < problem_.buffers.size(); ++i) {
    offset_[i] = problem_.buffers[i].pinned_offset.has_value() || size_[i] == 0 ? 0 : kUnplaced;
  }
  std::fill(total_.begin(), total_.end(), 0);
  std::fill(section_floor_.begin(), section_floor_.end(), kInfinity);
  std::fill(cuts_.begin(), cuts_.end(), 0);
  bool fits = true;
  for (int b : free_) {
    min_offset_[b] = AvoidPinned(b, 0);
    if (min_offset_[b] + size_[b] > capacity_) fits = false;
    const SectionRange range = sections_.buffer_range[b];
    for (int s = range.begin; s < range.end; ++s) {
      total_[s] += size_[b];
      section_floor_[s] = std::min(section_floor_[s], min_offset_[b]);
    }
    for (int k = range.begin; k + 1 < range.end; ++k) ++cuts_[k];
  }
  for (int s = 0; s < sections_.count; ++s) {
    if (total_[s] > 0 && section_floor_[s] + total_[s] > capacity_) fits = false;
  }
  min_offset_trail_.clear();
  floor_trail_.clear();
  candidates_.clear();
  return fits;
}

bool ExactSearcher::Place(int b, Bytes offset) {
  offset_[b] = offset;
  solution_.offsets[b] = offset;
  const Bytes top = offset + size_[b];
  ++stamp_;
  affected_.clear();
  const SectionRange own = sections_.buffer_range[b];
  for (int s = own.begin; s < own.end; ++s) {
    total_[s] -= size_[b];
    if (section_floor_[s] == offset && section_stamp_[s] != stamp_) {
      section_stamp_[s] = stamp_;
      affected_.push_back(s);
    }
  }
  bool fits = true;
  for (int d : overlaps_[b]) {
    if (offset_[d] != kUnplaced) continue;
    const Bytes old = min_offset_[d];
    if (AlignUp(top, align_[d]) <= old) continue;
    const Bytes floor = AvoidPinned(d, top);
    min_offset_trail_.push_back({d, old});
    min_offset_[d] = floor;
    if (floor + size_[d] > capacity_) {
      fits = false;
      break;
    }
    const SectionRange range = sections_.buffer_range[d];
    for (int s = range.begin; s < range.end; ++s) {
      if (section_floor_[s] == old && section_stamp_[s] != stamp_) {
        section_stamp_[s] = stamp_;
        affected_.push_back(s);
      }
    }
  }
  if (!fits) return false;
  for (int s : affected_) {
    // Floors only rise: a member still at the old floor settles it.
    const Bytes old_floor = section_floor_[s];
    Bytes floor = kInfinity;
    for (int m : sections_.members[s]) {
      if (offset_[m] != kUnplaced) continue;
      floor = std::min(floor, min_offset_[m]);
      if (floor == old_floor) break;
    }
    if (floor != section_floor_[s]) {
      floor_trail_.push_back({s, section_floor_[s]});
      section_floor_[s] = floor;
    }
  }
  // Section inference: every unplaced buffer of a section lies above both
  // the current offset and the section's lowest floor. Search has checked the
  // offset; only sections whose floor rose can newly fail on the floor.
  for (int s : affected_) {
    if (total_[s] > 0 && std::max(offset, section_floor_[s]) + total_[s] > capacity_) return false;
  }
  return true;
}

}  // namespace footprint::planner
