// Our own shape inference: every value's dims as expressions over the input
// dims, with the values of small integer tensors carried along (data
// propagation), so that Reshape, Expand, ConstantOfShape, Resize, Range...
// get their shapes from computed shape tensors.
//
// Why on top of ONNX's: ONNX 1.12 stops at the first output it cannot size
// (a Reshape to a computed shape, a com.microsoft op, an If) and everything
// downstream stays unsized. Here:
// - Nodes are visited once, in topological order (linear in nodes).
// - Our own shape functions cover the shape ops (with data propagation), the
//   com.microsoft ops of exported transformers, sequences and If/Loop/Scan
//   (bodies inferred recursively, nested to any depth).
// - Every other op of the default domains goes to ONNX's own per-node shape
//   function, fed with our input shapes (symbolic dims passed as their
//   printed expression) and our known input values.
// - What ONNX's whole-model pass found fills any dim still unknown.
// - A value that stays unknown keeps the reason (op without a shape
//   function, data-dependent output such as NonZero's, ...).
// - Symbols: the inputs' dim_params (parsed, so "past + 1" is a formula),
//   "<input>_dim<k>" for an input dim without a name, "<loop>.trip_count"
//   for a Loop whose trip count is not known; --dim binds all of them.
// - A formula we derived stands against a number the model declares for
//   the same dim (exports carry shapes traced at one size); a number beats
//   an unknown dim or one of our made-up symbols.
// - A node whose exact input shapes it cannot take (known dims that do not
//   broadcast, a rank ONNX's check of the op refuses) makes its graph one
//   that cannot run (ShapeTables::contradictions); an undecided If with one
//   such branch takes the other (IfDecision::ruled_out).
// - FOOTPRINT_SHAPES_TRACE=1 prints every node's outputs to stderr.
// Not guaranteed: ops whose output shape depends on input values we do not
// know stay unsized (--tensor-shape gives them); loop-carried values whose
// shape changes each iteration are unsized inside the body; an If whose
// condition is not known and whose branches differ takes the larger branch's
// shape (by element count; per dim when symbolic): an upper bound, marked
// max_over_branches, with a warning naming what would decide it; a Slice
// whose starts or ends are not known keeps its input's extent on the axes
// it slices (it never yields more): an upper bound, marked extent_bound, and
// an If whose condition is computed from such a bound stays undecided.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analyzer/shapes/expr.h"
#include "onnx/onnx_pb.h"

namespace footprint::symbolic {

// Small integer tensors (shapes, indices, axes) keep their values up to this
// many elements.
inline constexpr int64_t kMaxPropagatedElements = 1024;
// Float values matter to shapes only as Resize scales and roi or float
// arithmetic on a shape (rank-many elements); biases and norm weights (tens
// to thousands of floats, in every block of a model) are not decoded.
inline constexpr int64_t kMaxPropagatedFloats = 16;

// What the engine knows of one value.
struct SymValue {
  enum class Kind { kUnknown, kTensor, kSequence, kOther };
  Kind kind = Kind::kUnknown;              // kOther: map or optional (never sized).
  int32_t elem_type = 0;                   // TensorProto.DataType (of the elements for a sequence).
  std::optional<std::vector<Expr>> shape;  // Rank known; a dim may be Expr::Unknown().
  std::optional<std::vector<Expr>> ints;   // Integer/bool values, row-major, when all known.
  std::optional<std::vector<double>> floats;  // Float values, row-major, when all known.
  std::vector<SymValue> elements;          // kSequence: the elements, when `elements_known`.
  bool elements_known = false;             // kSequence: elements is the whole sequence.
  std::string reason;                      // Why the shape (or a dim) is unknown.
  bool max_over_branches = false;          // An If output whose branches differ (the larger one's), or a value computed from one.
  bool extent_bound = false;               // A Slice whose ends are not known, sized at its input's extent, or a value computed from one.
  bool contradiction = false;              // The node cannot run with these shapes (two known dims clash, a rank the op refuses): `reason` says why.

  bool HasFullShape() const;                  // Rank known and every dim known.
  bool HasConcreteShape() const;              // Every dim a constant.
  std::optional<std::vector<int64_t>> ConcreteShape() const;  // Every dim a constant.
};

// The bytes of a value as an expression: ceil(elements x bits / 8) for a
// tensor, the sum of its elements for a sequence whose elements are known.
// Unknown when a dim or the element type is unknown.
Expr BytesOf(const SymValue& value);

// Everything the engine found in one graph (the main graph or a body).
// Every value of the graph by name (the names are the model's own strings).
// The values sit in one vector in the order they were met and the index
// maps a name to its position: filling and reading 40,000 values then stays
// in cache, where a hash map holding the values themselves scattered them
// over megabytes.
struct GraphShapes {
  std::vector<SymValue> values;                           // In the order met.
  absl::flat_hash_map<absl::string_view, int32_t> index;  // Name -> position in `values`.

  const SymValue* Find(absl::string_view name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &values[it->second];
  }
  // Adds the value, or replaces the one of that name.
  void Set(absl::string_view name, SymValue value);
};

// Which branch an If takes, as far as the values known before running say.
struct IfDecision {
  std::string node;        // The If node's name (its first output's when unnamed).
  std::string branch;      // "then", "else", or "undecided" (both analyzed).
  std::string decided_by;  // Undecided: the bindings that would decide it ("--input-value sr=..."), or "".
  std::string bound_branch;  // Undecided with outputs that differ: "then" or "else", whose values they take on ties.
  std::string ruled_out;   // Taken because the other branch cannot run with these shapes: "else: " + its Contradiction's line, or "".
  const onnx::NodeProto* proto = nullptr;  // The If node itself, in the model's own graphs.
};

// A node that cannot run with the shapes it gets.
struct Contradiction {
  const onnx::NodeProto* node = nullptr;  // In the model's own graphs (a body's for a branch's node).
  std::string line;                       // "Add 'x': dims 31 and 32 do not broadcast (...)".
};

struct ShapeTables {
  // Keyed by the model's own graphs; node-based, so a graph's entry stays put while its bodies are added.
  std::unordered_map<const onnx::GraphProto*, GraphShapes> graphs;
  std::vector<std::string> warnings;  // Summaries (ops without a shape function, ...).
  int64_t onnx_fallback_nodes = 0;    // Nodes sized by ONNX's per-node shape functions.
  std::vector<std::string> unused_symbol_values;  // Names in symbol_values no made-up symbol has.
  std::vector<IfDecision> if_decisions;  // Every If (bodies' too), in the order first met.
  // Per graph, the first node that cannot run with these shapes; a taken
  // branch's counts for the graph around it. Only exact shapes count: a
  // bound (an undecided If's larger branch, a Slice's extent) never contradicts.
  std::unordered_map<const onnx::GraphProto*, Contradiction> contradictions;
};

// Runs the engine on `model` after ONNX's whole-model inference (its
// value_info is one source). The tables point into `model`, which must
// outlive them and stay unchanged.
// `tensor_shapes` (--tensor-shape NAME=DIMS) gives the shapes of values no
// shape function can know (a decoded image, NonZero's output), in any graph;
// a name that no node writes is an InvalidArgument error.
// `symbol_values` binds the symbols the engine makes up itself (a Loop's
// trip count "<node>.trip_count" when it is not known); the tables' unused_symbol_values
// lists the names it did not use.
using TensorShapes = std::map<std::string, std::vector<int64_t>>;
// `onnx_fallback`: ops without a shape function of ours go to ONNX's
// per-node shape function. Those can crash on odd models (ONNX 1.12 indexes
// attributes unchecked); the analysis tries them in a child process first
// (NeedsOnnxFallback, isolated_call.h) and turns this off when they crash.
// `input_values` (--input-value, ParseInputValues) are main-graph inputs
// whose values are known: they propagate like a Constant's.
using InputValues = std::map<std::string, SymValue>;
absl::StatusOr<ShapeTables> InferSymbolicShapes(const onnx::ModelProto& model, const TensorShapes& tensor_shapes = {},
                                                const SymbolValues& symbol_values = {}, bool onnx_fallback = true,
                                                const InputValues& input_values = {});

// True when some node (bodies included) of the default or com.microsoft
// domain has no shape function of ours, so that InferSymbolicShapes may call
// ONNX's.
bool NeedsOnnxFallback(const onnx::ModelProto& model);

// The user's bindings of graph inputs, applied to the model before any
// inference: --input-shape INPUT=1x3x224x224 (a whole input) and
// --dim-default N (every dim of a graph input still unbound, named or not).
// Errors name the input: unknown input, rank mismatch, a fixed dim that
// differs.
// --input-value NAME=V also fixes that input's shape (its values' count).
struct InputBindings {
  std::map<std::string, std::vector<int64_t>> input_shapes;  // --input-shape.
  std::optional<int64_t> dim_default;                        // --dim-default.
  std::map<std::string, std::string> input_values;           // --input-value NAME=V, V as typed ("1,2,3").
};
absl::Status ApplyInputBindings(const InputBindings& bindings, onnx::ModelProto& model);

// --input-value NAME=V: V is one value ("16000", "1", "true", "0.5") or a
// comma-separated list ("1,2,3"), read as the input's element type (an
// integer, float or bool type). One value fits a scalar input, a list a 1-D
// one (its length must match a fixed dim). Errors name the input: none of
// that name, a type or rank that does not fit, a value that is not of the
// type.
absl::StatusOr<InputValues> ParseInputValues(const std::map<std::string, std::string>& texts,
                                             const onnx::ModelProto& model);

// With --dim-default N, two dims a node needs equal may differ (a total
// length that must be past + sequence, bound to N = N + N): the first such
// node of the main graph, as one line naming both dims as formulas and a
// consistent binding ("--dim past_sequence_length=0 or --dim
// total_sequence_length=16"). `unbound` is the engine's run on the model
// without --dim-default (same nodes), `bound` the one with it.
std::optional<std::string> FindDimDefaultConflict(const onnx::ModelProto& bound_model, const ShapeTables& bound,
                                                  const onnx::ModelProto& unbound_model, const ShapeTables& unbound,
                                                  int64_t dim_default);

// "1x3x224x224" -> {1, 3, 224, 224}; "scalar" -> {}.
std::optional<std::vector<int64_t>> ParseShapeText(const std::string& text);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_H_
