// BindingContradiction (model_stages.h): a binding that makes the model
// contradict itself is bad input, named with the node and the dims.
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
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

// "; the dims are ceil(height/2) and 2*ceil(height/4): height must be a multiple of 4 (480 or 484)".
std::string ClashFormulas(const symbolic::DimClash& clash) {
  std::string out = absl::StrCat("; the dims are ", clash.a.ToString(), " and ", clash.b.ToString());
  std::vector<std::string> near;
  if (clash.below.has_value()) near.push_back(absl::StrCat(*clash.below));
  if (clash.above.has_value()) near.push_back(absl::StrCat(*clash.above));
  if (clash.multiple.has_value()) {
    absl::StrAppend(&out, ": ", clash.symbol, " must be a multiple of ", *clash.multiple);
    if (!near.empty()) absl::StrAppend(&out, " (", absl::StrJoin(near, " or "), ")");
  } else if (!near.empty()) {
    absl::StrAppend(&out, ": they agree at ", clash.symbol, "=", absl::StrJoin(near, " or "));
  }
  return out;
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
  std::string formulas, hint;
  const int index = MainGraphIndex(inputs.model().graph(), contradiction.node);
  if (unbound.ok() && index >= 0) {
    const SymbolBindings bindings = BindingsOfSymbols(inputs, shapes, *unbound, options);
    const std::optional<symbolic::DimClash> clash = symbolic::FindDimClash(
        inputs.source->graph().node(index), unbound->graphs.at(&inputs.source->graph()), bindings.values);
    if (clash.has_value()) {
      std::set<std::string> symbols, named;
      clash->a.CollectSymbols(symbols);
      clash->b.CollectSymbols(symbols);
      std::vector<std::string> at_fault;
      for (const std::string& symbol : symbols) {
        auto flag = bindings.flags.find(symbol);
        if (flag != bindings.flags.end() && named.insert(flag->second).second) at_fault.push_back(flag->second);
      }
      if (!at_fault.empty()) flags = at_fault;
      formulas = ClashFormulas(*clash);
      if (clash->below.has_value()) hint = absl::StrCat(clash->symbol, "=", *clash->below);
    }
  }
  return ContradictionError(absl::StrCat(absl::StrJoin(flags, " "), flags.size() > 1 ? " make" : " makes",
                                         " the model contradict itself: ",
                                         contradiction.line, formulas),
                            hint);
}

}  // namespace footprint
