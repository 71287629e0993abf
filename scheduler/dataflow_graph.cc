#include "scheduler/dataflow_graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace footprint::scheduler {

void ConnectValues(DataflowGraph& graph) {
  for (Value& value : graph.values) {
    value.producer = -1;
    value.consumers.clear();
  }
  for (int n = 0; n < static_cast<int>(graph.nodes.size()); ++n) {
    for (int v : graph.nodes[n].inputs) graph.values[v].consumers.push_back(n);
    for (int v : graph.nodes[n].outputs) graph.values[v].producer = n;
  }
}

std::string DescribeNode(const DataflowGraph& graph, int node) {
  if (node >= 0 && node < static_cast<int>(graph.nodes.size()) &&
      !graph.nodes[node].name.empty()) {
    return absl::StrCat("'", graph.nodes[node].name, "' (node ", node, ")");
  }
  return absl::StrCat("node ", node);
}

absl::Status ValidateGraph(const DataflowGraph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const int num_values = static_cast<int>(graph.values.size());
  // Distinct (value, node) read pairs as the nodes state them.
  std::vector<std::vector<int>> readers(num_values);
  std::vector<int> writer(num_values, -1);
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes[n];
    if (node.extra_bytes < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeNode(graph, n), " has negative extra_bytes ", node.extra_bytes));
    }
    for (int v : node.inputs) {
      if (v < 0 || v >= num_values) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeNode(graph, n), " reads value ", v, ", out of range"));
      }
      readers[v].push_back(n);
    }
    for (int v : node.outputs) {
      if (v < 0 || v >= num_values) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeNode(graph, n), " writes value ", v, ", out of range"));
      }
      if (writer[v] != -1) {
        return absl::InvalidArgumentError(absl::StrCat("value ", v, " is written by both ",
                                                       DescribeNode(graph, writer[v]), " and ",
                                                       DescribeNode(graph, n)));
      }
      writer[v] = n;
    }
  }
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    if (value.bytes < 0) {
      return absl::InvalidArgumentError(absl::StrCat("value ", v, " has negative size ", value.bytes));
    }
    if (value.producer != writer[v]) {
      return absl::InvalidArgumentError(
          absl::StrCat("value ", v, " names producer ", value.producer, " but is written by ",
                       writer[v] == -1 ? "no node" : DescribeNode(graph, writer[v])));
    }
    std::vector<int> listed = value.consumers;
    for (int c : listed) {
      if (c < 0 || c >= num_nodes) {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", v, " names consumer ", c, ", out of range"));
      }
    }
    std::sort(listed.begin(), listed.end());
    listed.erase(std::unique(listed.begin(), listed.end()), listed.end());
    std::vector<int>& actual = readers[v];
    std::sort(actual.begin(), actual.end());
    actual.erase(std::unique(actual.begin(), actual.end()), actual.end());
    if (listed != actual) {
      return absl::InvalidArgumentError(absl::StrCat(
          "value ", v, "'s consumers disagree with the nodes that read it (",
          listed.size(), " listed, ", actual.size(), " read it)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace footprint::scheduler
