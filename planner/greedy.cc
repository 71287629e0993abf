#include "planner/greedy.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/time/clock.h"
#include "planner/sections.h"

namespace footprint::planner {
namespace {

// The placed buffers, indexed by lifespan: a segment tree over the distinct
// steps. A buffer is stored at the O(log T) nodes that tile its lifespan
// ("cover") and at their ancestors ("inside"), so a query reports exactly the
// buffers whose lifespans intersect the query interval (with repeats, which the
// caller filters).
class IntervalIndex {
 public:
  explicit IntervalIndex(const Problem& problem) {
    for (const Buffer& buffer : problem.buffers) {
      steps_.push_back(buffer.lifespan.first);
      steps_.push_back(buffer.lifespan.last);
    }
    std::sort(steps_.begin(), steps_.end());
    steps_.erase(std::unique(steps_.begin(), steps_.end()), steps_.end());
    leaves_ = std::max<int>(1, static_cast<int>(steps_.size()));
    cover_.resize(4 * leaves_);
    inside_.resize(4 * leaves_);
  }

  void Insert(int buffer, const Lifespan& lifespan) { Insert(1, 0, leaves_ - 1, Leaf(lifespan.first), Leaf(lifespan.last), buffer); }

  template <typename Visit>
  void Query(const Lifespan& lifespan, Visit visit) const {
    Query(1, 0, leaves_ - 1, Leaf(lifespan.first), Leaf(lifespan.last), visit);
  }

 private:
  int Leaf(Step step) const {
    return static_cast<int>(std::lower_bound(steps_.begin(), steps_.end(), step) - steps_.begin());
  }

  void Insert(int node, int lo, int hi, int a, int b, int buffer) {
    if (b < lo || hi < a) return;
    if (a <= lo && hi <= b) {
      cover_[node].push_back(buffer);
      return;
    }
    inside_[node].push_back(buffer);
    const int mid = (lo + hi) / 2;
    Insert(2 * node, lo, mid, a, b, buffer);
    Insert(2 * node + 1, mid + 1, hi, a, b, buffer);
  }

  template <typename Visit>
  void Query(int node, int lo, int hi, int a, int b, Visit& visit) const {
    if (b < lo || hi < a) return;
    for (int buffer : cover_[node]) visit(buffer);
    if (a <= lo && hi <= b) {
      for (int buffer : inside_[node]) visit(buffer);
      return;
    }
    const int mid = (lo + hi) / 2;
    Query(2 * node, lo, mid, a, b, visit);
    Query(2 * node + 1, mid + 1, hi, a, b, visit);
  }

  std::vector<Step> steps_;
  int leaves_ = 1;
  std::vector<std::vector<int>> cover_;
  std::vector<std::vector<int>> inside_;
};

// Beyond this many buffers the portfolio runs only its first two combinations.
constexpr size_t kLargeProblemBuffers = 10000;

// Beyond this many intersecting pairs, skyline finds conflicts through the
// interval index instead of per-buffer lists (less memory, more time).
constexpr int64_t kMaxSkylinePairs = 2000000;

Step Length(const Buffer& buffer) { return buffer.lifespan.last - buffer.lifespan.first + 1; }

// Indices sorted by `key` descending, then size descending, then index.
template <typename Key>
std::vector<int> OrderByKeyDescending(const Problem& problem, Key key) {
  std::vector<int> order(problem.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return problem.buffers[a].size > problem.buffers[b].size;
  });
  return order;
}

}  // namespace

std::vector<int> OrderBySizeDescending(const Problem& problem) {
  std::vector<int> order(problem.buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Buffer& x = problem.buffers[a];
    const Buffer& y = problem.buffers[b];
    if (x.size != y.size) return x.size > y.size;
    return Length(x) > Length(y);
  });
  return order;
}

std::vector<int> OrderByLifespanDescending(const Problem& problem) {
  return OrderByKeyDescending(problem, [&](int i) { return Length(problem.buffers[i]); });
}

std::vector<int> OrderByAreaDescending(const Problem& problem) {
  // Long double: size x length can exceed 64 bits only in absurd inputs, but never overflow.
  return OrderByKeyDescending(problem, [&](int i) {
    return static_cast<long double>(problem.buffers[i].size) * static_cast<long double>(Length(problem.buffers[i]));
  });
}

std::vector<int> OrderByPeakLoadDescending(const Problem& problem) {
  const Sections sections = ComputeSections(problem);
  std::vector<Bytes> peak(problem.buffers.size(), 0);
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const SectionRange range = sections.buffer_range[i];
    for (int s = range.begin; s < range.end; ++s) peak[i] = std::max(peak[i], sections.live_bytes[s]);
  }
  return OrderByKeyDescending(problem, [&](int i) { return peak[i]; });
}

std::vector<int> OrderByStart(const Problem& problem) {
  return OrderByKeyDescending(problem, [&](int i) { return -problem.buffers[i].lifespan.first; });
}

Solution PlaceBestFit(const Problem& problem, const std::vector<int>& order) {
  const std::vector<Buffer>& buffers = problem.buffers;
  Solution solution;
  solution.offsets.assign(buffers.size(), 0);
  IntervalIndex index(problem);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].pinned_offset.has_value()) {
      solution.offsets[i] = *buffers[i].pinned_offset;
      if (buffers[i].size > 0) index.Insert(static_cast<int>(i), buffers[i].lifespan);
    }
  }
  std::vector<int> seen(buffers.size(), -1);
  std::vector<std::pair<Bytes, Bytes>> occupied;  // [begin, end) of conflicting placed buffers.
  for (int current : order) {
    const Buffer& buffer = buffers[current];
    if (buffer.pinned_offset.has_value()) continue;
    if (buffer.size == 0) {
      solution.offsets[current] = 0;
      continue;
    }
    occupied.clear();
    index.Query(buffer.lifespan, [&](int other) {
      if (seen[other] == current) return;
      seen[other] = current;
      occupied.emplace_back(solution.offsets[other], solution.offsets[other] + buffers[other].size);
    });
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
    solution.offsets[current] = best_offset >= 0 ? best_offset : AlignUp(cursor, buffer.alignment);
    index.Insert(current, buffer.lifespan);
  }
  return solution;
}

namespace {

// Lowest aligned offset >= `from` where `size` bytes miss every range of
// `occupied` (sorted by begin; ranges may overlap one another). The scan starts
// at `*cursor`: every range before it ends at or below `from`. On return the
// cursor has moved past the ranges that end at or below the result.
Bytes LowestFit(const std::vector<std::pair<Bytes, Bytes>>& occupied, Bytes from, Bytes size, Bytes alignment,
                size_t* cursor) {
  Bytes offset = AlignUp(from, alignment);
  bool prefix = true;  // Every range so far ends at or below the offset.
  for (size_t k = *cursor; k < occupied.size(); ++k) {
    const auto& [begin, end] = occupied[k];
    if (end <= offset) {
      if (prefix) *cursor = k + 1;
      continue;
    }
    prefix = false;
    if (begin >= offset + size) break;
    offset = AlignUp(end, alignment);
  }
  return offset;
}

Bytes LowestFit(const std::vector<std::pair<Bytes, Bytes>>& occupied, Bytes from, Bytes size, Bytes alignment) {
  size_t cursor = 0;
  return LowestFit(occupied, from, size, alignment, &cursor);
}

// Skyline with each buffer's placed conflicts kept sorted, for problems whose
// intersecting pairs fit in memory: a placement only touches the buffers it meets.
Solution PlaceSkylineWithOverlaps(const Problem& problem, const std::vector<int>& priority,
                                  const std::vector<std::vector<int>>& overlaps) {
  const std::vector<Buffer>& buffers = problem.buffers;
  const int n = static_cast<int>(buffers.size());
  Solution solution;
  solution.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (int r = 0; r < n; ++r) rank[priority[r]] = r;
  std::vector<bool> placed(n, false);
  std::vector<std::vector<std::pair<Bytes, Bytes>>> occupied(n);
  std::vector<Bytes> fit(n, 0);
  std::vector<size_t> cursor(n, 0);  // See LowestFit: ranges before it end at or below fit.
  auto record = [&](int i) {  // Buffer i is placed: its neighbours learn of it.
    placed[i] = true;
    const std::pair<Bytes, Bytes> range = {solution.offsets[i], solution.offsets[i] + buffers[i].size};
    for (int d : overlaps[i]) {
      if (placed[d]) continue;
      auto& list = occupied[d];
      // Placements mostly come in offset order: appending is the common case.
      if (list.empty() || list.back() <= range) {
        list.push_back(range);
        continue;
      }
      const size_t at = std::upper_bound(list.begin(), list.end(), range) - list.begin();
      list.insert(list.begin() + at, range);
      if (at < cursor[d]) cursor[d] = range.second <= fit[d] ? cursor[d] + 1 : at;
    }
  };
  for (int i = 0; i < n; ++i) {
    if (buffers[i].pinned_offset.has_value()) {
      solution.offsets[i] = *buffers[i].pinned_offset;
      if (buffers[i].size > 0) record(i);
      placed[i] = true;
    } else if (buffers[i].size == 0) {
      placed[i] = true;
    }
  }
  using Entry = std::tuple<Bytes, int, int>;  // (fit, rank, buffer)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (int i = 0; i < n; ++i) {
    if (placed[i]) continue;
    fit[i] = LowestFit(occupied[i], 0, buffers[i].size, buffers[i].alignment, &cursor[i]);
    queue.emplace(fit[i], rank[i], i);
  }
  while (!queue.empty()) {
    const auto [key, r, i] = queue.top();
    queue.pop();
    if (placed[i] || key != fit[i]) continue;  // Placed, or an outdated entry.
    solution.offsets[i] = key;
    record(i);
    const Bytes top = key + buffers[i].size;
    for (int d : overlaps[i]) {
      if (placed[d] || top <= fit[d] || key >= fit[d] + buffers[d].size) continue;
      fit[d] = LowestFit(occupied[d], top, buffers[d].size, buffers[d].alignment, &cursor[d]);
      queue.emplace(fit[d], rank[d], d);
    }
  }
  return solution;
}

}  // namespace

Solution PlaceSkyline(const Problem& problem, const std::vector<int>& priority) {
  const Sections sections = ComputeSections(problem);
  if (std::optional<std::vector<std::vector<int>>> overlaps = ComputeOverlaps(problem, sections, kMaxSkylinePairs);
      overlaps.has_value()) {
    return PlaceSkylineWithOverlaps(problem, priority, *overlaps);
  }
  const std::vector<Buffer>& buffers = problem.buffers;
  const int n = static_cast<int>(buffers.size());
  Solution solution;
  solution.offsets.assign(n, 0);
  std::vector<int> rank(n);
  for (int r = 0; r < n; ++r) rank[priority[r]] = r;
  // Placed buffers (pinned ones first) in an interval index; a buffer's floor is
  // recomputed from it when the buffer reaches the top of the queue, and the
  // buffer goes back in if its floor rose meanwhile.
  IntervalIndex index(problem);
  std::vector<bool> placed(n, false);
  for (int i = 0; i < n; ++i) {
    if (buffers[i].pinned_offset.has_value()) {
      solution.offsets[i] = *buffers[i].pinned_offset;
      placed[i] = true;
      if (buffers[i].size > 0) index.Insert(i, buffers[i].lifespan);
    } else if (buffers[i].size == 0) {
      placed[i] = true;
    }
  }
  std::vector<int64_t> seen(n, -1);  // Dedup of one query's repeats: the query's number.
  int64_t query = 0;
  std::vector<std::pair<Bytes, Bytes>> occupied;
  // Lowest aligned offset >= `from` where buffer i fits among placed conflicts.
  auto lowest_fit = [&](int i, Bytes from) {
    const Buffer& buffer = buffers[i];
    occupied.clear();
    ++query;
    index.Query(buffer.lifespan, [&](int other) {
      if (seen[other] == query) return;
      seen[other] = query;
      occupied.emplace_back(solution.offsets[other], solution.offsets[other] + buffers[other].size);
    });
    std::sort(occupied.begin(), occupied.end());
    return LowestFit(occupied, from, buffer.size, buffer.alignment);
  };
  // The floor only rises as buffers get placed, so a stale (lower) key is
  // detected by recomputing it at the top of the queue.
  using Entry = std::tuple<Bytes, int, int>;  // (floor, rank, buffer)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (int i = 0; i < n; ++i) {
    if (!placed[i]) queue.emplace(0, rank[i], i);
  }
  while (!queue.empty()) {
    const auto [key, r, i] = queue.top();
    queue.pop();
    if (placed[i]) continue;
    const Bytes fit = lowest_fit(i, key);
    if (fit > key) {
      queue.emplace(fit, r, i);
      continue;
    }
    solution.offsets[i] = fit;
    placed[i] = true;
    index.Insert(i, buffers[i].lifespan);
  }
  return solution;
}

Solution GreedyBySize(const Problem& problem) {
  return PlaceBestFit(problem, OrderBySizeDescending(problem));
}

HeuristicPlan RunHeuristicPortfolio(const Problem& problem, Bytes lower_bound, absl::Time deadline) {
  using Order = std::vector<int> (*)(const Problem&);
  struct Entry {
    const char* placement;  // "skyline" or "best_fit".
    const char* name;       // The ordering's name.
    Order order;
  };
  // Skyline wins most often on the benchmark suites; best fit by size is the
  // classic baseline. Large problems run only the first two.
  const std::vector<Entry> all = {
      {"skyline", "lifespan", OrderByLifespanDescending}, {"best_fit", "size", OrderBySizeDescending},
      {"skyline", "start", OrderByStart},                 {"skyline", "area", OrderByAreaDescending},
      {"skyline", "size", OrderBySizeDescending},         {"best_fit", "start", OrderByStart},
      {"best_fit", "lifespan", OrderByLifespanDescending}, {"best_fit", "area", OrderByAreaDescending},
  };
  const size_t count = problem.buffers.size() > kLargeProblemBuffers ? 2 : all.size();
  HeuristicPlan best;
  for (size_t k = 0; k < count; ++k) {
    const Entry& entry = all[k];
    const std::vector<int> order = entry.order(problem);
    Solution solution = entry.placement[0] == 's' ? PlaceSkyline(problem, order) : PlaceBestFit(problem, order);
    const Bytes arena = ArenaSize(problem, solution);
    if (k == 0 || arena < best.arena_bytes) {
      best = {.solution = std::move(solution),
              .arena_bytes = arena,
              .algorithm = std::string(entry.placement) + "/" + entry.name};
    }
    if (best.arena_bytes <= lower_bound || absl::Now() >= deadline) break;
  }
  return best;
}

}  // namespace footprint::planner
