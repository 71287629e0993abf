// A weight's DequantizeLinear under ORT's CPU provider: not folded at load,
// run at every run, in ORT's order.
//
// ConstantFolding runs with skip_dequantize_linear while the QDQ rules are on
// (core/optimizer/graph_transformer_utils.cc, Level1; constant_folding.cc):
// a DequantizeLinear of a weight is never folded. Probe: a Conv whose weight
// is DequantizeLinear(int8 initializer) keeps the DequantizeLinear in ORT's
// optimized model, and its float output is allocated at every run. The
// analysis folded it: it becomes a node again, and the graph's nodes take
// ORT's order (GraphViewer's default: Graph::ReverseDFSFrom the leaves with
// NodeCompare, each node emitted after its inputs' producers, the producer of
// highest index explored first; the runtime figures replay the nodes in this
// order), so that each float weight is live from where ORT runs its
// DequantizeLinear: just before its reader when the reader's data input comes
// from a node of higher index, well before it (with the upstream of that
// input still to run) when the DequantizeLinear's index is the higher one.
// Probes: a chain of 1, 4 and 8 Convs 1x1 256 -> 256 on 1x256x4x4, each
// after its weight's DequantizeLinear in the file, peaks at 297,440,
// 1,084,760 and 2,134,856 bytes: every float weight (262,144 bytes) is live
// at the first Conv. The int8 QDQ copy of light_inception_v1, whose float
// Gemm's weight (4.1 MB) is dequantized after its input's producer in the
// file, peaks at 14.6 MB (10.5 MB in this order before this rule); ORT's
// level-2 dumps of the int8 copies (renumbered, each weight's
// DequantizeLinear just before its Conv): light_resnet50 31.3 MB against
// 13.6 MB for the copy itself (weights dequantized first in the file).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNFOLDED_WEIGHTS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNFOLDED_WEIGHTS_H_

#include "analyzer/loader/graph_ir.h"

namespace footprint::ort {

// Each folded DequantizeLinear output a node still reads becomes that node's
// output again (a new node in graph.nodes), and the graph takes ORT's order.
void UnfoldDequantizedWeights(IrGraph& graph);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_UNFOLDED_WEIGHTS_H_
