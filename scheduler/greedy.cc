#include "scheduler/greedy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <queue>
#include <tuple>

namespace footprint::scheduler {
namespace {

// kLeastGrowth's and kDepthFirst's key: three criteria, then the node index
// (unique, so that the minimum names its node).
using Key = std::array<int64_t, 4>;

// Written out: std::array's operators call memcmp, which costs more than the
// four comparisons.
bool Less(const Key& a, const Key& b) {
  if (a[0] != b[0]) return a[0] < b[0];
  if (a[1] != b[1]) return a[1] < b[1];
  if (a[2] != b[2]) return a[2] < b[2];
  return a[3] < b[3];
}

// kPeakAware's key: least growth, then rank, then node index (the last two
// in one number, rank * 2^32 + node, which orders them the same way).
struct TreeKey {
  int64_t growth;
  int64_t rank_and_node;
};
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
constexpr TreeKey kInactive = {kNone, kNone};
int64_t RankAndNode(int rank, int node) { return int64_t{rank} * (int64_t{1} << 32) + node; }
int NodeOf(const TreeKey& key) {
  return static_cast<int>(key.rank_and_node - (key.rank_and_node >> 32) * (int64_t{1} << 32));
}
bool IsInactive(const TreeKey& key) { return key.rank_and_node == kNone; }
bool Less(const TreeKey& a, const TreeKey& b) {
  return a.growth != b.growth ? a.growth < b.growth : a.rank_and_node < b.rank_and_node;
}
bool Same(const TreeKey& a, const TreeKey& b) {
  return a.rank_and_node == b.rank_and_node && a.growth == b.growth;
}
const TreeKey& Least(const TreeKey& a, const TreeKey& b) { return Less(b, a) ? b : a; }

// Minimum of keys over ranges of slots, with point updates: O(log n) each, so
// that a step costs O(log n) however many nodes are ready.
class MinTree {
 public:
  // Every slot inactive, reusing the memory.
  void Reset(int size) {
    size_ = static_cast<int>(std::bit_ceil(static_cast<unsigned>(std::max(size, 1))));
    tree_.assign(2 * size_, kInactive);
  }
  void Set(int slot, const TreeKey& key) {
    int i = slot + size_;
    tree_[i] = key;
    for (i /= 2; i >= 1; i /= 2) {
      const TreeKey& least = Least(tree_[2 * i], tree_[2 * i + 1]);
      if (Same(least, tree_[i])) break;  // Unchanged here, so unchanged above.
      tree_[i] = least;
    }
  }
  // Min over slots [first, end).
  TreeKey Min(int first, int end) const {
    TreeKey best = kInactive;
    for (int lo = first + size_, hi = end + size_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) best = Least(best, tree_[lo++]);
      if (hi & 1) best = Least(best, tree_[--hi]);
    }
    return best;
  }
  // The first slot at or after `from` with an active key, or -1.
  int FirstActive(int from) const {
    if (from >= size_) return -1;
    int i = from + size_;
    while (IsInactive(tree_[i])) {
      while (i & 1) i /= 2;  // Up past right children: their right is the parent's right.
      if (i == 0) return -1;  // Came up from the root: nothing further right.
      ++i;                    // The next subtree to the right.
    }
    while (i < size_) i = IsInactive(tree_[2 * i]) ? 2 * i + 1 : 2 * i;
    return i - size_;
  }

 private:
  int size_ = 1;  // Leaves: a power of two, so that a subtree is a range of slots.
  std::vector<TreeKey> tree_;
};

// kChains: each ready chain's score (its rise minus what it leaves live) is kept
// until it can change. It depends on the readers left of the values its
// nodes read: value v, read by c of its nodes, is freed inside the chain
// exactly when all its readers left are those c. As readers left only go
// down and never below c, the score changes only when they drop to c.
struct NodeState {
  int missing = 0;      // Predecessors not run yet.
  bool scored = false;  // As a ready chain's first node: `score` is current.
  int version = 0;      // Bumped when the score is dropped: older watches are void.
  int64_t score = 0;    // Its chain's rise minus what the chain leaves live.
};
struct ValueState {
  int remaining_readers = 0;  // Readers not run yet.
  int first_watch = -1;       // Watches of chain scores that depend on it, linked.
  int counted_in = -1;        // The scoring that last counted its reads.
  int reads_inside = 0;       // Its readers in that scoring's chain.
};
struct Watch {
  int head;            // The chain's first node.
  int readers_inside;  // Nodes of the chain that read the value.
  int remaining_then;  // Readers left of the value when the score was made.
  int version;         // The head's version then.
  int next;            // The value's next watch, or -1.
};
// The working memory of each kind of rule, kept from call to call.
struct ChainMemory {
  std::vector<NodeState> nodes;
  std::vector<ValueState> values;
  std::vector<Watch> watches;
  std::vector<int> ready;       // First nodes of the ready chains.
  std::vector<int> chain;       // The chain being scored.
  std::vector<int> read;        // Distinct values it reads.
  std::vector<int> best_chain;  // The chain being run.
  std::vector<int> changed;     // Values it reads.
};

struct ListMemory {
  std::vector<int> slot_of;
  std::vector<int64_t> sorted_run;
  std::vector<int> node_at;
  std::vector<int> remaining_readers;
  std::vector<int> missing;
  std::vector<bool> ready;
  std::vector<bool> done;
  std::vector<int64_t> freed;
  std::vector<int> ready_since;
  MinTree by_rule;
  std::vector<Key> heap;
};

// The chains rule: repeatedly runs the ready chain (a node, then while the
// last node has one successor with one predecessor, that successor) with the
// largest rise above the base minus what it leaves live. Scores are cached
// and dropped through watches on the values they depend on.
class ChainScheduler {
 public:
  ChainScheduler(const StepModel& model, const std::vector<int>& rank, ChainMemory& memory)
      : model_(model), rank_(rank), memory_(memory), nodes_(memory.nodes), values_(memory.values) {}

  void Schedule(std::vector<int>& order) {
    constexpr size_t kMostReadyForChains = 512;
    Reset();
    order.clear();
    order.reserve(model_.num_nodes);
    std::vector<int>& ready = memory_.ready;
    while (!ready.empty()) {
      if (ready.size() > kMostReadyForChains) {
        FinishInRankOrder(order);
        return;
      }
      // The chain with the largest rise above the base minus what it leaves.
      size_t best = 0;
      std::tuple<int64_t, int> best_key;
      for (size_t i = 0; i < ready.size(); ++i) {
        const std::tuple<int64_t, int> key = {-ScoreOf(ready[i]), rank_[ready[i]]};
        if (i == 0 || key < best_key) {
          best = i;
          best_key = key;
        }
      }
      const int head = ready[best];
      ready[best] = ready.back();
      ready.pop_back();
      RunChain(head, order);
      DropChangedScores();
    }
  }

 private:
  void Reset() {
    const int num_values = model_.readers.size();
    nodes_.assign(model_.num_nodes, NodeState{});
    values_.assign(num_values, ValueState{});
    memory_.watches.clear();
    for (int v = 0; v < num_values; ++v) values_[v].remaining_readers = static_cast<int>(model_.readers[v].size());
    memory_.ready.clear();
    for (int n = 0; n < model_.num_nodes; ++n) {
      nodes_[n].missing = static_cast<int>(model_.predecessors[n].size());
      if (nodes_[n].missing == 0) memory_.ready.push_back(n);
    }
  }

  int64_t FreedBy(int n) const {
    int64_t freed = 0;
    for (int v : model_.inputs[n]) {
      if (values_[v].remaining_readers == 1 && !model_.value_is_graph_output[v]) freed += model_.value_bytes[v];
    }
    return freed;
  }
  void Run(int n) {
    for (int v : model_.inputs[n]) --values_[v].remaining_readers;
  }
  void Unrun(int n) {
    for (int v : model_.inputs[n]) ++values_[v].remaining_readers;
  }

  // The chain from `n`: while the last node has one successor with one predecessor.
  void ChainOf(int n, std::vector<int>& chain) const {
    chain.assign(1, n);
    while (model_.successors[chain.back()].size() == 1) {
      const int next = model_.successors[chain.back()][0];
      if (model_.predecessors[next].size() != 1) break;
      chain.push_back(next);
    }
  }

  void DropScore(int head) {
    nodes_[head].scored = false;
    ++nodes_[head].version;
  }

  // The chain's rise minus what it leaves live, cached with a watch on each
  // value it reads (a reader elsewhere running can change what it frees).
  int64_t ScoreOf(int head) {
    NodeState& state = nodes_[head];
    if (state.scored) return state.score;
    std::vector<int>& chain = memory_.chain;
    ChainOf(head, chain);
    int64_t live = 0;
    int64_t rise = 0;
    for (int m : chain) {
      rise = std::max(rise, live + model_.run_bytes[m]);
      live += model_.kept_bytes[m] - FreedBy(m);
      Run(m);
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) Unrun(*it);
    state.score = rise - live;
    state.scored = true;
    std::vector<int>& read = memory_.read;
    read.clear();
    ++scorings_;
    for (int m : chain) {
      for (int v : model_.inputs[m]) {
        if (model_.value_is_graph_output[v]) continue;  // Never freed: no effect on the score.
        if (values_[v].counted_in != scorings_) {
          values_[v].counted_in = scorings_;
          values_[v].reads_inside = 0;
          read.push_back(v);
        }
        ++values_[v].reads_inside;
      }
    }
    for (int v : read) {
      memory_.watches.push_back(
          {head, values_[v].reads_inside, values_[v].remaining_readers, state.version, values_[v].first_watch});
      values_[v].first_watch = static_cast<int>(memory_.watches.size()) - 1;
    }
    return state.score;
  }

  // Runs the chain from `head`; the values it reads go to memory_.changed.
  void RunChain(int head, std::vector<int>& order) {
    DropScore(head);
    std::vector<int>& chain = memory_.best_chain;
    ChainOf(head, chain);
    memory_.changed.clear();
    for (size_t i = 0; i < chain.size(); ++i) {
      const int m = chain[i];
      order.push_back(m);
      Run(m);
      for (int v : model_.inputs[m]) memory_.changed.push_back(v);
      for (int s : model_.successors[m]) {
        // The next chain member is run here, not made ready (it is a node's
        // only successor, so no other successor is in the chain).
        if (--nodes_[s].missing == 0 && (i + 1 == chain.size() || s != chain[i + 1])) memory_.ready.push_back(s);
      }
    }
  }

  // Drops the scores that changed, and the watches of scores made again.
  void DropChangedScores() {
    std::vector<Watch>& watches = memory_.watches;
    for (int v : memory_.changed) {
      const int remaining = values_[v].remaining_readers;
      for (int* link = &values_[v].first_watch; *link != -1;) {
        const Watch& watch = watches[*link];
        const bool void_watch = watch.version != nodes_[watch.head].version;
        const bool score_changed = remaining == watch.readers_inside && remaining != watch.remaining_then;
        if (!void_watch && !score_changed) {
          link = &watches[*link].next;
          continue;
        }
        if (!void_watch) DropScore(watch.head);
        *link = watch.next;  // Unlinked.
      }
    }
  }

  // Too wide to look ahead (the other rules cover such graphs): the rest in
  // rank order, O(log n) per step.
  void FinishInRankOrder(std::vector<int>& order) {
    auto later = [this](int a, int b) { return rank_[a] > rank_[b]; };
    std::priority_queue<int, std::vector<int>, decltype(later)> queue(later, memory_.ready);
    while (!queue.empty()) {
      const int n = queue.top();
      queue.pop();
      order.push_back(n);
      for (int s : model_.successors[n]) {
        if (--nodes_[s].missing == 0) queue.push(s);
      }
    }
  }

  const StepModel& model_;
  const std::vector<int>& rank_;
  ChainMemory& memory_;
  std::vector<NodeState>& nodes_;
  std::vector<ValueState>& values_;
  int scorings_ = 0;
};

// The list rules: at each step one ready node, by the rule's key. Ready
// nodes' keys sit in a heap (least growth, oldest first) or, for
// kPeakAware, in a min-tree over nodes sorted by step height.
class ListScheduler {
 public:
  ListScheduler(const StepModel& model, GreedyRule rule, const std::vector<int>& rank, ListMemory& memory)
      : model_(model),
        rule_(rule),
        peak_aware_(rule == GreedyRule::kPeakAware),
        growth_field_(rule == GreedyRule::kLeastGrowth ? 0 : 1),
        rank_(rank),
        memory_(memory) {}

  void Schedule(std::vector<int>& order) {
    Reset();
    const int num_nodes = model_.num_nodes;
    order.clear();
    order.reserve(num_nodes);
    int64_t live = model_.initial_live;
    int64_t peak = 0;
    for (int step = 0; step < num_nodes; ++step) {
      const int64_t first_step = step == 0 ? model_.first_step_bytes : 0;
      const int n = peak_aware_ ? TakePeakAware(peak - live - first_step) : TakeFromHeap();
      if (n < 0) break;  // Not reached for an acyclic graph.
      order.push_back(n);
      memory_.ready[n] = false;  // Its heap entries are skipped from now on.
      memory_.done[n] = true;
      peak = std::max(peak, live + model_.run_bytes[n] + first_step);
      live += model_.kept_bytes[n] - memory_.freed[n];
      AfterRun(n, step);
    }
  }

 private:
  void Reset() {
    const int num_nodes = model_.num_nodes;
    if (peak_aware_) SortSlots();
    std::vector<int>& remaining_readers = memory_.remaining_readers;
    remaining_readers.resize(model_.readers.size());
    for (int v = 0; v < model_.readers.size(); ++v) {
      remaining_readers[v] = static_cast<int>(model_.readers[v].size());
    }
    memory_.missing.resize(num_nodes);
    memory_.ready.assign(num_nodes, false);
    memory_.done.assign(num_nodes, false);
    memory_.freed.assign(num_nodes, 0);  // For ready nodes: bytes they would free now.
    memory_.ready_since.assign(num_nodes, 0);
    // kPeakAware: the key of each ready node, by slot.
    if (peak_aware_) memory_.by_rule.Reset(num_nodes);
    memory_.heap.clear();
    for (int n = 0; n < num_nodes; ++n) {
      memory_.missing[n] = static_cast<int>(model_.predecessors[n].size());
      if (memory_.missing[n] == 0) MakeReady(n, 0);
    }
  }

  // kPeakAware's slots: nodes sorted by run_bytes (then rank), so that "the
  // ready nodes whose step fits under a threshold" is a prefix of slots.
  void SortSlots() {
    const int num_nodes = model_.num_nodes;
    memory_.slot_of.resize(num_nodes);
    std::vector<int>& node_at = memory_.node_at;
    node_at.resize(num_nodes);
    std::iota(node_at.begin(), node_at.end(), 0);
    std::sort(node_at.begin(), node_at.end(), [&](int a, int b) {
      return std::tie(model_.run_bytes[a], rank_[a], a) < std::tie(model_.run_bytes[b], rank_[b], b);
    });
    memory_.sorted_run.resize(num_nodes);
    for (int s = 0; s < num_nodes; ++s) {
      memory_.slot_of[node_at[s]] = s;
      memory_.sorted_run[s] = model_.run_bytes[node_at[s]];
    }
  }

  static bool Later(const Key& a, const Key& b) { return Less(b, a); }

  // The other rules keep every key a ready node has had, least on top. A
  // key is pushed again whenever the node's growth changes (it only drops:
  // the node would free more), and entries whose node is no longer ready or
  // whose growth is no longer the node's are skipped. O(log n) per step, and
  // cheap when few nodes are ready at once.
  void Update(int n) {
    const int64_t growth = model_.kept_bytes[n] - memory_.freed[n];
    if (peak_aware_) {  // The step's height is handled by the slot ranges.
      memory_.by_rule.Set(memory_.slot_of[n], {growth, RankAndNode(rank_[n], n)});
      return;
    }
    std::vector<Key>& heap = memory_.heap;
    heap.push_back(rule_ == GreedyRule::kLeastGrowth ? Key{growth, model_.run_bytes[n], rank_[n], n}
                                                     : Key{-memory_.ready_since[n], growth, rank_[n], n});
    std::push_heap(heap.begin(), heap.end(), Later);
  }

  void MakeReady(int n, int step) {
    memory_.ready[n] = true;
    memory_.ready_since[n] = step;
    memory_.freed[n] = 0;
    for (int v : model_.inputs[n]) {
      if (memory_.remaining_readers[v] == 1 && !model_.value_is_graph_output[v]) {
        memory_.freed[n] += model_.value_bytes[v];
      }
    }
    Update(n);
  }

  // kPeakAware: the ready node of least growth (then rank) whose step stays
  // within `room` above the live bytes; if none, the lowest step, then least
  // growth, then rank. -1 when nothing is ready.
  int TakePeakAware(int64_t room) {
    const std::vector<int64_t>& sorted_run = memory_.sorted_run;
    MinTree& by_rule = memory_.by_rule;
    const int fits =
        static_cast<int>(std::upper_bound(sorted_run.begin(), sorted_run.end(), room) - sorted_run.begin());
    TreeKey best = by_rule.Min(0, fits);
    if (IsInactive(best)) {
      const int first = by_rule.FirstActive(fits);
      if (first == -1) return -1;
      const int end = static_cast<int>(std::upper_bound(sorted_run.begin(), sorted_run.end(), sorted_run[first]) -
                                       sorted_run.begin());
      best = by_rule.Min(first, end);
    }
    const int n = NodeOf(best);
    by_rule.Set(memory_.slot_of[n], kInactive);
    return n;
  }

  // The heap's least current key's node; -1 when nothing is ready.
  int TakeFromHeap() {
    std::vector<Key>& heap = memory_.heap;
    auto stale = [&](const Key& key) {
      const int node = static_cast<int>(key[3]);
      return !memory_.ready[node] || key[growth_field_] != model_.kept_bytes[node] - memory_.freed[node];
    };
    while (!heap.empty() && stale(heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), Later);
      heap.pop_back();
    }
    return heap.empty() ? -1 : static_cast<int>(heap.front()[3]);
  }

  // After `n` ran at `step`: the last reader of a value it read now frees
  // it, and successors with nothing missing become ready.
  void AfterRun(int n, int step) {
    for (int v : model_.inputs[n]) {
      if (--memory_.remaining_readers[v] != 1 || model_.value_is_graph_output[v]) continue;
      // One reader left: running it will free v.
      for (int reader : model_.readers[v]) {
        if (memory_.done[reader]) continue;
        if (memory_.ready[reader]) {
          memory_.freed[reader] += model_.value_bytes[v];
          Update(reader);
        }
        break;
      }
    }
    for (int s : model_.successors[n]) {
      if (--memory_.missing[s] == 0) MakeReady(s, step + 1);
    }
  }

  const StepModel& model_;
  const GreedyRule rule_;
  const bool peak_aware_;
  const int growth_field_;  // The Key field holding the growth (kLeastGrowth: 0, else 1).
  const std::vector<int>& rank_;
  ListMemory& memory_;
};

}  // namespace

struct GreedyScheduler::Memory {
  ListMemory list;
  ChainMemory chains;
};

GreedyScheduler::GreedyScheduler() : memory_(std::make_unique<Memory>()) {}
GreedyScheduler::~GreedyScheduler() = default;

void GreedyScheduler::Schedule(const StepModel& model, GreedyRule rule, const std::vector<int>& rank,
                               std::vector<int>& order) {
  if (rule == GreedyRule::kChains) {
    ChainScheduler(model, rank, memory_->chains).Schedule(order);
  } else {
    ListScheduler(model, rule, rank, memory_->list).Schedule(order);
  }
}

std::vector<int> GreedySchedule(const StepModel& model, GreedyRule rule,
                                const std::vector<int>& rank) {
  GreedyScheduler scheduler;
  std::vector<int> order;
  scheduler.Schedule(model, rule, rank, order);
  return order;
}

}  // namespace footprint::scheduler
