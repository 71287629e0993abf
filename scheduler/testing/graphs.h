// Dataflow graphs for the scheduler's tests and benchmarks: random DAGs and
// the shapes of real models, built in C++ with realistic tensor sizes.
#ifndef ONNX_FOOTPRINT_SCHEDULER_TESTING_GRAPHS_H_
#define ONNX_FOOTPRINT_SCHEDULER_TESTING_GRAPHS_H_

#include <cstdint>
#include <vector>

#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler::testing {

struct RandomDagOptions {
  int min_nodes = 8;          // Node count is drawn from [min_nodes, max_nodes].
  int max_nodes = 14;
  int max_inputs = 3;         // Values a node reads (1..max_inputs, may repeat).
  int max_outputs = 2;        // Values a node writes (1..max_outputs).
  int64_t max_bytes = 1000;   // Sizes are drawn from [0, max_bytes], small ones more often.
  bool shuffle_nodes = true;  // List the nodes in a random order (not topological).
  int no_input_percent = 10;  // Nodes that read nothing (like ConstantOfShape).
};

// A random DAG with 1-3 graph inputs, random fan-in and fan-out, some values
// nobody reads, some nodes that write nothing, some graph outputs and some
// extra_bytes. Deterministic per seed.
DataflowGraph RandomDag(uint64_t seed, const RandomDagOptions& options = {});

// A transformer-like chain of `blocks` blocks of 9 nodes each (RMS
// normalization as Mul, ReduceMean, Sqrt, Div, Mul; MatMul; Gelu; MatMul;
// residual Add), hidden size 768 over 128 tokens in float32.
// With weights_first, each MatMul also reads a weight made by a node that
// reads nothing (like ConstantOfShape in ONNX's "light" test models), and all
// those nodes are listed first: 11 nodes per block.
DataflowGraph TransformerChain(int blocks, bool weights_first = false);

// `modules` inception modules of 14 nodes each (four branches of 1x1, 3x3, 5x5
// convolutions and a pooling, then a Concat) on 28x28x256 float32 maps. The
// nodes are listed level by level across the branches, as exporters that sort
// breadth-first do.
DataflowGraph InceptionChain(int modules);

// `towers` independent chains of `depth` Conv/Relu nodes of varying widths and
// a global pooling, read from one input and joined by a single Concat: no
// chokepoint inside, towers x (depth + 1) + 1 nodes.
// Listed round-robin across towers (one level at a time).
DataflowGraph ParallelTowers(int towers, int depth);

}  // namespace footprint::scheduler::testing

#endif  // ONNX_FOOTPRINT_SCHEDULER_TESTING_GRAPHS_H_
