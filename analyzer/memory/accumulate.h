// The accumulate mode (on by default beyond the baseline; --no-accumulate):
// a Conv whose only reader is an Add of a same-shape residual writes the sum
// itself, conv(x) + residual, as its output epilogue, so the Conv's own
// output never exists.
//
// Why a mode: a residual block's last Conv and its Add hold three large
// tensors at once (the residual, the Conv's output, the sum) where a kernel
// that adds the residual as it writes needs two, or one and the residual's
// bytes when the residual dies there (with the in-place mode). ONNX
// Runtime (conv_add_act_fusion.cc, NCHWc's Conv + Sum), oneDNN (the sum
// post-op) and TensorRT fuse it; the baseline, as the spec, keeps every
// node's output. On light_resnet50 (Conv, BatchNormalization, Sum) it takes
// the default arena from 7.2 MB to 5.2 MB, below ORT's measured 5.8 MB.
//
// Rules, on the graph view before the schedule (main graph only, and not
// under --runtime, whose own fusions apply instead):
// - the head is a Conv of the default domain with one output, read by one
//   node only and not a graph output;
// - that node may be a BatchNormalization at inference whose statistics are
//   weights (runtimes fold it into the Conv's filter and bias), read in turn
//   by one node only;
// - the next is an Add, or a Sum of two inputs, whose other input is a
//   different value with the Conv output's element type and dims, and
//   whose output has them too (no broadcast either way; every dim known);
// - the Conv takes the Add's other input (and the statistics) and writes its
//   output; the Conv's own output (and the BatchNormalization's) become
//   ValueOrigin::kFusedAway. The in-place mode may then
//   write the sum over the residual when the residual dies there.
// What it does not do: MatMul/Gemm + Add (a Gemm's C input does this in
// BLAS, but the runtimes we measured keep the tensor), chains through an
// activation (Conv + Add + Relu keeps the Relu as its own node).
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_ACCUMULATE_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_ACCUMULATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint {

// What the accumulate mode did to one graph.
struct AccumulatedAdds {
  int64_t fused_nodes = 0;                 // Adds a Conv took over (with the BatchNormalizations between).
  std::vector<std::string> fused_tensors;  // The Conv (and BatchNormalization) outputs that no longer exist.
  // Indexed like IrGraph::values (empty when nothing fused): the residual a
  // fused Conv's output may be written over, or -1 (GraphRewrite::writes_over's sense).
  std::vector<ValueId> writes_over;
};

// Applies the rules above to `graph` in place; `shape_of` gives each value's
// element type and dims (no rule applies where it does not know them).
AccumulatedAdds AccumulateResidualAdds(const ShapeLookup& shape_of, IrGraph& graph);

// True when some Conv's output is read by an Add or Sum: only then does the
// mode need shapes (so that other graphs need not wait for them).
bool MayAccumulate(const IrGraph& graph);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_ACCUMULATE_H_
