#include "analyzer/patching/second_segment.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace footprint::patching {
namespace {

constexpr int kNearNodes = 48;  // Nodes around the peak node, each way, where a segment may start and end.

// True when every path from a graph input to `node` passes through `value`
// (the ancestors of `node` reached without crossing it hold no graph input).
bool Dominates(const GraphFacts& facts, const std::string& value, int node) {
  absl::flat_hash_set<int> seen{node};
  std::vector<int> stack{node};
  while (!stack.empty()) {
    const int at = stack.back();
    stack.pop_back();
    for (const std::string& input : facts.graph->node(at).input()) {
      if (input.empty() || input == value || facts.IsStatic(input)) continue;
      auto producer = facts.producer.find(input);
      if (producer == facts.producer.end()) return false;  // A graph input.
      if (seen.insert(producer->second).second) stack.push_back(producer->second);
    }
  }
  return true;
}

// `peak` and the patchable nodes reached from it through their readers,
// nearest first (breadth first), not in `avoid`: readers are added until
// kNearNodes are reached (the last node's readers all).
std::vector<int> NodesFrom(const GraphFacts& facts, int peak, const absl::flat_hash_set<int>& avoid) {
  const onnx::GraphProto& graph = *facts.graph;
  std::vector<int> nodes{peak};
  absl::flat_hash_set<int> seen{peak};
  for (size_t next = 0; next < nodes.size() && static_cast<int>(seen.size()) < kNearNodes; ++next) {
    for (const std::string& value : graph.node(nodes[next]).output()) {
      auto readers = facts.consumers.find(value);
      if (readers == facts.consumers.end()) continue;
      for (int reader : readers->second) {
        if (avoid.contains(reader) || !SpatialOpIn(facts, graph.node(reader)).ok()) continue;
        if (seen.insert(reader).second) nodes.push_back(reader);
      }
    }
  }
  return nodes;
}

}  // namespace

int64_t InnerBound(const GraphFacts& facts, const PlannedSegment& planned, int64_t alignment) {
  const Segment& segment = planned.segment;
  int64_t bound = planned.output_in_pieces ? 0 : 2 * AlignedBytes(facts.shapes.at(segment.output), alignment);
  const auto region_bytes = [&](const std::string& value, const Region& region) {
    std::vector<int64_t> dims = facts.shapes.at(value);
    dims[2] = region.h.size();
    dims[3] = region.w.size();
    return AlignedBytes(dims, alignment);
  };
  for (const PatchGeometry::Patch& patch : planned.geometry.patches) {
    for (size_t i = 0; i < segment.nodes.size(); ++i) {
      const onnx::NodeProto& node = facts.graph->node(segment.nodes[i]);
      int64_t inputs = 0;
      absl::flat_hash_set<std::string> counted;
      for (int j = 0; j < node.input_size(); ++j) {
        if (patch.reads[i][j].h.size() > 0 && counted.insert(node.input(j)).second) {
          inputs += region_bytes(node.input(j), patch.produced.at(node.input(j)));
        }
      }
      bound = std::max(bound, inputs);
      for (const std::string& output : node.output()) {
        if (auto it = patch.produced.find(output); it != patch.produced.end()) {
          bound = std::max(bound, region_bytes(output, it->second));
        }
      }
    }
  }
  return bound;
}

int64_t AlignedBytes(const std::vector<int64_t>& dims, int64_t alignment) {
  int64_t elements = 1;
  for (int64_t dim : dims) elements *= dim;
  const int64_t bytes = elements * 4;  // A bound only: float32, the dtype of the CNNs patched.
  return (bytes + alignment - 1) / alignment * alignment;
}

// The grids tried for an output of height x width: up to `most` x `most`
// patches, square ones and ones whose patches are about square; coarsest first.
std::vector<Grid> GridsFor(int64_t height, int64_t width, int64_t most) {
  std::vector<Grid> grids;
  for (int64_t rows = 1; rows <= std::min(most, height); ++rows) {
    const int64_t matched = std::llround(static_cast<double>(rows) * width / height);
    for (int64_t cols : {rows, matched}) {
      if (cols < 1 || cols > std::min(most, width) || rows * cols < 2) continue;
      const Grid grid{.rows = rows, .cols = cols};
      if (std::none_of(grids.begin(), grids.end(),
                       [&](const Grid& g) { return g.rows == rows && g.cols == cols; })) {
        grids.push_back(grid);
      }
    }
  }
  std::stable_sort(grids.begin(), grids.end(),
                   [](const Grid& a, const Grid& b) { return a.rows * a.cols < b.rows * b.cols; });
  return grids;
}

// The node of the original graph whose output is the largest original value
// live at `analysis`'s peak (the first peak step that has one), outside the
// segments `taken`.
std::vector<int> PeakNodes(const Analysis& analysis, const GraphFacts& facts, const absl::flat_hash_set<int>& taken,
                           size_t count) {
  std::vector<int> nodes;
  if (analysis.live_bytes_per_step.empty()) return nodes;
  const int64_t peak = *std::max_element(analysis.live_bytes_per_step.begin(), analysis.live_bytes_per_step.end());
  for (size_t step = 0; step < analysis.live_bytes_per_step.size(); ++step) {
    if (analysis.live_bytes_per_step[step] != peak) continue;
    std::vector<std::pair<int64_t, int>> live;  // (bytes, producer), in the analysis' order.
    for (const TensorRecord& tensor : analysis.tensors) {
      if (tensor.first_step > static_cast<int64_t>(step) || tensor.last_step < static_cast<int64_t>(step)) continue;
      auto producer = facts.producer.find(tensor.name);
      if (producer == facts.producer.end() || taken.contains(producer->second)) continue;
      live.emplace_back(tensor.aligned_bytes, producer->second);
    }
    if (live.empty()) continue;
    std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [bytes, node] : live) {
      if (nodes.size() >= count) break;
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    return nodes;
  }
  return nodes;
}

namespace {

// `name` cut at its last "." or "__" ("" when it has neither).
std::string CutLastSuffix(const std::string& name) {
  size_t cut = name.rfind('.');
  const size_t underscores = name.rfind("__");
  if (cut == std::string::npos || (underscores != std::string::npos && underscores > cut)) cut = underscores;
  return cut == std::string::npos ? "" : name.substr(0, cut);
}

}  // namespace

std::vector<int> RuntimePeakNodes(const Analysis& analysis, const GraphFacts& facts,
                                  const absl::flat_hash_set<int>& taken, size_t count) {
  std::vector<int> nodes;
  for (std::string name : analysis.memory.runtime_peak_values) {
    auto producer = facts.producer.find(name);
    while (producer == facts.producer.end() && !(name = CutLastSuffix(name)).empty()) {
      producer = facts.producer.find(name);
    }
    if (producer == facts.producer.end() || taken.contains(producer->second)) continue;
    if (std::find(nodes.begin(), nodes.end(), producer->second) == nodes.end()) nodes.push_back(producer->second);
    if (nodes.size() >= count) break;
  }
  return nodes;
}

std::optional<int> PeakNode(const Analysis& analysis, const GraphFacts& facts, const absl::flat_hash_set<int>& taken) {
  const std::vector<int> nodes = PeakNodes(analysis, facts, taken, 1);
  return nodes.empty() ? std::nullopt : std::optional<int>(nodes.front());
}

Half MakeHalf(const GraphFacts& facts, PlannedSegment planned, int64_t alignment) {
  Half half{.inner_bound = InnerBound(facts, planned, alignment),
            .extra_macs = planned.geometry.macs_after - planned.geometry.macs_before};
  const std::vector<int>& recomputed = planned.segment.recomputed;
  for (int node : planned.segment.nodes) {
    half.nodes.insert(node);
    if (std::find(recomputed.begin(), recomputed.end(), node) != recomputed.end()) continue;  // Still whole outside.
    for (const std::string& output : facts.graph->node(node).output()) {
      if (output != planned.segment.output) half.inner.insert(output);
    }
  }
  half.planned = std::move(planned);
  return half;
}

// `segment`'s grids within `allowed_extra` MACs, coarsest first until one is
// over; the `most` finest of them.
std::vector<PatchGeometry> AdmissibleGrids(const GraphFacts& facts, const Segment& segment, double allowed_extra,
                                           const PatchSearchOptions& search) {
  const std::vector<int64_t>& out = facts.shapes.at(segment.output);
  std::vector<PatchGeometry> admissible;
  for (const Grid& grid : GridsFor(out[2], out[3], search.max_patches_per_axis)) {
    PatchGeometry geometry = GeometryOf(facts, segment, grid);
    if (geometry.empty_read) continue;
    if (static_cast<double>(geometry.macs_after - geometry.macs_before) > allowed_extra) break;
    admissible.push_back(std::move(geometry));
  }
  if (admissible.size() > static_cast<size_t>(search.grids_per_segment)) {
    admissible.erase(admissible.begin(), admissible.end() - search.grids_per_segment);
  }
  return admissible;
}

// Segments around `peak` (docs/patching.md, the second segment): read from a
// 4-D tensor that dominates it (the first segment's T, a backbone's
// feature), nearest first, not inside `avoid`; T at the peak node or at a
// patchable node after it.
std::vector<Segment> SegmentsAround(const GraphFacts& facts, int peak, const absl::flat_hash_set<int>& avoid,
                                    const absl::flat_hash_set<std::string>& avoid_values) {
  constexpr int kInputs = 8;      // Dominating tensors tried as its input, nearest first.
  const onnx::GraphProto& graph = *facts.graph;
  std::vector<std::string> inputs;
  {
    absl::flat_hash_set<std::string> seen;
    std::deque<int> queue{peak};
    absl::flat_hash_set<int> visited{peak};
    while (!queue.empty() && static_cast<int>(inputs.size()) < kInputs && static_cast<int>(visited.size()) <= kNearNodes) {
      const int node = queue.front();
      queue.pop_front();
      for (const std::string& value : graph.node(node).input()) {
        if (value.empty() || facts.IsStatic(value) || avoid_values.contains(value) || !seen.insert(value).second) continue;
        const std::optional<std::vector<int64_t>> dims = facts.ShapeOf(value);
        if (dims.has_value() && dims->size() == 4 && Dominates(facts, value, peak)) inputs.push_back(value);
        auto producer = facts.producer.find(value);
        if (producer == facts.producer.end() || avoid.contains(producer->second)) continue;
        if (visited.insert(producer->second).second) queue.push_back(producer->second);
      }
    }
  }
  const std::vector<int> after = NodesFrom(facts, peak, avoid);
  const absl::flat_hash_set<int> lasts(after.begin(), after.end());
  std::vector<Segment> around;
  for (const std::string& input : inputs) {
    for (Segment& segment : SegmentsFrom(facts, input, &lasts).segments) {
      if (std::find(segment.nodes.begin(), segment.nodes.end(), peak) == segment.nodes.end()) continue;
      if (std::any_of(segment.nodes.begin(), segment.nodes.end(), [&](int node) { return avoid.contains(node); })) continue;
      around.push_back(std::move(segment));
    }
  }
  return around;
}

namespace {

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t elements = 1;
  for (int64_t dim : dims) elements *= dim;
  return elements;
}

// The activations `node` reads (no weights), their elements summed; nullopt
// when one is not 4-D of known shape or is written by one of `members`.
std::optional<int64_t> ActivationsRead(const GraphFacts& facts, const onnx::NodeProto& node,
                                       const absl::flat_hash_set<int>& members) {
  int64_t elements = 0;
  for (const std::string& value : node.input()) {
    if (value.empty() || facts.IsStatic(value)) continue;
    const std::optional<std::vector<int64_t>> dims = facts.ShapeOf(value);
    auto producer = facts.producer.find(value);
    if (!dims.has_value() || dims->size() != 4) return std::nullopt;
    if (producer != facts.producer.end() && members.contains(producer->second)) return std::nullopt;
    elements += Elements(*dims);
  }
  return elements;
}

// Recomputation (segment.h): each producer of a value `members` read from
// outside, patchable but read outside too (an SE block's pool, which needs
// the tensor whole), joins as a node each patch recomputes when the
// activations it reads are smaller than its output (RSEFPN's 1x1 lateral,
// 12 channels in, 96 out: the patches then hold the 12 and the 96 lives only
// until the pool). One level: from the closure's own inputs.
void AddRecomputed(const GraphFacts& facts, const absl::flat_hash_set<int>& avoid,
                   const std::function<bool(int)>& is_patchable, absl::flat_hash_set<int>& members,
                   std::vector<int>& recomputed) {
  std::vector<int> producers;
  for (int node : members) {
    for (const std::string& value : facts.graph->node(node).input()) {
      if (value.empty() || facts.IsStatic(value)) continue;
      auto producer = facts.producer.find(value);
      if (producer == facts.producer.end() || members.contains(producer->second)) continue;
      if (std::find(producers.begin(), producers.end(), producer->second) == producers.end()) {
        producers.push_back(producer->second);
      }
    }
  }
  std::sort(producers.begin(), producers.end());  // The same segment whatever the set's order.
  for (int producer : producers) {
    const onnx::NodeProto& node = facts.graph->node(producer);
    if (avoid.contains(producer) || node.output_size() != 1 || facts.graph_outputs.contains(node.output(0)) ||
        !is_patchable(producer)) {
      continue;
    }
    const std::vector<int>& readers = facts.consumers.at(node.output(0));
    if (std::all_of(readers.begin(), readers.end(), [&](int reader) { return members.contains(reader); })) {
      continue;  // Left out for another reason (another stage's size): nothing outside needs it whole.
    }
    const std::optional<std::vector<int64_t>> out = facts.ShapeOf(node.output(0));
    const std::optional<int64_t> read = ActivationsRead(facts, node, members);
    if (!out.has_value() || IsImageGate(*out) || !read.has_value() || *read >= Elements(*out)) continue;
    recomputed.push_back(producer);
  }
  members.insert(recomputed.begin(), recomputed.end());
}

// The closure described at MultiInputSegmentsAround for T = `last`'s output;
// nullopt when it is not a segment with two or more inputs holding `peak`.
std::optional<Segment> ClosureEndingAt(const GraphFacts& facts, int last, int peak,
                                       const absl::flat_hash_set<int>& avoid, bool same_stage, bool recompute,
                                       absl::flat_hash_map<int, bool>& patchable) {
  const onnx::GraphProto& graph = *facts.graph;
  const onnx::NodeProto& last_node = graph.node(last);
  if (last_node.output_size() != 1) return std::nullopt;  // T is the one output of its producer.
  const std::optional<std::vector<int64_t>> t_dims = facts.ShapeOf(last_node.output(0));
  if (!t_dims.has_value() || t_dims->size() != 4) return std::nullopt;
  const std::function<bool(int)> is_patchable = [&](int node) {
    auto [it, inserted] = patchable.try_emplace(node, false);
    if (inserted) it->second = SpatialOpIn(facts, graph.node(node)).ok();
    return it->second;
  };
  if (!is_patchable(last)) return std::nullopt;
  absl::flat_hash_set<int> ancestors;
  std::vector<int> stack{last};
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    for (const std::string& value : graph.node(node).input()) {
      if (value.empty() || facts.IsStatic(value)) continue;
      auto producer = facts.producer.find(value);
      if (producer != facts.producer.end() && ancestors.insert(producer->second).second) stack.push_back(producer->second);
    }
  }
  if (last != peak && !ancestors.contains(peak)) return std::nullopt;
  // Back from T: a node is taken when every reader of its outputs already is.
  absl::flat_hash_set<int> members{last};
  for (auto it = facts.order.rbegin(); it != facts.order.rend(); ++it) {
    const int node = *it;
    if (!ancestors.contains(node) || avoid.contains(node) || !is_patchable(node)) continue;
    bool take = true;
    for (const std::string& value : graph.node(node).output()) {
      if (value.empty()) continue;
      const std::optional<std::vector<int64_t>> dims = facts.ShapeOf(value);
      // An SE gate is computed once, whole: an input, never a node each patch runs.
      take &= !facts.graph_outputs.contains(value) && dims.has_value() && dims->size() == 4 && !IsImageGate(*dims);
      if (take && same_stage) take = (*dims)[2] == (*t_dims)[2] && (*dims)[3] == (*t_dims)[3];
      if (auto readers = facts.consumers.find(value); take && readers != facts.consumers.end()) {
        for (int reader : readers->second) take &= members.contains(reader);
      }
      if (!take) break;
    }
    if (take) members.insert(node);
  }
  if (!members.contains(peak)) return std::nullopt;
  std::vector<int> recomputed;
  if (recompute) AddRecomputed(facts, avoid, is_patchable, members, recomputed);
  Segment segment{.output = last_node.output(0), .recomputed = recomputed};
  std::vector<std::string> inputs;
  bool has_window = false;
  for (int node : facts.order) {
    if (!members.contains(node)) continue;
    segment.nodes.push_back(node);
    segment.ops.push_back(*SpatialOpIn(facts, graph.node(node)));
    has_window |= segment.ops.back().kind != SpatialKind::kPointwise;
    for (const std::string& value : graph.node(node).input()) {
      if (value.empty() || facts.IsStatic(value)) continue;
      auto producer = facts.producer.find(value);
      if (producer != facts.producer.end() && members.contains(producer->second)) continue;
      if (std::find(inputs.begin(), inputs.end(), value) != inputs.end()) continue;
      const std::optional<std::vector<int64_t>> dims = facts.ShapeOf(value);
      if (!dims.has_value() || dims->size() != 4) return std::nullopt;
      inputs.push_back(value);
    }
  }
  if (inputs.size() < 2 || !has_window) return std::nullopt;
  segment.input = inputs.front();
  segment.other_inputs.assign(inputs.begin() + 1, inputs.end());
  return segment;
}

}  // namespace

std::vector<Segment> MultiInputSegmentsAround(const GraphFacts& facts, int peak, const absl::flat_hash_set<int>& avoid) {
  std::vector<Segment> around;
  absl::flat_hash_map<int, bool> patchable;
  for (int last : NodesFrom(facts, peak, avoid)) {
    for (const auto& [same_stage, recompute] : {std::pair{false, false}, std::pair{true, false},
                                               std::pair{false, true}, std::pair{true, true}}) {
      std::optional<Segment> segment = ClosureEndingAt(facts, last, peak, avoid, same_stage, recompute, patchable);
      if (!segment.has_value()) continue;
      if (std::any_of(around.begin(), around.end(), [&](const Segment& s) { return s.nodes == segment->nodes; })) continue;
      around.push_back(*std::move(segment));
    }
  }
  return around;
}

}  // namespace footprint::patching
