#include "analyzer/patching/segment.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint::patching {
namespace {

Region HullOf(const Region& a, const Region& b) { return {.h = Hull(a.h, b.h), .w = Hull(a.w, b.w)}; }

Span Clip(const Span& span, int64_t size) {
  return {.begin = std::max<int64_t>(span.begin, 0), .end = std::min(span.end, size)};
}

std::string NodeLabel(const onnx::NodeProto& node) {
  return absl::StrCat("node '", node.name().empty() ? node.output(0) : node.name(), "' (", node.op_type(), ")");
}

}  // namespace

std::vector<std::string> InputsOf(const Segment& segment) {
  std::vector<std::string> inputs{segment.input};
  inputs.insert(inputs.end(), segment.other_inputs.begin(), segment.other_inputs.end());
  return inputs;
}

std::optional<std::vector<int64_t>> GraphFacts::ShapeOf(const std::string& value) const {
  auto it = shapes.find(value);
  if (it == shapes.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<GraphFacts> MakeGraphFacts(const onnx::GraphProto& graph, TensorShapes shapes,
                                          int64_t layout_channel_block) {
  GraphFacts facts;
  facts.graph = &graph;
  facts.shapes = std::move(shapes);
  facts.layout_channel_block = layout_channel_block;
  const int count = graph.node_size();
  for (int i = 0; i < count; ++i) {
    for (const std::string& output : graph.node(i).output()) {
      if (!output.empty()) facts.producer[output] = i;
    }
  }
  // Kahn's sort, taking the lowest index ready (the file's order where it is valid).
  std::vector<int> pending(count, 0);
  for (int i = 0; i < count; ++i) {
    for (const std::string& input : graph.node(i).input()) {
      if (input.empty()) continue;
      facts.consumers[input].push_back(i);
      if (facts.producer.contains(input)) ++pending[i];
    }
  }
  std::vector<int> ready;
  for (int i = count - 1; i >= 0; --i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<int>());
    const int node = ready.back();
    ready.pop_back();
    facts.order.push_back(node);
    for (const std::string& output : graph.node(node).output()) {
      if (output.empty() || !facts.consumers.contains(output)) continue;
      for (int consumer : facts.consumers.at(output)) {
        if (--pending[consumer] == 0) {
          ready.push_back(consumer);
          std::push_heap(ready.begin(), ready.end(), std::greater<int>());
        }
      }
    }
  }
  if (static_cast<int>(facts.order.size()) != count) {
    return absl::InvalidArgumentError("the graph has a cycle");
  }
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& initializer : graph.initializer()) initializers.insert(initializer.name());
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!initializers.contains(input.name())) facts.dynamic.insert(input.name());
  }
  for (int node : facts.order) {
    bool reads_dynamic = false;
    for (const std::string& input : graph.node(node).input()) reads_dynamic |= facts.dynamic.contains(input);
    if (!reads_dynamic) continue;
    for (const std::string& output : graph.node(node).output()) facts.dynamic.insert(output);
  }
  for (const onnx::ValueInfoProto& output : graph.output()) facts.graph_outputs.insert(output.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) facts.stored[initializer.name()] = &initializer;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || !IsDefaultDomain(node)) continue;
    if (const onnx::TensorProto* value = TensorAttribute(node, "value")) facts.stored[node.output(0)] = value;
  }
  return facts;
}

absl::StatusOr<SpatialOp> SpatialOpIn(const GraphFacts& facts, const onnx::NodeProto& node) {
  return SpatialOpOf(
      node, [&](const std::string& value) { return facts.ShapeOf(value); },
      [&](const std::string& value) { return facts.IsStatic(value); },
      [&](const std::string& value) -> const onnx::TensorProto* {
        auto it = facts.stored.find(value);
        return it == facts.stored.end() ? nullptr : it->second;
      });
}

namespace {

// The nodes that depend on `input`.
absl::flat_hash_set<int> DependOn(const GraphFacts& facts, const std::string& input) {
  absl::flat_hash_set<int> downstream;
  std::deque<std::string> frontier{input};
  while (!frontier.empty()) {
    const std::string value = frontier.front();
    frontier.pop_front();
    auto it = facts.consumers.find(value);
    if (it == facts.consumers.end()) continue;
    for (int node : it->second) {
      if (!downstream.insert(node).second) continue;
      for (const std::string& output : facts.graph->node(node).output()) frontier.push_back(output);
    }
  }
  return downstream;
}

}  // namespace

SegmentSearch SegmentsFrom(const GraphFacts& facts, const std::string& input, const absl::flat_hash_set<int>* lasts) {
  SegmentSearch search;
  const onnx::GraphProto& graph = *facts.graph;
  const std::optional<std::vector<int64_t>> input_dims = facts.ShapeOf(input);
  if (!input_dims.has_value() || input_dims->size() != 4) {
    search.reason = absl::StrCat("'", input, "' is not an NCHW tensor of known shape");
    return search;
  }
  const absl::flat_hash_set<int> downstream = DependOn(facts, input);
  // A std::map: a flat map relocating SpatialOp's vectors made GCC 12 warn (a false maybe-uninitialized).
  std::map<int, absl::StatusOr<SpatialOp>> rule;
  for (int node : facts.order) {
    if (downstream.contains(node)) rule.emplace(node, SpatialOpIn(facts, graph.node(node)));
  }
  std::string first_reason;
  bool image_path_reason = false;  // first_reason is about a node with an NCHW output.
  for (int last : facts.order) {
    if (!downstream.contains(last)) continue;
    if (lasts != nullptr && !lasts->contains(last)) continue;
    if (!rule.at(last).ok()) {
      // The reason names the first node that breaks the image's path (an
      // NCHW output), rather than a Shape beside it; else the first at all.
      const onnx::NodeProto& node = graph.node(last);
      const std::optional<std::vector<int64_t>> dims =
          node.output_size() > 0 ? facts.ShapeOf(node.output(0)) : std::nullopt;
      const bool on_image_path = dims.has_value() && dims->size() == 4;
      if (first_reason.empty() || (on_image_path && !image_path_reason)) {
        first_reason = absl::StrCat(NodeLabel(node), ": ", rule.at(last).status().message());
        image_path_reason = on_image_path;
      }
      continue;
    }
    if (graph.node(last).output_size() != 1) continue;  // T is the one output of its producer (a Split is inside).
    // Its ancestors that depend on X.
    absl::flat_hash_set<int> members{last};
    std::vector<int> stack{last};
    bool valid = true;
    while (!stack.empty() && valid) {
      const int node = stack.back();
      stack.pop_back();
      if (!rule.at(node).ok()) valid = false;
      for (const std::string& value : graph.node(node).input()) {
        if (value.empty() || value == input || facts.IsStatic(value)) continue;
        auto producer = facts.producer.find(value);
        if (producer == facts.producer.end() || !downstream.contains(producer->second)) {
          valid = false;  // Another activation: not a function of X alone.
          break;
        }
        if (members.insert(producer->second).second) stack.push_back(producer->second);
      }
    }
    if (!valid) continue;
    const std::string& output = graph.node(last).output(0);
    Segment segment{.input = input, .output = output};
    bool has_window = false;
    for (int node : facts.order) {
      if (!members.contains(node)) continue;
      segment.nodes.push_back(node);
      segment.ops.push_back(*rule.at(node));
      has_window |= rule.at(node)->kind != SpatialKind::kPointwise;
      if (node == last) continue;
      for (const std::string& value : graph.node(node).output()) {
        if (facts.graph_outputs.contains(value)) valid = false;
        auto readers = facts.consumers.find(value);
        if (readers == facts.consumers.end()) continue;
        for (int reader : readers->second) valid &= members.contains(reader);
      }
    }
    if (valid && has_window) search.segments.push_back(std::move(segment));
  }
  if (search.segments.empty()) {
    search.reason = first_reason.empty()
                        ? absl::StrCat("no Conv or pooling of '", input, "' has a receptive field in it alone")
                        : absl::StrCat("the first node reading '", input, "' that is not patchable is ", first_reason);
  }
  return search;
}

namespace {

// MACs of segment node i computing `out` of its output from `in` of its
// first input.
int64_t MacsOf(const GraphFacts& facts, const Segment& segment, size_t i, const Region& out, const Region& in) {
  const onnx::NodeProto& node = facts.graph->node(segment.nodes[i]);
  const SpatialOp& op = segment.ops[i];
  if (op.macs_per_input > 0) {
    const std::vector<int64_t>& dims = facts.shapes.at(node.input(0));
    return op.macs_per_input * dims[0] * dims[1] * in.h.size() * in.w.size();
  }
  const std::vector<int64_t>& dims = facts.shapes.at(node.output(0));
  return op.macs_per_output * dims[0] * dims[1] * out.h.size() * out.w.size();
}

// The region of a node's input its copy needs to compute `out`.
Region NeedOf(const SpatialOp& op, const Region& out) {
  switch (op.kind) {
    case SpatialKind::kPointwise:
      return out;
    case SpatialKind::kWindow:
      return {.h = InputSpanOf(op.h, out.h), .w = InputSpanOf(op.w, out.w)};
    case SpatialKind::kTransposedWindow:
      return {.h = TransposedInputSpanOf(op.h, out.h), .w = TransposedInputSpanOf(op.w, out.w)};
    case SpatialKind::kUpsample:
      return {.h = UpsampledInputSpanOf(op.up_h, out.h), .w = UpsampledInputSpanOf(op.up_w, out.w)};
  }
  return out;
}

// A ConvTranspose copy scatters the rows it reads into [first, last) of the
// output (in its coordinates); its pads and output_padding trim or extend
// that to exactly `out`.
void SetTransposedPads(const SpatialOp& op, const Region& read, const Region& out, Pads& pads) {
  for (const auto& [window, in_span, out_span, begin, end, extra] :
       {std::tuple{op.h, read.h, out.h, &pads.h_begin, &pads.h_end, &pads.h_output_padding},
        std::tuple{op.w, read.w, out.w, &pads.w_begin, &pads.w_end, &pads.w_output_padding}}) {
    const int64_t first = in_span.begin * window.stride - window.pad_begin;
    const int64_t last = (in_span.end - 1) * window.stride - window.pad_begin + (window.kernel - 1) * window.dilation + 1;
    *begin = out_span.begin - first;
    *extra = std::max<int64_t>(0, out_span.end - last);
    *end = last + *extra - out_span.end;
  }
}

// One patch: from its output region back to the segment's input, what each
// node's copy reads and its pads; adds its MACs to `geometry`.
PatchGeometry::Patch PlanPatch(const GraphFacts& facts, const Segment& segment, const Region& output,
                               PatchGeometry& geometry) {
  const onnx::GraphProto& graph = *facts.graph;
  PatchGeometry::Patch patch;
  patch.reads.resize(segment.nodes.size());
  patch.pads.resize(segment.nodes.size());
  patch.output = output;
  patch.produced[segment.output] = patch.output;
  for (size_t i = segment.nodes.size(); i-- > 0;) {
    const onnx::NodeProto& node = graph.node(segment.nodes[i]);
    const SpatialOp& op = segment.ops[i];
    // The rows computed: what its readers need of its outputs (a Split's, all of them).
    Region out;
    for (const std::string& value : node.output()) {
      if (auto it = patch.produced.find(value); it != patch.produced.end()) out = HullOf(out, it->second);
    }
    if (node.output_size() > 1) {
      // Its copy computes every output over that hull: a reader that needs less crops it.
      for (const std::string& value : node.output()) {
        if (patch.produced.contains(value)) patch.produced[value] = out;
      }
    }
    patch.reads[i].resize(node.input_size());
    Region first_read = out;
    for (int j = 0; j < node.input_size(); ++j) {
      const std::string& value = node.input(j);
      if (value.empty() || facts.IsStatic(value)) continue;
      if (op.kind != SpatialKind::kPointwise && j > 0) continue;
      const std::vector<int64_t>& dims = facts.shapes.at(value);
      const bool gate = op.kind == SpatialKind::kPointwise && IsImageGate(dims);  // Broadcast: read whole.
      const Region need = gate ? Region{.h = {0, 1}, .w = {0, 1}} : NeedOf(op, out);
      const Region read{.h = Clip(need.h, dims[2]), .w = Clip(need.w, dims[3])};
      geometry.empty_read |= read.h.size() <= 0 || read.w.size() <= 0;
      if (op.kind == SpatialKind::kWindow) {
        patch.pads[i] = {.h_begin = read.h.begin - need.h.begin, .w_begin = read.w.begin - need.w.begin,
                         .h_end = need.h.end - read.h.end, .w_end = need.w.end - read.w.end};
      } else if (op.kind == SpatialKind::kTransposedWindow) {
        SetTransposedPads(op, read, out, patch.pads[i]);
      }
      patch.reads[i][j] = read;
      if (j == 0) first_read = read;
      auto [it, inserted] = patch.produced.try_emplace(value, read);
      if (!inserted) it->second = HullOf(it->second, read);
    }
    if (op.kind == SpatialKind::kUpsample) {
      // The copy upsamples every row it reads: factor x the input region.
      patch.produced[node.output(0)] = {
          .h = {first_read.h.begin * op.up_h.factor, first_read.h.end * op.up_h.factor},
          .w = {first_read.w.begin * op.up_w.factor, first_read.w.end * op.up_w.factor}};
    }
    geometry.macs_after += MacsOf(facts, segment, i, out, first_read);
  }
  return patch;
}

}  // namespace

PatchGeometry GeometryOf(const GraphFacts& facts, const Segment& segment, const Grid& grid) {
  PatchGeometry geometry{.rows = grid.rows, .cols = grid.cols};
  for (size_t i = 0; i < segment.nodes.size(); ++i) {
    // A node recomputed still runs whole: its copies are all extra.
    const int index = segment.nodes[i];
    if (std::find(segment.recomputed.begin(), segment.recomputed.end(), index) != segment.recomputed.end()) continue;
    const onnx::NodeProto& node = facts.graph->node(index);
    const std::vector<int64_t>& dims = facts.shapes.at(node.output(0));
    Region whole_in;
    if (segment.ops[i].macs_per_input > 0) {
      const std::vector<int64_t>& in_dims = facts.shapes.at(node.input(0));
      whole_in = {.h = {0, in_dims[2]}, .w = {0, in_dims[3]}};
    }
    geometry.macs_before += MacsOf(facts, segment, i, {.h = {0, dims[2]}, .w = {0, dims[3]}}, whole_in);
  }
  const std::vector<int64_t>& out_dims = facts.shapes.at(segment.output);
  const int64_t height = out_dims[2];
  const int64_t width = out_dims[3];
  for (int64_t row = 0; row < grid.rows; ++row) {
    for (int64_t col = 0; col < grid.cols; ++col) {
      const Region output{.h = {row * height / grid.rows, (row + 1) * height / grid.rows},
                          .w = {col * width / grid.cols, (col + 1) * width / grid.cols}};
      PatchGeometry::Patch patch = PlanPatch(facts, segment, output, geometry);
      patch.row = row;
      patch.col = col;
      geometry.patches.push_back(std::move(patch));
    }
  }
  return geometry;
}

}  // namespace footprint::patching
