#include "planner/exact.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "planner/exact_search.h"
#include "planner/lower_bound.h"
#include "planner/search_stack.h"
#include "planner/sections.h"

namespace footprint::planner {

DecisionResult ExactSearcher::Decide(Bytes capacity, absl::Time deadline, int64_t max_nodes) {
  DecisionResult result;
  deadline_ = deadline;
  nodes_ = 0;
  max_nodes_ = max_nodes;
  timed_out_ = false;
  if (pinned_end_ > capacity || !Reset(capacity)) {
    result.feasibility = Feasibility::kImpossible;
    return result;
  }
  // Static partitions: section boundaries that no buffer spans.
  std::vector<SectionRange> ranges;
  int begin = 0;
  for (int k = 0; k + 1 < sections_.count; ++k) {
    if (cuts_[k] == 0) {
      ranges.push_back({begin, k + 1});
      begin = k + 1;
    }
  }
  if (sections_.count > 0) ranges.push_back({begin, sections_.count});
  for (const SectionRange& range : ranges) {
    std::vector<Partition> parts;
    for (int p = static_cast<int>(preorders_.size()) - 1; p >= 0; --p) {  // The guided preorder first.
      Partition part = {.range = range, .preorder = p};
      for (int b : preorders_[p]) {
        if (sections_.buffer_range[b].begin >= range.begin && sections_.buffer_range[b].begin < range.end) {
          part.order.push_back(b);
        }
      }
      parts.push_back(std::move(part));
    }
    if (parts.empty() || parts[0].order.empty()) continue;
    bool solved = false;
    for (int64_t limit = std::max<int64_t>(64, 2 * parts[0].order.size()); !solved; limit *= 2) {
      for (const Partition& part : parts) {
        budget_ = limit;
        const Outcome outcome = Search(part, 0, -1);
        if (outcome == Outcome::kFound) {
          solved = true;
          break;
        }
        if (outcome == Outcome::kNotFound) {
          // The whole tree was searched: no plan fits (canonical plans are
          // complete unless buffers are pinned).
          result.feasibility = has_pinned_ ? Feasibility::kUnknown : Feasibility::kImpossible;
          result.nodes = nodes_;
          return result;
        }
        if (timed_out_) {
          result.nodes = nodes_;
          return result;
        }
      }
    }
  }
  result.feasibility = Feasibility::kFits;
  result.nodes = nodes_;
  result.solution = solution_;
  for (size_t i = 0; i < problem_.buffers.size(); ++i) {
    const Buffer& buffer = problem_.buffers[i];
    if (buffer.pinned_offset.has_value()) {
      result.solution.offsets[i] = *buffer.pinned_offset;
    } else if (buffer.size == 0) {
      result.solution.offsets[i] = 0;
    }
  }
  return result;
}

ExactSearcher::Outcome ExactSearcher::Search(const Partition& part, Bytes last_offset, int last_index) {
  // A node costs O(buffers of the partition): big partitions check the clock every node.
  if (((++nodes_ & 255) == 0 || part.order.size() > 512) && absl::Now() > deadline_) timed_out_ = true;
  if (timed_out_ || --budget_ < 0 || (max_nodes_ >= 0 && nodes_ > max_nodes_)) {
    if (max_nodes_ >= 0 && nodes_ > max_nodes_) timed_out_ = true;
    return Outcome::kAborted;
  }
  const size_t base = candidates_.size();
  Bytes min_height = kInfinity;
  bool any_unplaced = false;
  const int count = static_cast<int>(part.order.size());
  for (int i = 0; i < count; ++i) {
    const int b = part.order[i];
    if (offset_[b] != kUnplaced) continue;
    any_unplaced = true;
    const Bytes floor = min_offset_[b];
    min_height = std::min(min_height, floor + size_[b]);
    // Canonical order: offsets never decrease, ties go by preorder.
    if (floor < last_offset || (floor == last_offset && i < last_index)) continue;
    candidates_.push_back({floor, i});
  }
  if (!any_unplaced) return Outcome::kFound;
  // Dominance: nothing goes at or above the top of another buffer's floor placement.
  size_t end = base;
  for (size_t k = base; k < candidates_.size(); ++k) {
    if (candidates_[k].offset < min_height) candidates_[end++] = candidates_[k];
  }
  candidates_.resize(end);
  std::sort(candidates_.begin() + base, candidates_.end(), [](const Candidate& a, const Candidate& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
  });
  // Offset inference, before placing anything: at offset `o`, a section whose
  // unplaced load exceeds capacity - o can only be saved by the candidate
  // itself covering it. The overfull sections are found once per offset.
  Bytes overfull_offset = -1;
  int overfull_first = 0, overfull_last = -1;
  Bytes overfull_max = 0;
  Outcome outcome = Outcome::kNotFound;
  for (size_t k = base; k < end; ++k) {
    const Candidate candidate = candidates_[k];
    const int b = part.order[candidate.index];
    if (candidate.offset != overfull_offset) {
      overfull_offset = candidate.offset;
      overfull_first = part.range.end;
      overfull_last = -1;
      overfull_max = 0;
      for (int s = part.range.begin; s < part.range.end; ++s) {
        if (total_[s] > capacity_ - overfull_offset) {
          overfull_first = std::min(overfull_first, s);
          overfull_last = s;
          overfull_max = std::max(overfull_max, total_[s]);
        }
      }
    }
    if (overfull_last >= 0) {
      const SectionRange own = sections_.buffer_range[b];
      if (own.begin > overfull_first || own.end <= overfull_last ||
          overfull_max - size_[b] > capacity_ - candidate.offset) {
        continue;
      }
    }
    const size_t offset_mark = min_offset_trail_.size();
    const size_t floor_mark = floor_trail_.size();
    if (Place(b, candidate.offset)) {
      outcome = Continue(part, b, candidate.offset, candidate.index);
    }
    Undo(b, offset_mark, floor_mark);
    if (outcome != Outcome::kNotFound) break;
  }
  candidates_.resize(base);
  return outcome;
}

ExactSearcher::Outcome ExactSearcher::Continue(const Partition& part, int b, Bytes offset, int index) {
  const SectionRange own = sections_.buffer_range[b];
  std::vector<int> cut_points;
  for (int k = own.begin; k + 1 < own.end; ++k) {
    if (--cuts_[k] == 0) cut_points.push_back(k + 1);
  }
  Outcome outcome = Outcome::kFound;
  if (cut_points.empty()) {
    outcome = Search(part, offset, index);
  } else {
    cut_points.insert(cut_points.begin(), part.range.begin);
    cut_points.push_back(part.range.end);
    for (size_t c = 0; c + 1 < cut_points.size() && outcome == Outcome::kFound; ++c) {
      Partition sub = {.range = {cut_points[c], cut_points[c + 1]}, .preorder = part.preorder};
      for (int other : part.order) {
        if (offset_[other] != kUnplaced) continue;
        const int start = sections_.buffer_range[other].begin;
        if (start >= sub.range.begin && start < sub.range.end) sub.order.push_back(other);
      }
      if (sub.order.empty()) continue;
      // An independent part is decided by its buffers and their floors alone:
      // a part seen before (after a restart, in another branch or for another
      // capacity) is not searched again when its known plan fits or it is
      // known not to fit.
      std::vector<int64_t> key = {sub.range.begin, sub.range.end};
      std::vector<int> members = sub.order;
      std::sort(members.begin(), members.end());
      for (int other : members) {
        key.push_back(other);
        key.push_back(min_offset_[other]);
      }
      CachedPart* known = nullptr;
      if (auto found = part_cache_.find(key); found != part_cache_.end()) known = &found->second;
      if (known != nullptr && capacity_ <= known->impossible_at) {
        outcome = Outcome::kNotFound;
        break;
      }
      if (known != nullptr && !known->offsets.empty() && known->top <= capacity_) {
        for (size_t m = 0; m < members.size(); ++m) solution_.offsets[members[m]] = known->offsets[m];
        continue;
      }
      // Re-rank by the load that is left in each section.
      for (int other : sub.order) {
        peak_[other] = 0;
        const SectionRange range = sections_.buffer_range[other];
        for (int s = range.begin; s < range.end; ++s) peak_[other] = std::max(peak_[other], total_[s]);
      }
      SortByPreorder(sub.preorder, sub.order);
      outcome = Search(sub, 0, -1);
      if (outcome != Outcome::kAborted) {
        if (part_cache_.size() >= kMaxCachedParts) part_cache_.clear();
        CachedPart& cached = part_cache_[std::move(key)];
        if (outcome == Outcome::kNotFound) {
          cached.impossible_at = std::max(cached.impossible_at, capacity_);
        } else {
          Bytes top = 0;
          for (int other : members) top = std::max(top, solution_.offsets[other] + size_[other]);
          if (cached.offsets.empty() || top < cached.top) {
            cached.top = top;
            cached.offsets.clear();
            for (int other : members) cached.offsets.push_back(solution_.offsets[other]);
          }
        }
      }
    }
  }
  for (int k = own.begin; k + 1 < own.end; ++k) ++cuts_[k];
  return outcome;
}

namespace {

Bytes Gcd(const Problem& problem) {
  Bytes g = 0;
  for (const Buffer& buffer : problem.buffers) {
    if (buffer.size == 0) continue;
    g = std::gcd(g, buffer.size);
    if (buffer.alignment > 1) g = std::gcd(g, buffer.alignment);
    if (buffer.pinned_offset.has_value()) g = std::gcd(g, *buffer.pinned_offset);
  }
  return std::max<Bytes>(g, 1);
}

Bytes RoundUp(Bytes value, Bytes step) { return (value + step - 1) / step * step; }

// The share of the budget spent on the lower bound before trying larger capacities.
// With a time limit, reaching the lower bound is what usually pays; a node
// budget (the bounded dive) is better spent mostly on lowering the arena.
constexpr double kLowerBoundShare = 0.2;
constexpr double kLowerBoundNodeShare = 0.25;

bool TooLarge(const Problem& problem) { return static_cast<int64_t>(problem.buffers.size()) > kMaxExactBuffers; }

// The search recurses once per buffer of a part (search_stack.h).
size_t SearchDepth(const Problem& problem) {
  return std::min<size_t>(problem.buffers.size(), kMaxExactPartitionBuffers);
}

// Lowers result.arena_bytes and raises result.proven_lower_bound: first the
// lower bound itself (most production traces reach it), for part of the
// budget; then capacities between the best plan and the proven bound.
void Improve(const Problem& problem, const ExactOptions& options, Bytes granularity, ExactResult& result) {
  ExactSearcher searcher(problem);
  if (!searcher.usable()) return;
  const absl::Time start = absl::Now();
  const absl::Duration total_time = options.deadline - start;
  const bool node_limited = options.max_nodes >= 0;
  int64_t nodes_left = options.max_nodes;
  bool tried_lower_bound = false;
  // Improvement tries aim `step` below the best arena: the step doubles after
  // a success and halves after a failure; at the smallest step, failures
  // double the next try's budget instead.
  // In the second half of a timed improvement phase, bold tries (step above
  // the granularity) get only the first slice: the plan is near its floor by
  // then and the time is better spent grinding at the smallest step. (Measured
  // on the MiniMalloc suite: bench/planner.bench.sh.)
  Bytes step = granularity;
  const absl::Duration first_slice = total_time == absl::InfiniteDuration() ? total_time : total_time / 50;
  const int64_t first_slice_nodes = 100 + 2 * static_cast<int64_t>(problem.buffers.size());
  absl::Duration slice = first_slice;
  int64_t slice_nodes = first_slice_nodes;
  const absl::Time late = total_time == absl::InfiniteDuration()
                              ? absl::InfiniteFuture()
                              : start + total_time * (kLowerBoundShare + (1 - kLowerBoundShare) / 2);
  while (result.arena_bytes > result.proven_lower_bound) {
    const absl::Time now = absl::Now();
    if (now >= options.deadline || (node_limited && nodes_left <= 0)) break;
    Bytes target;
    absl::Time attempt_deadline = options.deadline;
    int64_t attempt_nodes = nodes_left;
    if (!tried_lower_bound) {
      target = result.proven_lower_bound;
      if (total_time != absl::InfiniteDuration()) attempt_deadline = start + total_time * kLowerBoundShare;
      if (node_limited) attempt_nodes = static_cast<int64_t>(static_cast<double>(nodes_left) * kLowerBoundNodeShare);
      tried_lower_bound = true;
    } else {
      step = std::min(step, result.arena_bytes - result.proven_lower_bound);
      target = result.arena_bytes - step;
      const bool bold = step > granularity;
      if (total_time != absl::InfiniteDuration()) {
        attempt_deadline = std::min(options.deadline, now + (bold && now >= late ? first_slice : slice));
      }
      if (node_limited) attempt_nodes = std::min(nodes_left, slice_nodes);
    }
    searcher.SetGuide(result.solution);
    const DecisionResult decision = searcher.Decide(target, attempt_deadline, attempt_nodes);
    result.nodes += decision.nodes;
    if (node_limited) nodes_left -= std::max<int64_t>(decision.nodes, 1);
    if (decision.feasibility == Feasibility::kFits) {
      const Bytes arena = ArenaSize(problem, decision.solution);
      if (arena < result.arena_bytes) {
        result.solution = decision.solution;
        result.arena_bytes = arena;
        result.improved = true;
      }
      if (target != result.proven_lower_bound) step *= 2;
    } else if (decision.feasibility == Feasibility::kImpossible) {
      result.proven_lower_bound = std::max(result.proven_lower_bound, target + granularity);
      step = granularity;
    } else if (target != result.proven_lower_bound || step == granularity) {
      if (step > granularity) {
        step = std::max(granularity, step / 2 / granularity * granularity);
      } else {
        slice = slice * 2;
        slice_nodes *= 2;
      }
    }
  }
}


}  // namespace

DecisionResult FitWithinCapacity(const Problem& problem, Bytes capacity, const ExactOptions& options) {
  DecisionResult result;
  if (TooLarge(problem)) return result;
  RunWithSearchStack(SearchDepth(problem), [&]() {
    ExactSearcher searcher(problem);
    if (searcher.usable()) result = searcher.Decide(capacity, options.deadline, options.max_nodes);
  });
  return result;
}

ExactResult MinimizeArena(const Problem& problem, const Solution& incumbent, const ExactOptions& options) {
  ExactResult result;
  result.solution = incumbent;
  result.arena_bytes = ArenaSize(problem, incumbent);
  const Bytes granularity = Gcd(problem);
  Bytes pinned_end = 0;
  for (const Buffer& buffer : problem.buffers) {
    if (buffer.pinned_offset.has_value() && buffer.size > 0) {
      pinned_end = std::max(pinned_end, *buffer.pinned_offset + buffer.size);
    }
  }
  // Every canonical plan's arena is a multiple of the granularity.
  result.proven_lower_bound = RoundUp(std::max(LowerBound(problem), pinned_end), granularity);
  auto finish = [&]() {
    result.proven_lower_bound = std::min(result.proven_lower_bound, result.arena_bytes);
    result.proven_optimal = result.arena_bytes <= result.proven_lower_bound;
    return result;
  };
  if (result.arena_bytes <= result.proven_lower_bound || TooLarge(problem)) return finish();
  // Without a thread for the search, the incumbent stands.
  RunWithSearchStack(SearchDepth(problem), [&]() { Improve(problem, options, granularity, result); });
  return finish();
}

}  // namespace footprint::planner
