// From the engine's values to the analysis' sizes: a byte count when every
// dim is known, else the reason, and the size as a formula when the dims are
// symbols the user left unbound.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_SIZING_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_SIZING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"

namespace footprint::symbolic {

struct SymbolicSize {
  SizedType sized;  // bytes set when every dim is a number.
  Expr bytes;       // The byte size as a formula (Unknown when a dim or the type is unknown).
};

// Errors only on overflow of a concrete size; a negative computed dim is
// unsized with its reason (inconsistent bindings), not an error.
absl::StatusOr<SymbolicSize> SizeOfSymValue(const SymValue& value);

// The aligned size of `bytes`: ceil(bytes / alignment) * alignment.
Expr AlignedExpr(const Expr& bytes, int64_t alignment);

// max over `sums` as one expression, after dropping every sum that another
// one dominates (their difference is provably >= 0, dims being >= 1). Unknown when
// more than `max_terms` remain or any sum is Unknown.
Expr MaxOfSums(const std::vector<Expr>& sums, size_t max_terms = 8);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_SIZING_H_
