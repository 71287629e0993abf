#include "scheduler/dataflow_graph.h"

#include <utility>
#include <vector>

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
  std::vector<int> writer(num_values, -1);
  std::vector<int> reads(num_values + 1, 0);  // Reads of value v, then where its readers start.
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
      ++reads[v];
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
  // The nodes that read each value, back to back, in increasing order.
  int total = 0;
  for (int v = 0; v <= num_values; ++v) total += std::exchange(reads[v], total);
  std::vector<int> readers(total);
  std::vector<int> filled(reads.begin(), reads.end() - 1);
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes[n].inputs) readers[filled[v]++] = n;
  }
  // Per node: the last value it was found reading (actual) or listed as a
  // consumer of (listed), so that each set is counted without sorting.
  std::vector<int> actual_mark(num_nodes, -1);
  std::vector<int> listed_mark(num_nodes, -1);
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
    for (int c : value.consumers) {
      if (c < 0 || c >= num_nodes) {
        return absl::InvalidArgumentError(
            absl::StrCat("value ", v, " names consumer ", c, ", out of range"));
      }
    }
    int actual = 0;
    for (int i = reads[v]; i < reads[v + 1]; ++i) {
      if (actual_mark[readers[i]] != v) ++actual;
      actual_mark[readers[i]] = v;
    }
    int listed = 0;
    bool listed_all_read = true;
    for (int c : value.consumers) {
      if (listed_mark[c] != v) ++listed;
      listed_mark[c] = v;
      listed_all_read = listed_all_read && actual_mark[c] == v;
    }
    if (!listed_all_read || listed != actual) {
      return absl::InvalidArgumentError(absl::StrCat(
          "value ", v, "'s consumers disagree with the nodes that read it (",
          listed, " listed, ", actual, " read it)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace footprint::scheduler
