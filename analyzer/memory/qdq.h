// The qdq mode (on by default beyond the baseline; --no-qdq), as the spec's
// "Quantized graphs" defines it: a group DequantizeLinear(s) -> one op ->
// QuantizeLinear, where the op has a quantized form (quantization.h), is
// that quantized op. It reads the DequantizeLinear inputs (the quantized
// tensors, or the quantized weights) and writes the QuantizeLinear output;
// the float tensors inside the group (the DequantizeLinear outputs and the
// op's float output) never exist.
//
// Why a mode: a QDQ model (ORT's quantize_static, TensorRT's and vendors'
// quantizers) spells each int8 op as float between Q/DQ pairs; no int8
// runtime creates those float tensors, so the baseline's figure for a QDQ
// model is that of the float model.
//
// Rules, on the graph view before constant folding (main graph only, and
// not under --runtime, whose own rules apply instead):
// - the op is of the default domain, kQuantized or kDataMovement in
//   quantization.h, has one output, read by one QuantizeLinear only and not
//   a graph output;
// - its data inputs (all of them; input 0 only for data movement, Resize,
//   Upsample and Clip, whose other inputs are shapes, scales or bounds) are
//   DequantizeLinear outputs or weights, at least one a DequantizeLinear's;
// - the op reads each DequantizeLinear's input in place of its output and
//   writes the QuantizeLinear's output; the QuantizeLinear goes, and so does
//   each DequantizeLinear left with no reader (its output becomes
//   ValueOrigin::kFusedAway). A DequantizeLinear of a weight that only
//   groups read thus goes with it: the weight stays quantized. One read by
//   another op too stays, and constant folding makes its float copy.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_QDQ_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_QDQ_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"

namespace footprint {

// What the qdq mode did to one graph.
struct QdqGroups {
  int64_t groups = 0;                      // Ops that became their quantized form.
  std::vector<std::string> fused_tensors;  // The float tensors that no longer exist.
};

// Applies the rules above to `graph` in place.
QdqGroups FuseQdqGroups(IrGraph& graph);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_QDQ_H_
