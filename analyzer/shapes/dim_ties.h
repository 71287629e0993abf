// The dims a model ties together: `fit` moves them with the dim it searches
// (dim_conflicts.cc, beside the --dim-default conflict check that finds the
// same equalities once they clash).
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_DIM_TIES_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_DIM_TIES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "onnx/onnx_pb.h"

namespace footprint::symbolic {

// A dim the model ties to others: at a node of the main graph that needs
// two dims equal (broadcasting operands, Expand's target, MatMul's inner
// dims, the total length com.microsoft's Attention, MultiHeadAttention and
// GroupQueryAttention attend over against past + sequence), one side is the single symbol `dim` and the other `equals`, a
// formula without it ("total_sequence_length" = "past_sequence_length +
// sequence_length"), or 0 when the two sides differ by that symbol alone
// (seq = past + seq: past = 0), read from the engine's run on the unbound
// model. The first tie of each dim, in node order.
struct DimTie {
  std::string dim;  // The single symbol.
  Expr equals;      // What it must equal.
};
std::vector<DimTie> FindDimTies(const onnx::ModelProto& model, const ShapeTables& tables);

// At a node of `graph` whose dims clash once the input symbols take
// `values` (the user's bindings), read from the engine's run on the unbound
// model: the first pair of dims broadcasting needs equal, as formulas; and
// when one symbol decides them, the values of it (up to 4x its bound one)
// at which they and every other equality of the graph whose formulas the
// engine knows hold: candidates, since a dim computed after a clash has no
// formula (the caller checks them).
struct DimClash {
  Expr a, b;                          // The two dims, as formulas.
  int64_t a_value = 0, b_value = 0;   // At `values`.
  std::string symbol;                 // The one symbol they depend on, or "".
  std::vector<int64_t> agreeing;      // Ascending.
  std::optional<int64_t> multiple;    // The agreeing values are exactly its multiples (> 1) up to 4x the bound one.
};
std::optional<DimClash> FindDimClash(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                                     const GraphShapes& unbound, const SymbolValues& values);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_DIM_TIES_H_
