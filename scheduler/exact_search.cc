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

template <int W>
ExactSearchResult Search(const StepModel& model, const ExactSearchLimits& limits) {
  using Set = NodeSet<W>;
  const int num_nodes = model.num_nodes;
  ExactSearchResult result;

  // Floating groups run only right before a node that reads their root:
  // candidates are the other nodes, each with the groups it still needs.
  std::vector<Set> predecessor_set(num_nodes);  // Leaving floating nodes out.
  std::vector<std::vector<int>> glued_roots(num_nodes);
  for (int n = 0; n < num_nodes; ++n) {
    for (int p : model.predecessors[n]) {
      if (model.floating_root[p] == -1) {
        predecessor_set[n].Add(p);
      } else if (model.floating_root[n] == -1) {
        glued_roots[n].push_back(p);  // Readers of roots are never floating.
      }
    }
  }
  // The nodes a candidate runs from `done`: its groups not yet run, then it.
  auto macro = [&](const Set& done, int node, std::vector<int>& run) {
    run.clear();
    for (int root : glued_roots[node]) {
      if (!done.Has(root)) run.insert(run.end(), model.floating_members[root].begin(),
                                      model.floating_members[root].end());
    }
    run.push_back(node);
  };
  std::vector<Set> reader_set(model.readers.size());
  for (int v = 0; v < model.readers.size(); ++v) {
    for (int r : model.readers[v]) reader_set[v].Add(r);
  }
  // h(E): the largest local_bytes among the nodes not in E.
  std::vector<int> by_local(num_nodes);
  for (int n = 0; n < num_nodes; ++n) by_local[n] = n;
  std::sort(by_local.begin(), by_local.end(),
            [&](int a, int b) { return model.local_bytes[a] > model.local_bytes[b]; });
  auto remaining_bound = [&](const Set& done) -> int64_t {
    for (int n : by_local) {
      if (!done.Has(n)) return model.local_bytes[n];
    }
    return 0;
  };


  std::vector<Record<W>> records;
  absl::flat_hash_set<int, SetHash<W>, SetEq<W>> record_of(0, SetHash<W>{&records},
                                                           SetEq<W>{&records});
  using Entry = std::tuple<int64_t, int, int>;  // key, -depth, record.
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;

  const Set empty;
  const int64_t start_key = std::max(remaining_bound(empty), limits.good_enough);
  if (start_key >= limits.upper_bound) {
    result.outcome = ExactOutcome::kNoneBelow;
    return result;
  }
  records.push_back({empty, model.initial_live, 0, start_key, -1, -1, 0, false});
  record_of.insert(0);
  queue.emplace(start_key, 0, 0);

  struct Candidate {
    int node;            // The node run last (with the floating groups it needs before it).
    int64_t step_bytes;  // The highest of those steps.
    int64_t live_after;  // Live bytes after them.
    Set done;            // The executed set after them.
    int count;           // How many nodes they are.
  };
  std::vector<Candidate> candidates;
  std::vector<int> run;
  int64_t pops = 0;
  while (!queue.empty()) {
    const auto [key, negative_depth, index] = queue.top();
    queue.pop();
    if ((++pops & 255) == 0 && absl::Now() > limits.deadline) {
      result.outcome = ExactOutcome::kStopped;
      result.states = static_cast<int64_t>(records.size());
      return result;
    }
    if (records[index].closed || records[index].key != key) continue;
    records[index].closed = true;
    const Record<W> current = records[index];
    if (current.depth == num_nodes) {
      result.outcome = ExactOutcome::kFound;
      result.peak = current.peak;
      result.order.resize(num_nodes);
      std::vector<int> run;
      for (int r = index; records[r].parent != -1; r = records[r].parent) {
        const Record<W>& parent = records[records[r].parent];
        macro(parent.done, records[r].node, run);
        std::copy(run.begin(), run.end(), result.order.begin() + parent.depth);
      }
      result.states = static_cast<int64_t>(records.size());
      return result;
    }

    candidates.clear();
    for (int n = 0; n < num_nodes; ++n) {
      if (current.done.Has(n) || model.floating_root[n] != -1 ||
          !current.done.Includes(predecessor_set[n])) {
        continue;
      }
      macro(current.done, n, run);
      Candidate candidate = {n, 0, current.live, current.done, static_cast<int>(run.size())};
      for (int m : run) {
        int64_t freed = 0;
        for (int v : model.inputs[m]) {
          if (model.value_is_graph_output[v]) continue;
          Set others = reader_set[v];
          others.Remove(m);
          if (candidate.done.Includes(others)) freed += model.value_bytes[v];
        }
        const int64_t first_step = candidate.done == empty ? model.first_step_bytes : 0;
        candidate.step_bytes =
            std::max(candidate.step_bytes, candidate.live_after + model.run_bytes[m] + first_step);
        candidate.live_after += model.kept_bytes[m] - freed;
        candidate.done.Add(m);
      }
      if (candidate.step_bytes <= current.key && candidate.live_after <= current.live) {
        candidates.assign(1, candidate);  // A free move: no alternative needed.
        break;
      }
      candidates.push_back(candidate);
    }

    for (const Candidate& candidate : candidates) {
      const Set& next = candidate.done;
      const int64_t peak = std::max(current.peak, candidate.step_bytes);
      const int64_t next_key =
          std::max({peak, remaining_bound(next), limits.good_enough});
      if (next_key >= limits.upper_bound) continue;
      const auto found = record_of.find(next);
      if (found != record_of.end()) {
        Record<W>& known = records[*found];
        if (known.closed || known.key <= next_key) continue;
        known.peak = peak;
        known.key = next_key;
        known.parent = index;
        known.node = candidate.node;
        queue.emplace(next_key, -known.depth, *found);
        continue;
      }
      if (static_cast<int64_t>(records.size()) >= limits.max_states) {
        result.outcome = ExactOutcome::kStopped;
        result.states = static_cast<int64_t>(records.size());
        return result;
      }
      const int next_index = static_cast<int>(records.size());
      records.push_back({next, candidate.live_after, peak, next_key, index, candidate.node,
                         current.depth + candidate.count, false});
      record_of.insert(next_index);
      queue.emplace(next_key, -(current.depth + candidate.count), next_index);
    }
  }
  result.outcome = ExactOutcome::kNoneBelow;
  result.states = static_cast<int64_t>(records.size());
  return result;
}

}  // namespace

ExactSearchResult ExactSearch(const StepModel& model, const ExactSearchLimits& limits) {
  if (model.num_nodes <= 64) return Search<1>(model, limits);
  if (model.num_nodes <= 128) return Search<2>(model, limits);
  return Search<4>(model, limits);
}

}  // namespace footprint::scheduler
