// What a float model would need quantized to int8 or converted to fp16: the
// spec's "what-if dtype" ("Quantized graphs"), as a rewritten copy of the
// model that the same analysis (shapes, schedule, modes, planner, tiers)
// then plans: tensors are re-sized at their new dtype and re-planned, never
// a total scaled.
//
// Usage:
//   absl::StatusOr<DtypeWhatIf> int8 = MakeDtypeWhatIf(loaded, given_analysis, WhatIfDtype::kInt8);
//   absl::StatusOr<Analysis> figures = AnalyzeModel(int8->model, options);
//
// The rewrite of the main graph, node by node in file order, as the qdq
// mode would read a quantized copy (quantization.h says which op is which):
// - a quantized op reads and writes the low-precision tensors: its float
//   activation inputs go through a QuantizeLinear (int8) or a Cast (fp16)
//   first, one per value, placed before its first such reader; its float
//   weights (QuantizedWeightsOf) become 1 or 2 bytes per element, and for
//   int8 each gets float32 scales and int8 zero points (per output channel,
//   or one of each), as new weights; int8 keeps the biases of Conv,
//   ConvTranspose and Gemm at 4 bytes (int32, with a float32 scale and an
//   int32 zero point per element), as quantize_static writes them;
// - a data-movement op keeps its input's dtype;
// - an op int8 runtimes keep in float reads a DequantizeLinear (or Cast) of
//   a low-precision input, and writes float;
// - Q/DQ at the graph's edges, as quantizers write QDQ models (and as the
//   fp16 converters keep float inputs and outputs): a float graph input
//   stays float and is quantized at its first quantized reader; a graph
//   output that a quantized op writes is dequantized to float after it;
// - int8 only: a float32 scale and an int8 zero point per quantized
//   activation tensor (what a QDQ model stores), as one weight of each.
// The Q/DQ nodes are com.microsoft's (any opset); the graph's shapes are
// unchanged, only dtypes move. Bodies of If/Loop/Scan stay as they are.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_DTYPE_WHAT_IF_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_DTYPE_WHAT_IF_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"

namespace footprint {

enum class WhatIfDtype { kInt8, kFp16 };
const char* WhatIfDtypeName(WhatIfDtype dtype);  // "int8", "fp16".

struct DtypeWhatIf {
  LoadedModel model;                          // The rewritten copy (its path the original's).
  int64_t quantized_nodes = 0;                // Nodes that run on the low-precision tensors.
  int64_t converted_weights = 0;              // Float weights stored at the new dtype.
  int64_t boundary_nodes = 0;                 // QuantizeLinear/DequantizeLinear (or Casts) added.
  std::map<std::string, int64_t> float_ops;   // Ops that stay float (reading or writing float) -> nodes.
};

// The rewritten model. `given` is the analysis of `loaded` as the user asked
// for it: it names every value's dtype. FailedPrecondition when the main
// graph has no float32 tensor that a quantized op reads (nothing to convert).
absl::StatusOr<DtypeWhatIf> MakeDtypeWhatIf(const LoadedModel& loaded, const Analysis& given, WhatIfDtype dtype);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_DTYPE_WHAT_IF_H_
