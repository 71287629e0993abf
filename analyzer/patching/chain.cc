#include "analyzer/patching/chain.h"

#include <algorithm>
#include <utility>

namespace footprint::patching {

std::optional<Segment> NextSegment(const GraphFacts& facts, const std::string& value,
                                   const absl::flat_hash_set<int>& taken) {
  constexpr int kNearNodes = 48;  // Nodes after `value`'s producer where the segment may end.
  if (facts.graph_outputs.contains(value)) return std::nullopt;
  auto readers = facts.consumers.find(value);
  if (readers == facts.consumers.end() || readers->second.empty()) return std::nullopt;
  if (std::any_of(readers->second.begin(), readers->second.end(), [&](int node) { return taken.contains(node); })) {
    return std::nullopt;
  }
  auto producer = facts.producer.find(value);
  auto at = producer == facts.producer.end()
                ? facts.order.begin()
                : std::find(facts.order.begin(), facts.order.end(), producer->second) + 1;
  absl::flat_hash_set<int> lasts;
  for (; at != facts.order.end() && static_cast<int>(lasts.size()) < kNearNodes; ++at) lasts.insert(*at);
  for (Segment& segment : SegmentsFrom(facts, value, &lasts).segments) {
    const absl::flat_hash_set<int> members(segment.nodes.begin(), segment.nodes.end());
    if (std::any_of(segment.nodes.begin(), segment.nodes.end(), [&](int node) { return taken.contains(node); })) continue;
    if (std::all_of(readers->second.begin(), readers->second.end(), [&](int node) { return members.contains(node); })) {
      return std::move(segment);
    }
  }
  return std::nullopt;
}

std::vector<Segment> ChainAfter(const GraphFacts& facts, const std::string& value, absl::flat_hash_set<int> taken,
                                size_t most) {
  std::vector<Segment> chain;
  std::string from = value;
  while (chain.size() < most) {
    std::optional<Segment> next = NextSegment(facts, from, taken);
    if (!next.has_value()) break;
    taken.insert(next->nodes.begin(), next->nodes.end());
    from = next->output;
    chain.push_back(*std::move(next));
  }
  return chain;
}

}  // namespace footprint::patching
