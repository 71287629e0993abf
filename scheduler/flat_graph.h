// A DataflowGraph's facts in a few flat arrays (internal to the scheduler).
//
// Why: the optimizer cuts a long model into hundreds of segments and builds a
// graph and a step model for each. A DataflowGraph holds a vector per node
// and per value; a FlatGraph holds each kind of list back to back, so that a
// segment costs a handful of allocations instead of a few per node.
#ifndef ONNX_FOOTPRINT_SCHEDULER_FLAT_GRAPH_H_
#define ONNX_FOOTPRINT_SCHEDULER_FLAT_GRAPH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler {

// Lists of ints for indices 0..size()-1, stored back to back.
class FlatLists {
 public:
  FlatLists() = default;
  // Empty lists with room for capacities[i] items in list i.
  explicit FlatLists(const std::vector<int>& capacities) { Reset(capacities); }

  // The same, reusing this object's memory.
  void Reset(const std::vector<int>& capacities) {
    Reset(static_cast<int>(capacities.size()), [&capacities](int i) { return capacities[i]; });
  }
  // With capacity_of(i) items of room in list i.
  template <typename CapacityOf>
  void Reset(int num_lists, CapacityOf capacity_of) {
    starts_.resize(num_lists);
    ends_.resize(num_lists);
    int total = 0;
    for (int i = 0; i < num_lists; ++i) {
      starts_[i] = ends_[i] = total;
      total += capacity_of(i);
    }
    items_.resize(total);
  }

  int size() const { return static_cast<int>(ends_.size()); }
  std::span<const int> operator[](int i) const {
    return {items_.data() + starts_[i], items_.data() + ends_[i]};
  }
  // Appends `item` to list i (within the room it was given).
  void Append(int i, int item) { items_[ends_[i]++] = item; }
  // Appends `item` unless it is already list i's last item: items added in
  // increasing order then make a sorted list without repeats.
  void AppendUnlessLast(int i, int item) {
    if (ends_[i] == starts_[i] || items_[ends_[i] - 1] != item) items_[ends_[i]++] = item;
  }

 private:
  std::vector<int> starts_;  // Where list i begins in items_.
  std::vector<int> ends_;    // One past its last item.
  std::vector<int> items_;   // All lists' items, with room left per list.
};

// The same graph as a DataflowGraph, but for the node names.
struct FlatGraph {
  FlatLists inputs;                   // Per node: values it reads, as listed (may repeat).
  FlatLists outputs;                  // Per node: values it writes.
  std::vector<int64_t> extra_bytes;   // Per node.
  std::vector<int64_t> bytes;         // Per value.
  std::vector<int> producer;          // Per value: its node, -1 for a graph input.
  FlatLists consumers;                // Per value: the nodes that read it (may repeat).
  std::vector<bool> is_graph_output;  // Per value.

  int num_nodes() const { return inputs.size(); }
  int num_values() const { return static_cast<int>(bytes.size()); }
};

FlatGraph Flatten(const DataflowGraph& graph);

// Node names are left empty.
DataflowGraph Unflatten(const FlatGraph& graph);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_FLAT_GRAPH_H_
