#include "scheduler/exact_search.h"

#include <algorithm>
#include <array>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/time/clock.h"

namespace footprint::scheduler {
namespace {

// A set of node indices as W 64-bit words.
template <int W>
struct NodeSet {
  std::array<uint64_t, W> words{};

  bool Has(int n) const { return (words[n >> 6] >> (n & 63)) & 1; }
  void Add(int n) { words[n >> 6] |= uint64_t{1} << (n & 63); }
  void Remove(int n) { words[n >> 6] &= ~(uint64_t{1} << (n & 63)); }
  bool Includes(const NodeSet& other) const {
    for (int i = 0; i < W; ++i) {
      if (other.words[i] & ~words[i]) return false;
    }
    return true;
  }
  bool operator==(const NodeSet&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const NodeSet& set) {
    return H::combine_contiguous(std::move(h), set.words.data(), W);
  }
};

// One per executed set reached.
template <int W>
struct Record {
  NodeSet<W> done;  // Nodes already run.
  int64_t live;     // Live bytes before the next step.
  int64_t peak;     // Peak of the best order found to reach `done`.
  int64_t key;      // max(peak, bound on the nodes left, good_enough).
  int parent;       // Record this one was reached from (-1 for the start).
  int node;         // Node run last to get here.
  int depth;        // Nodes in `done`.
  bool closed;      // Expanded: its key is final.
};

// Hashing and comparing record indices by their sets, so that the index of
// records can be looked up by set while storing each set only once.
template <int W>
struct SetHash {
  using Set = NodeSet<W>;
  using is_transparent = void;
  const std::vector<Record<W>>* records;
  size_t operator()(int index) const { return absl::Hash<Set>()((*records)[index].done); }
  size_t operator()(const Set& set) const { return absl::Hash<Set>()(set); }
};
template <int W>
struct SetEq {
  using Set = NodeSet<W>;
  using is_transparent = void;
  const std::vector<Record<W>>* records;
  const Set& Of(int index) const { return (*records)[index].done; }
  const Set& Of(const Set& set) const { return set; }
  bool operator()(int a, int b) const { return Of(a) == Of(b); }
  bool operator()(int a, const Set& b) const { return Of(a) == b; }
  bool operator()(const Set& a, int b) const { return a == Of(b); }
  bool operator()(const Set& a, const Set& b) const { return a == b; }
};

// Best-first search over executed sets (A*): a record per set reached, keyed
// by max(its peak, a bound on the nodes left); the first complete set popped
// has the least peak.
template <int W>
class BestFirstSearch {
 public:
  BestFirstSearch(const StepModel& model, const ExactSearchLimits& limits);
  BestFirstSearch(const BestFirstSearch&) = delete;  // record_of_ points into records_.
  BestFirstSearch& operator=(const BestFirstSearch&) = delete;

  ExactSearchResult Run();

 private:
  using Set = NodeSet<W>;
  using Entry = std::tuple<int64_t, int, int>;  // key, -depth, record.
  struct Candidate {
    int node;            // The node run last (with the floating groups it needs before it).
    int64_t step_bytes;  // The highest of those steps.
    int64_t live_after;  // Live bytes after them.
    Set done;            // The executed set after them.
    int count;           // How many nodes they are.
  };

  // The nodes a candidate runs from `done`: its groups not yet run, then it.
  void Macro(const Set& done, int node, std::vector<int>& run) const;
  // h(E): the largest local_bytes among the nodes not in E.
  int64_t RemainingBound(const Set& done) const;
  // `node` (with the groups it needs) run from `current`.
  Candidate Step(const Record<W>& current, int node);
  // The moves from `current` into candidates_: all of them, or the first free one.
  void Expand(const Record<W>& current);
  // Records `candidate` reached from record `index`, or improves its record;
  // false when the state limit is reached.
  bool Push(const Record<W>& current, int index, const Candidate& candidate);
  // The order that reaches the complete set of record `index`.
  ExactSearchResult Found(int index) const;
  ExactSearchResult Ended(ExactOutcome outcome) const;

  const StepModel& model_;
  const ExactSearchLimits& limits_;
  const int num_nodes_;
  std::vector<Set> predecessor_set_;          // Leaving floating nodes out.
  std::vector<std::vector<int>> glued_roots_;  // The floating groups each node needs run right before it.
  std::vector<Set> reader_set_;               // Per value.
  std::vector<int> by_local_;                 // Nodes by local_bytes, largest first.
  std::vector<Record<W>> records_;
  absl::flat_hash_set<int, SetHash<W>, SetEq<W>> record_of_;  // Record indices by their sets.
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue_;
  std::vector<Candidate> candidates_;  // Scratch of Expand.
  std::vector<int> run_;               // Scratch of Step.
};

template <int W>
BestFirstSearch<W>::BestFirstSearch(const StepModel& model, const ExactSearchLimits& limits)
    : model_(model),
      limits_(limits),
      num_nodes_(model.num_nodes),
      predecessor_set_(model.num_nodes),
      glued_roots_(model.num_nodes),
      reader_set_(model.readers.size()),
      record_of_(0, SetHash<W>{&records_}, SetEq<W>{&records_}) {
  // Floating groups run only right before a node that reads their root:
  // candidates are the other nodes, each with the groups it still needs.
  for (int n = 0; n < num_nodes_; ++n) {
    for (int p : model.predecessors[n]) {
      if (model.floating_root[p] == -1) {
        predecessor_set_[n].Add(p);
      } else if (model.floating_root[n] == -1) {
        glued_roots_[n].push_back(p);  // Readers of roots are never floating.
      }
    }
  }
  for (int v = 0; v < model.readers.size(); ++v) {
    for (int r : model.readers[v]) reader_set_[v].Add(r);
  }
  by_local_.resize(num_nodes_);
  for (int n = 0; n < num_nodes_; ++n) by_local_[n] = n;
  std::sort(by_local_.begin(), by_local_.end(),
            [&](int a, int b) { return model.local_bytes[a] > model.local_bytes[b]; });
}

template <int W>
void BestFirstSearch<W>::Macro(const Set& done, int node, std::vector<int>& run) const {
  run.clear();
  for (int root : glued_roots_[node]) {
    if (!done.Has(root)) run.insert(run.end(), model_.floating_members[root].begin(),
                                    model_.floating_members[root].end());
  }
  run.push_back(node);
}

template <int W>
int64_t BestFirstSearch<W>::RemainingBound(const Set& done) const {
  for (int n : by_local_) {
    if (!done.Has(n)) return model_.local_bytes[n];
  }
  return 0;
}

template <int W>
typename BestFirstSearch<W>::Candidate BestFirstSearch<W>::Step(const Record<W>& current, int node) {
  Macro(current.done, node, run_);
  Candidate candidate = {node, 0, current.live, current.done, static_cast<int>(run_.size())};
  for (int m : run_) {
    int64_t freed = 0;
    for (int v : model_.inputs[m]) {
      if (model_.value_is_graph_output[v]) continue;
      Set others = reader_set_[v];
      others.Remove(m);
      if (candidate.done.Includes(others)) freed += model_.value_bytes[v];
    }
    const int64_t first_step = candidate.done == Set() ? model_.first_step_bytes : 0;
    candidate.step_bytes = std::max(candidate.step_bytes, candidate.live_after + model_.run_bytes[m] + first_step);
    candidate.live_after += model_.kept_bytes[m] - freed;
    candidate.done.Add(m);
  }
  return candidate;
}

template <int W>
void BestFirstSearch<W>::Expand(const Record<W>& current) {
  candidates_.clear();
  for (int n = 0; n < num_nodes_; ++n) {
    if (current.done.Has(n) || model_.floating_root[n] != -1 || !current.done.Includes(predecessor_set_[n])) {
      continue;
    }
    Candidate candidate = Step(current, n);
    if (candidate.step_bytes <= current.key && candidate.live_after <= current.live) {
      candidates_.assign(1, candidate);  // A free move: no alternative needed.
      return;
    }
    candidates_.push_back(candidate);
  }
}

template <int W>
bool BestFirstSearch<W>::Push(const Record<W>& current, int index, const Candidate& candidate) {
  const Set& next = candidate.done;
  const int64_t peak = std::max(current.peak, candidate.step_bytes);
  const int64_t next_key = std::max({peak, RemainingBound(next), limits_.good_enough});
  if (next_key >= limits_.upper_bound) return true;
  const auto found = record_of_.find(next);
  if (found != record_of_.end()) {
    Record<W>& known = records_[*found];
    if (known.closed || known.key <= next_key) return true;
    known.peak = peak;
    known.key = next_key;
    known.parent = index;
    known.node = candidate.node;
    queue_.emplace(next_key, -known.depth, *found);
    return true;
  }
  if (static_cast<int64_t>(records_.size()) >= limits_.max_states) return false;
  const int next_index = static_cast<int>(records_.size());
  records_.push_back({next, candidate.live_after, peak, next_key, index, candidate.node,
                      current.depth + candidate.count, false});
  record_of_.insert(next_index);
  queue_.emplace(next_key, -(current.depth + candidate.count), next_index);
  return true;
}

template <int W>
ExactSearchResult BestFirstSearch<W>::Found(int index) const {
  ExactSearchResult result = Ended(ExactOutcome::kFound);
  result.peak = records_[index].peak;
  result.order.resize(num_nodes_);
  std::vector<int> run;
  for (int r = index; records_[r].parent != -1; r = records_[r].parent) {
    const Record<W>& parent = records_[records_[r].parent];
    Macro(parent.done, records_[r].node, run);
    std::copy(run.begin(), run.end(), result.order.begin() + parent.depth);
  }
  return result;
}

template <int W>
ExactSearchResult BestFirstSearch<W>::Ended(ExactOutcome outcome) const {
  ExactSearchResult result;
  result.outcome = outcome;
  result.states = static_cast<int64_t>(records_.size());
  return result;
}

template <int W>
ExactSearchResult BestFirstSearch<W>::Run() {
  const Set empty;
  const int64_t start_key = std::max(RemainingBound(empty), limits_.good_enough);
  if (start_key >= limits_.upper_bound) {
    ExactSearchResult result;
    result.outcome = ExactOutcome::kNoneBelow;
    return result;
  }
  records_.push_back({empty, model_.initial_live, 0, start_key, -1, -1, 0, false});
  record_of_.insert(0);
  queue_.emplace(start_key, 0, 0);
  int64_t pops = 0;
  while (!queue_.empty()) {
    const auto [key, negative_depth, index] = queue_.top();
    queue_.pop();
    if ((++pops & 255) == 0 && absl::Now() > limits_.deadline) return Ended(ExactOutcome::kStopped);
    if (records_[index].closed || records_[index].key != key) continue;
    records_[index].closed = true;
    const Record<W> current = records_[index];
    if (current.depth == num_nodes_) return Found(index);
    Expand(current);
    for (const Candidate& candidate : candidates_) {
      if (!Push(current, index, candidate)) return Ended(ExactOutcome::kStopped);
    }
  }
  return Ended(ExactOutcome::kNoneBelow);
}

}  // namespace

ExactSearchResult ExactSearch(const StepModel& model, const ExactSearchLimits& limits) {
  if (model.num_nodes <= 64) return BestFirstSearch<1>(model, limits).Run();
  if (model.num_nodes <= 128) return BestFirstSearch<2>(model, limits).Run();
  return BestFirstSearch<4>(model, limits).Run();
}

}  // namespace footprint::scheduler
