#include "scheduler/testing/graphs.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace footprint::scheduler::testing {
namespace {

// Builds a graph node by node; values are made by the nodes that write them.
class GraphBuilder {
 public:
  int Input(int64_t bytes) {
    graph_.values.push_back({.bytes = bytes});
    return static_cast<int>(graph_.values.size()) - 1;
  }
  // Adds a node reading `inputs` and writing one value per entry of `output_bytes`.
  std::vector<int> Add(std::string name, std::vector<int> inputs,
                       const std::vector<int64_t>& output_bytes, int64_t extra_bytes = 0) {
    Node node{.inputs = std::move(inputs), .extra_bytes = extra_bytes, .name = std::move(name)};
    for (int64_t bytes : output_bytes) {
      graph_.values.push_back({.bytes = bytes});
      node.outputs.push_back(static_cast<int>(graph_.values.size()) - 1);
    }
    graph_.nodes.push_back(std::move(node));
    return graph_.nodes.back().outputs;
  }
  int Add1(std::string name, std::vector<int> inputs, int64_t bytes) {
    return Add(std::move(name), std::move(inputs), {bytes})[0];
  }
  void MarkOutput(int value) { graph_.values[value].is_graph_output = true; }
  // Lists the nodes in `order` (indices into the nodes added so far).
  DataflowGraph Finish(const std::vector<int>* order = nullptr) {
    if (order != nullptr) {
      std::vector<Node> listed;
      for (int n : *order) listed.push_back(std::move(graph_.nodes[n]));
      graph_.nodes = std::move(listed);
    }
    ConnectValues(graph_);
    return std::move(graph_);
  }

 private:
  DataflowGraph graph_;
};

}  // namespace

DataflowGraph RandomDag(uint64_t seed, const RandomDagOptions& options) {
  std::mt19937_64 random(seed);
  auto uniform = [&random](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  auto size = [&]() -> int64_t {
    switch (uniform(0, 5)) {
      case 0: return 0;
      case 1: case 2: return uniform(1, options.max_bytes / 10 + 1);
      default: return uniform(1, options.max_bytes);
    }
  };
  GraphBuilder builder;
  std::vector<int> available;
  const int num_inputs = static_cast<int>(uniform(1, 3));
  for (int i = 0; i < num_inputs; ++i) available.push_back(builder.Input(size()));
  const int num_nodes = static_cast<int>(uniform(options.min_nodes, options.max_nodes));
  for (int n = 0; n < num_nodes; ++n) {
    std::vector<int> inputs;
    const int fan_in = uniform(0, 99) < options.no_input_percent
                           ? 0
                           : static_cast<int>(uniform(1, options.max_inputs));
    for (int i = 0; i < fan_in; ++i) {
      // Favour recent values so that the graphs have depth as well as width.
      const int64_t count = static_cast<int64_t>(available.size());
      const int64_t pick = uniform(0, 1) == 0 ? uniform(std::max<int64_t>(0, count - 3), count - 1)
                                              : uniform(0, count - 1);
      inputs.push_back(available[pick]);
    }
    // Now and then a node that writes nothing (its step still counts).
    std::vector<int64_t> outputs(uniform(0, 19) == 0 ? 0 : uniform(1, options.max_outputs));
    for (int64_t& bytes : outputs) bytes = size();
    const int64_t extra = uniform(0, 4) == 0 ? uniform(1, options.max_bytes) : 0;
    for (int v : builder.Add(absl::StrCat("n", n), inputs, outputs, extra)) available.push_back(v);
  }
  DataflowGraph graph = builder.Finish();
  // Some graph outputs: the last value, and a few others.
  graph.values.back().is_graph_output = true;
  for (Value& value : graph.values) {
    if (uniform(0, 7) == 0) value.is_graph_output = true;
  }
  if (options.shuffle_nodes) {
    std::vector<int> order(graph.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<Node> nodes;
    for (int n : order) nodes.push_back(std::move(graph.nodes[n]));
    graph.nodes = std::move(nodes);
    const std::vector<bool> outputs = [&] {
      std::vector<bool> flags;
      for (const Value& value : graph.values) flags.push_back(value.is_graph_output);
      return flags;
    }();
    ConnectValues(graph);
    for (size_t v = 0; v < graph.values.size(); ++v) graph.values[v].is_graph_output = outputs[v];
  }
  return graph;
}

DataflowGraph TransformerChain(int blocks, bool weights_first) {
  constexpr int64_t kTokens = 128;
  constexpr int64_t kHidden = 768;
  constexpr int64_t kFloat = 4;
  constexpr int64_t kActivation = kTokens * kHidden * kFloat;  // 384 KiB.
  constexpr int64_t kPerToken = kTokens * kFloat;
  constexpr int64_t kFeedForward = 4 * kActivation;
  constexpr int64_t kWeight = kHidden * 4 * kHidden * kFloat;
  GraphBuilder builder;
  int x = builder.Input(kActivation);
  std::vector<int> weights;  // Per block: two weight values.
  if (weights_first) {
    for (int b = 0; b < blocks; ++b) {
      for (int w = 0; w < 2; ++w) {
        weights.push_back(builder.Add1(absl::StrCat("block", b, "/weight", w), {}, kWeight));
      }
    }
  }
  auto weight = [&](int b, int w) {
    return weights_first ? std::vector<int>{weights[2 * b + w]} : std::vector<int>{};
  };
  auto with = [](std::vector<int> inputs, const std::vector<int>& more) {
    inputs.insert(inputs.end(), more.begin(), more.end());
    return inputs;
  };
  for (int b = 0; b < blocks; ++b) {
    const std::string p = absl::StrCat("block", b, "/");
    const int squared = builder.Add1(p + "norm/Mul", {x, x}, kActivation);
    const int mean = builder.Add1(p + "norm/ReduceMean", {squared}, kPerToken);
    const int rms = builder.Add1(p + "norm/Sqrt", {mean}, kPerToken);
    const int normalized = builder.Add1(p + "norm/Div", {x, rms}, kActivation);
    const int scaled = builder.Add1(p + "norm/Scale", {normalized}, kActivation);
    const int up = builder.Add1(p + "mlp/MatMul1", with({scaled}, weight(b, 0)), kFeedForward);
    const int activated = builder.Add1(p + "mlp/Gelu", {up}, kFeedForward);
    const int down = builder.Add1(p + "mlp/MatMul2", with({activated}, weight(b, 1)), kActivation);
    x = builder.Add1(p + "Add", {down, x}, kActivation);
  }
  builder.MarkOutput(x);
  return builder.Finish();
}

DataflowGraph InceptionChain(int modules) {
  constexpr int64_t kPixels = 28 * 28 * 4;  // Bytes per float32 channel.
  GraphBuilder builder;
  int x = builder.Input(256 * kPixels);
  std::vector<int> order;
  for (int m = 0; m < modules; ++m) {
    const std::string p = absl::StrCat("mixed", m, "/");
    const int first = static_cast<int>(order.size());
    // Level 0.
    const int b1 = builder.Add1(p + "b1/conv1x1", {x}, 64 * kPixels);
    const int b2 = builder.Add1(p + "b2/conv1x1", {x}, 96 * kPixels);
    const int b3 = builder.Add1(p + "b3/conv1x1", {x}, 16 * kPixels);
    const int b4 = builder.Add1(p + "b4/maxpool", {x}, 256 * kPixels);
    // Level 1.
    const int b1r = builder.Add1(p + "b1/relu", {b1}, 64 * kPixels);
    const int b2r = builder.Add1(p + "b2/relu", {b2}, 96 * kPixels);
    const int b3r = builder.Add1(p + "b3/relu", {b3}, 16 * kPixels);
    const int b4c = builder.Add1(p + "b4/conv1x1", {b4}, 32 * kPixels);
    // Level 2.
    const int b2c = builder.Add1(p + "b2/conv3x3", {b2r}, 128 * kPixels);
    const int b3c = builder.Add1(p + "b3/conv5x5", {b3r}, 32 * kPixels);
    const int b4r = builder.Add1(p + "b4/relu", {b4c}, 32 * kPixels);
    // Level 3.
    const int b2o = builder.Add1(p + "b2/relu2", {b2c}, 128 * kPixels);
    const int b3o = builder.Add1(p + "b3/relu2", {b3c}, 32 * kPixels);
    // Level 4.
    x = builder.Add1(p + "concat", {b1r, b2o, b3o, b4r}, 256 * kPixels);
    for (int i = 0; i < 14; ++i) order.push_back(first + i);
  }
  builder.MarkOutput(x);
  return builder.Finish(&order);
}

DataflowGraph ParallelTowers(int towers, int depth) {
  constexpr int64_t kPixels = 14 * 14 * 4;
  GraphBuilder builder;
  const int input = builder.Input(64 * kPixels);
  std::vector<int> tips(towers, input);
  std::vector<std::vector<int>> levels(depth);
  std::vector<int> order;
  int added = 0;
  for (int t = 0; t < towers; ++t) {
    for (int d = 0; d < depth; ++d) {
      // Widths vary along and across towers: wide early layers, narrow ends.
      const int64_t channels = 16 + ((t * 7 + d * 13) % 8) * 16 + (d < depth / 4 ? 128 : 0);
      tips[t] = builder.Add1(absl::StrCat("tower", t, "/", d % 2 ? "relu" : "conv", d),
                             {tips[t]}, channels * kPixels);
      levels[d].push_back(added++);
    }
  }
  // Each tower ends in a global pooling to a small vector, so that the join
  // is cheap and the peak depends on how the towers are interleaved.
  std::vector<int> pools;
  for (int t = 0; t < towers; ++t) {
    tips[t] = builder.Add1(absl::StrCat("tower", t, "/pool"), {tips[t]}, 32 * 4);
    pools.push_back(added++);
  }
  levels.push_back(pools);
  for (const std::vector<int>& level : levels) order.insert(order.end(), level.begin(), level.end());
  const int joined = builder.Add1("concat", tips, towers * 32 * 4);
  order.push_back(added);
  builder.MarkOutput(joined);
  return builder.Finish(&order);
}

}  // namespace footprint::scheduler::testing
