// The exact search's state for one problem (internal to the planner; exact.h
// says how the search works).
//
// exact_search.cc builds it once per problem (sections, intersecting pairs,
// preorders) and keeps the partial plan and its inference (floors, section
// loads, undo trails) as buffers are placed and taken back; exact.cc runs the
// decision search over it (Decide, Search, Continue) and minimizes the arena.
// One searcher serves every capacity MinimizeArena tries: what it learns of
// independent parts carries over.
#ifndef ONNX_FOOTPRINT_PLANNER_EXACT_SEARCH_H_
#define ONNX_FOOTPRINT_PLANNER_EXACT_SEARCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "planner/exact.h"
#include "planner/problem.h"
#include "planner/sections.h"

namespace footprint::planner {

class ExactSearcher {
 public:
  // `problem` must outlive the searcher. Check usable() before Decide.
  explicit ExactSearcher(const Problem& problem);

  // Adds a preorder that follows a known plan: lowest offset first. The
  // search's first dive then tends to rebuild that plan, and backtracking
  // explores its neighbourhood.
  // Linking buffers come first whatever their offset in the plan, so that the
  // dive splits the problem early instead of interleaving its parts.
  void SetGuide(const Solution& guide);

  // False when the problem is past the limits of exact.h (overlapping pairs,
  // size of the largest independent part).
  bool usable() const { return usable_; }
  bool has_pinned() const { return has_pinned_; }

  // Does every buffer fit within `capacity`? Searches until `deadline` or
  // `max_nodes` (-1: no limit).
  DecisionResult Decide(Bytes capacity, absl::Time deadline, int64_t max_nodes);

 private:
  static constexpr Bytes kInfinity = std::numeric_limits<Bytes>::max() / 4;
  static constexpr int kUnplaced = -1;

  // A static preorder: each letter is a key, compared largest first.
  //   T: the peak live bytes over the buffer's sections, W: lifespan width, A: area, Z: size.
  static constexpr std::array<const char*, 3> kPreorders = {"TWA", "WAT", "TAW"};

  enum class Outcome { kFound, kNotFound, kAborted };

  // The buffers of one independent part of the search, in preorder.
  struct Partition {
    SectionRange range;      // The sections it covers.
    std::vector<int> order;  // Its buffers, in the order that breaks ties.
    int preorder = 0;        // Index into kPreorders.
  };

  struct Candidate {
    Bytes offset;  // The buffer's floor.
    int index;     // Its position in the partition's order.
  };

  // A decomposed part's outcome, keyed by capacity, range and (buffer, floor) pairs.
  struct CachedPart {
    Bytes impossible_at = -1;    // Largest capacity proven too small (-1: none).
    Bytes top = 0;               // The best known plan's top byte.
    std::vector<Bytes> offsets;  // Its offsets, buffers in index order (empty: none known).
  };
  static constexpr size_t kMaxCachedParts = 1 << 16;

  // The lowest offset >= `offset` (aligned) where buffer `b` misses every pinned buffer.
  // Inline: Place calls it for every buffer whose floor rises.
  Bytes AvoidPinned(int b, Bytes offset) const {
    offset = AlignUp(offset, align_[b]);
    if (!has_pinned_) return offset;
    for (int p : pinned_overlaps_[b]) {
      const Bytes begin = *problem_.buffers[p].pinned_offset;
      const Bytes end = begin + size_[p];
      if (begin < offset + size_[b] && offset < end) offset = AlignUp(end, align_[b]);
    }
    return offset;
  }

  // Sets up the empty partial plan; false if it already cannot fit.
  bool Reset(Bytes capacity);

  // One search node: tries the candidates for the next buffer of `part`, in
  // canonical order after the one placed at `last_offset` (`last_index`).
  Outcome Search(const Partition& part, Bytes last_offset, int last_index);

  // Places `b` at `offset` and propagates; false when the partial plan can no
  // longer fit. Undo() reverts it either way.
  bool Place(int b, Bytes offset);

  // Reverts Place(b, ...) down to the trail sizes taken before it. Inline:
  // Search calls it for every candidate it places.
  void Undo(int b, size_t offset_mark, size_t floor_mark) {
    while (floor_trail_.size() > floor_mark) {
      section_floor_[floor_trail_.back().first] = floor_trail_.back().second;
      floor_trail_.pop_back();
    }
    while (min_offset_trail_.size() > offset_mark) {
      min_offset_[min_offset_trail_.back().first] = min_offset_trail_.back().second;
      min_offset_trail_.pop_back();
    }
    const SectionRange own = sections_.buffer_range[b];
    for (int s = own.begin; s < own.end; ++s) total_[s] += size_[b];
    offset_[b] = kUnplaced;
  }

  // After placing `b`: search on, splitting the partition where no unplaced
  // buffer spans a section boundary any more.
  Outcome Continue(const Partition& part, int b, Bytes offset, int index);

  void SortByPreorder(int preorder, std::vector<int>& order) const;

  const Problem& problem_;
  bool usable_ = false;
  bool has_pinned_ = false;
  Bytes pinned_end_ = 0;
  Sections sections_;
  std::vector<std::vector<int>> overlaps_;
  std::vector<std::vector<int>> pinned_overlaps_;
  std::vector<int> free_;  // Sized buffers that are not pinned.
  std::vector<Bytes> size_;
  std::vector<Bytes> align_;
  std::vector<std::vector<int>> preorders_;
  std::vector<Bytes> peak_;   // Preorder key T (recomputed for decomposed parts).
  std::vector<Bytes> width_;  // Preorder key W.
  std::vector<Bytes> area_;   // Preorder key A.
  std::vector<Bytes> guide_;  // Offsets of the plan the kGuided preorder follows.
  std::vector<bool> linking_;  // Spans a section boundary that at most kLinkingSpan buffers span.
  static constexpr int kLinkingSpan = 1;
  static constexpr int kGuided = static_cast<int>(kPreorders.size());

  // Search state.
  Bytes capacity_ = 0;
  std::vector<Bytes> offset_;            // kUnplaced or the placed offset.
  std::vector<Bytes> min_offset_;        // Floor of each unplaced buffer.
  std::vector<Bytes> total_;             // Per section: bytes of unplaced buffers.
  std::vector<Bytes> section_floor_;     // Per section: lowest floor of its unplaced buffers.
  std::vector<int> cuts_;                // Per boundary: unplaced buffers spanning it.
  std::vector<uint32_t> section_stamp_;  // Dedup of affected sections.
  uint32_t stamp_ = 0;
  std::vector<int> affected_;
  std::vector<std::pair<int, Bytes>> min_offset_trail_;
  std::vector<std::pair<int, Bytes>> floor_trail_;
  std::vector<Candidate> candidates_;
  absl::flat_hash_map<std::vector<int64_t>, CachedPart> part_cache_;
  Solution solution_;
  absl::Time deadline_;
  int64_t nodes_ = 0;
  int64_t max_nodes_ = -1;
  int64_t budget_ = 0;
  bool timed_out_ = false;
};

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_EXACT_SEARCH_H_
