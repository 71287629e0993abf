// Internal to the shape functions in ops/: the helpers several op families
// share, on top of the ones op_context.h gives the engine too.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_OP_HELPERS_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_OP_HELPERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/shape_engine.h"

namespace footprint::symbolic {

// What a shape function fills: one value per node output.
using Outputs = std::vector<SymValue>;

// One domain's shape functions by op type.
using ShapeFunctionTable = absl::flat_hash_map<std::string, ShapeFunction>;

// The function `table` has for `op_type`, or nullptr.
const ShapeFunction* FindInTable(const ShapeFunctionTable& table, const std::string& op_type);

// True for a tensor, of known rank or not.
bool Known(const SymValue* v);
// True for a tensor of known rank.
bool Ranked(const SymValue* v);
// The elements of a value as expressions: ints, or floats that are whole numbers.
std::optional<std::vector<Expr>> IntValues(const SymValue* v);
// Keeps a value's elements only when small and row-major consistent with its shape.
void SetInts(SymValue& v, std::vector<Expr> values);
// The product of `dims`, or nullopt when a dim is negative or it overflows:
// dims come from the model file, and may be anything.
std::optional<int64_t> CheckedElementCount(const std::vector<int64_t>& dims);
// For each element of `out`, the flat index into a tensor of shape `in` broadcast to it.
std::optional<std::vector<int64_t>> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

// The shape of `parts` (all ranked) joined along `axis` (as the attribute
// says it, possibly negative): the first part's dims with the axis dim summed
// over every part. nullopt when there are no parts, the axis is out of range
// or the ranks differ.
struct Concatenation {
  std::vector<Expr> shape;  // The joined shape.
  int64_t axis = 0;         // The axis, normalized.
};
std::optional<Concatenation> ConcatenatedShape(const std::vector<const SymValue*>& parts, int64_t axis);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_OPS_OP_HELPERS_H_
