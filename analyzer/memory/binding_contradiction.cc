// BindingContradiction (model_stages.h): a binding that makes the model
// contradict itself is bad input, named with the node and the dims.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/memory/model_stages.h"
#include "analyzer/shapes/dim_ties.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"

namespace footprint {
namespace {

// The payload that marks a contradicting binding's error (IsContradictingBinding).
constexpr char kContradictionPayload[] = "onnx-footprint/contradicting-binding";

// With --dim-default: the line that says which dims the model ties together
// (a total length = past + sequence) when the default contradicts them,
// from the formulas of a run without it; nullopt when none.
std::optional<std::string> DimDefaultConflict(const BoundInputs& inputs, const symbolic::ShapeTables& shapes,
                                              const AnalyzeOptions& options, bool onnx_fallback) {
  if (!options.dim_default.has_value()) return std::nullopt;
  onnx::ModelProto unbound_model = *inputs.source;
  if (!BindDims(inputs.input_dims, unbound_model).ok() ||
      !symbolic::ApplyInputBindings({.input_shapes = options.input_shapes, .input_values = options.input_values},
                                    unbound_model)
           .ok()) {
    return std::nullopt;
  }
  absl::StatusOr<symbolic::ShapeTables> unbound = absl::UnknownError("not run");
  try {
    unbound = symbolic::InferSymbolicShapes(unbound_model, options.tensor_shapes, inputs.engine_dims, onnx_fallback,
                                            inputs.input_values);
  } catch (const std::exception& error) {  // ONNX's per-node functions throw.
    unbound = absl::InternalError(error.what());
  }
  if (!unbound.ok()) return std::nullopt;
  return symbolic::FindDimDefaultConflict(inputs.model(), shapes, unbound_model, *unbound, *options.dim_default);
}

// The flag that set each symbol of the main graph's inputs, and its value:
// read from the unbound run's input dims (a symbol) against the bound
// model's (a number).
struct SymbolBindings {
  symbolic::SymbolValues values;             // Symbol -> its bound value.
  std::map<std::string, std::string> flags;  // Symbol -> "--dim height=481", "--input-shape x=1x3x481x640".
  std::map<std::string, std::pair<std::string, size_t>> axis_of;  // Symbol -> (input, axis) it is first met at.
};

std::string InputShapeFlag(const std::string& input, const std::vector<int64_t>& dims) {
  return absl::StrCat("--input-shape ", input, "=", absl::StrJoin(dims, "x"));
}

SymbolBindings BindingsOfSymbols(const BoundInputs& inputs, const symbolic::ShapeTables& bound,
                                 const symbolic::ShapeTables& unbound, const AnalyzeOptions& options) {
  SymbolBindings bindings;
  const symbolic::GraphShapes& unbound_main = unbound.graphs.at(&inputs.source->graph());
  const symbolic::GraphShapes& bound_main = bound.graphs.at(&inputs.model().graph());
  for (const onnx::ValueInfoProto& input : inputs.source->graph().input()) {
    const symbolic::SymValue* before = unbound_main.Find(input.name());
    const symbolic::SymValue* after = bound_main.Find(input.name());
    if (before == nullptr || after == nullptr || !before->shape.has_value() || !after->shape.has_value() ||
        before->shape->size() != after->shape->size()) {
      continue;
    }
    for (size_t axis = 0; axis < before->shape->size(); ++axis) {
      std::set<std::string> names;
      (*before->shape)[axis].CollectSymbols(names);
      const std::optional<int64_t> value = (*after->shape)[axis].AsConstant();
      if (names.size() != 1 || !value.has_value() || (*before->shape)[axis] != symbolic::Expr::Symbol(*names.begin())) {
        continue;
      }
      const std::string& symbol = *names.begin();
      bindings.values[symbol] = *value;
      bindings.axis_of.try_emplace(symbol, input.name(), axis);
      if (options.dims.contains(symbol)) {
        bindings.flags[symbol] = absl::StrCat("--dim ", symbol, "=", options.dims.at(symbol));
      } else if (options.input_shapes.contains(input.name())) {
        bindings.flags[symbol] = InputShapeFlag(input.name(), options.input_shapes.at(input.name()));
      } else if (options.input_values.contains(input.name())) {
        bindings.flags[symbol] = absl::StrCat("--input-value ", input.name(), "=", options.input_values.at(input.name()));
      } else if (options.dim_default.has_value()) {
        bindings.flags[symbol] = absl::StrCat("--dim-default ", *options.dim_default);
      }
    }
  }
  return bindings;
}

// Every binding the user gave, as flags (when the dims at fault are not known).
std::vector<std::string> AllBindingFlags(const AnalyzeOptions& options) {
  std::vector<std::string> flags;
  for (const auto& [name, value] : options.dims) flags.push_back(absl::StrCat("--dim ", name, "=", value));
  for (const auto& [input, dims] : options.input_shapes) flags.push_back(InputShapeFlag(input, dims));
  for (const auto& [input, value] : options.input_values) {
    flags.push_back(absl::StrCat("--input-value ", input, "=", value));
  }
  if (options.dim_default.has_value()) flags.push_back(absl::StrCat("--dim-default ", *options.dim_default));
  return flags;
}

// The user's options with `symbol` bound to `value` instead: in its
// --input-shape where that set it, else as --dim (before --dim-default).
AnalyzeOptions Rebound(const AnalyzeOptions& options, const SymbolBindings& bindings, const std::string& symbol,
                       int64_t value) {
  AnalyzeOptions at = options;
  const auto& [input, axis] = bindings.axis_of.at(symbol);
  auto shape = at.input_shapes.find(input);
  if (shape != at.input_shapes.end() && axis < shape->second.size()) {
    shape->second[axis] = value;
  } else {
    at.dims[symbol] = value;
  }
  return at;
}

// Whether the model takes `value` of `symbol`: our engine finds every node
// of the main graph able to run.
bool ModelTakes(const onnx::ModelProto& source, const AnalyzeOptions& options, const SymbolBindings& bindings,
                const std::string& symbol, int64_t value, bool onnx_fallback) {
  const AnalyzeOptions at = Rebound(options, bindings, symbol, value);
  absl::StatusOr<BoundInputs> bound = BindInputs(source, at);
  if (!bound.ok()) return false;
  try {
    absl::StatusOr<symbolic::ShapeTables> tables = symbolic::InferSymbolicShapes(
        bound->model(), at.tensor_shapes, bound->engine_dims, onnx_fallback, bound->input_values);
    return tables.ok() && !tables->contradictions.contains(&bound->model().graph());
  } catch (const std::exception&) {  // ONNX's per-node functions throw.
    return false;
  }
}

// The value nearest `bound` on one side (below: descending) that the model
// takes, among `candidates` (ascending; every value within 256 when empty),
// each checked by the engine until `deadline`.
std::optional<int64_t> NearestTaken(const std::vector<int64_t>& candidates, int64_t bound, bool below,
                                    const std::function<bool(int64_t)>& takes, absl::Time deadline) {
  constexpr int64_t kNearby = 256;
  std::vector<int64_t> order;
  if (candidates.empty()) {
    for (int64_t d = 1; d <= kNearby; ++d) order.push_back(below ? bound - d : bound + d);
  } else if (below) {
    order.assign(candidates.rbegin(), candidates.rend());
  } else {
    order = candidates;
  }
  for (int64_t v : order) {
    if (v < 1 || (below ? v >= bound : v <= bound)) continue;
    if (absl::Now() > deadline) return std::nullopt;
    if (takes(v)) return v;
  }
  return std::nullopt;
}

// "; the nearest values of height the model takes are 480 and 512", and
// ": height must be a multiple of 32" where the formulas say so.
std::string NearestValuesText(const std::string& symbol, std::optional<int64_t> below, std::optional<int64_t> above,
                              std::optional<int64_t> multiple) {
  std::string out;
  if (below.has_value() && above.has_value()) {
    absl::StrAppend(&out, "; the nearest values of ", symbol, " the model takes are ", *below, " and ", *above);
  } else if (below.has_value() || above.has_value()) {
    absl::StrAppend(&out, "; the nearest value of ", symbol, " the model takes is ", below.value_or(*above));
  }
  if (multiple.has_value() && !out.empty() && below.value_or(*multiple) % *multiple == 0 &&
      above.value_or(*multiple) % *multiple == 0) {
    absl::StrAppend(&out, ": ", symbol, " must be a multiple of ", *multiple);
  }
  return out;
}

// The flags that set `symbols`, each once, in order.
std::vector<std::string> FlagsOf(const std::set<std::string>& symbols, const SymbolBindings& bindings) {
  std::vector<std::string> flags;
  for (const std::string& symbol : symbols) {
    auto flag = bindings.flags.find(symbol);
    if (flag != bindings.flags.end() && std::find(flags.begin(), flags.end(), flag->second) == flags.end()) {
      flags.push_back(flag->second);
    }
  }
  return flags;
}

// The node's index in the main graph, or -1 (a node of a branch).
int MainGraphIndex(const onnx::GraphProto& graph, const onnx::NodeProto* node) {
  for (int k = 0; k < graph.node_size(); ++k) {
    if (&graph.node(k) == node) return k;
  }
  return -1;
}

// The payload is "", or "DIM=VALUE": the nearest value of DIM below its
// bound one at which the clashing dims agree (AgreeingValueBelow).
absl::Status ContradictionError(const std::string& message, const std::string& hint = "") {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kContradictionPayload, absl::Cord(hint));
  return status;
}

bool HasBindings(const AnalyzeOptions& options) {
  return !options.dims.empty() || !options.input_shapes.empty() || !options.input_values.empty() ||
         options.dim_default.has_value();
}

}  // namespace

bool IsContradictingBinding(const absl::Status& status) {
  return status.GetPayload(kContradictionPayload).has_value();
}

std::optional<int64_t> AgreeingValueBelow(const absl::Status& status, const std::string& dim) {
  const auto payload = status.GetPayload(kContradictionPayload);
  if (!payload.has_value()) return std::nullopt;
  const std::string hint(*payload);
  int64_t value = 0;
  if (hint.rfind(dim + "=", 0) != 0 || !absl::SimpleAtoi(hint.substr(dim.size() + 1), &value)) return std::nullopt;
  return value;
}

absl::Status BindingContradiction(const BoundInputs& inputs, const symbolic::ShapeTables& shapes,
                                  const AnalyzeOptions& options, bool onnx_fallback) {
  auto found = shapes.contradictions.find(&inputs.model().graph());
  if (found == shapes.contradictions.end() || !HasBindings(options)) return absl::OkStatus();
  const symbolic::Contradiction& contradiction = found->second;
  absl::StatusOr<symbolic::ShapeTables> unbound = absl::UnknownError("not run");
  try {
    unbound = symbolic::InferSymbolicShapes(*inputs.source, {}, {}, onnx_fallback, {});
  } catch (const std::exception& error) {  // ONNX's per-node functions throw.
    unbound = absl::InternalError(error.what());
  }
  // The model contradicts itself without any binding too: its own (or our engine's) fault, reported as unsized.
  if (unbound.ok() && unbound->contradictions.contains(&inputs.source->graph())) return absl::OkStatus();
  if (std::optional<std::string> conflict = DimDefaultConflict(inputs, shapes, options, onnx_fallback)) {
    return ContradictionError(*conflict);
  }
  std::vector<std::string> flags = AllBindingFlags(options);
  std::string explained, hint;
  const int index = MainGraphIndex(inputs.model().graph(), contradiction.node);
  if (unbound.ok()) {
    const SymbolBindings bindings = BindingsOfSymbols(inputs, shapes, *unbound, options);
    std::optional<symbolic::DimClash> clash;
    if (index >= 0) {
      clash = symbolic::FindDimClash(inputs.source->graph(), inputs.source->graph().node(index),
                                     unbound->graphs.at(&inputs.source->graph()), bindings.values);
    }
    // The symbols to move: the clash's one; or, when the unbound run has no
    // formula there (a dim computed past an earlier add), each bound one.
    std::set<std::string> symbols, at_fault;
    if (clash.has_value()) {
      explained = absl::StrCat("; the dims are ", clash->a.ToString(), " and ", clash->b.ToString());
      clash->a.CollectSymbols(at_fault);
      clash->b.CollectSymbols(at_fault);
      if (!clash->symbol.empty()) symbols.insert(clash->symbol);
    } else {
      for (const auto& [symbol, value] : bindings.values) symbols.insert(symbol);
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(2);
    const std::vector<int64_t> every_value;
    for (const std::string& symbol : symbols) {
      auto takes = [&](int64_t v) { return ModelTakes(*inputs.source, options, bindings, symbol, v, onnx_fallback); };
      const std::vector<int64_t>& candidates = clash.has_value() ? clash->agreeing : every_value;
      const int64_t bound = bindings.values.at(symbol);
      const std::optional<int64_t> below = NearestTaken(candidates, bound, /*below=*/true, takes, deadline);
      const std::optional<int64_t> above = NearestTaken(candidates, bound, /*below=*/false, takes, deadline);
      if (!below.has_value() && !above.has_value()) continue;
      absl::StrAppend(&explained,
                      NearestValuesText(symbol, below, above, clash.has_value() ? clash->multiple : std::nullopt));
      if (!clash.has_value()) at_fault.insert(symbol);  // Moving it alone mends the model.
      if (below.has_value() && hint.empty()) hint = absl::StrCat(symbol, "=", *below);
    }
    if (std::vector<std::string> named = FlagsOf(at_fault, bindings); !named.empty()) flags = named;
  }
  return ContradictionError(absl::StrCat(absl::StrJoin(flags, " "), flags.size() > 1 ? " make" : " makes",
                                         " the model contradict itself: ",
                                         contradiction.line, explained),
                            hint);
}

}  // namespace footprint
