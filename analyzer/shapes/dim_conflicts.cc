// FindDimDefaultConflict (shape_engine.h): where --dim-default N makes two
// dims that must be equal differ, named as the formulas of the unbound model.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/shapes/dim_ties.h"
#include "analyzer/shapes/shape_engine.h"

namespace footprint::symbolic {
namespace {

// The dims a node's inputs must agree on, right-aligned as broadcasting
// does: each input's shape, and Expand's target shape.
std::vector<std::vector<Expr>> BroadcastOperands(const onnx::NodeProto& node, const GraphShapes& shapes) {
  std::vector<std::vector<Expr>> operands;
  for (int i = 0; i < node.input_size(); ++i) {
    const SymValue* v = node.input(i).empty() ? nullptr : shapes.Find(node.input(i));
    if (v == nullptr) continue;
    if (node.op_type() == "Expand" && i == 1) {
      if (v->ints.has_value()) operands.push_back(*v->ints);
      continue;
    }
    if (v->shape.has_value()) operands.push_back(*v->shape);
  }
  return operands;
}

// A binding of one dim that makes `a` (a single symbol's side, if either
// is) equal `b` when every other symbol is `n`: "--dim past=0" or "--dim total=16".
std::string ConsistentBinding(const Expr& a, const Expr& b, const std::set<std::string>& symbols, int64_t n) {
  SymbolValues all;
  for (const std::string& s : symbols) all[s] = n;
  std::set<std::string> in_a, in_b;
  a.CollectSymbols(in_a);
  b.CollectSymbols(in_b);
  std::vector<std::string> options;
  // A symbol of one side only, set to 0 (a past length, an offset), when that evens them.
  for (const auto& [side, other_side, other] : {std::tuple{&in_b, &in_a, &a}, std::tuple{&in_a, &in_b, &b}}) {
    for (const std::string& s : *side) {
      if (other_side->contains(s)) continue;
      SymbolValues zeroed = all;
      zeroed[s] = 0;
      if (a.Evaluate(zeroed) == b.Evaluate(zeroed) && a.Evaluate(zeroed).has_value()) {
        options.push_back(absl::StrCat("--dim ", s, "=0"));
        break;
      }
    }
    if (!options.empty()) break;
  }
  // The side that is one symbol, bound to the other side's value.
  for (const auto& [single, other] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    std::set<std::string> names;
    single->CollectSymbols(names);
    std::set<std::string> other_names;
    other->CollectSymbols(other_names);
    if (names.size() == 1 && single->ToString() == *names.begin() && !other_names.contains(*names.begin())) {
      if (std::optional<int64_t> value = other->Evaluate(all)) {
        options.push_back(absl::StrCat("--dim ", *names.begin(), "=", *value));
        break;
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : " or ", options[i]);
  return out;
}

// The largest rank among broadcast operands.
size_t MaxRank(const std::vector<std::vector<Expr>>& operands) {
  size_t rank = 0;
  for (const auto& shape : operands) rank = std::max(rank, shape.size());
  return rank;
}

// The operands' known dims at `from_end` (1: the last axis) that are not 1:
// broadcasting needs them all equal.
std::vector<Expr> DimsThatMustMatch(const std::vector<std::vector<Expr>>& operands, size_t from_end) {
  std::vector<Expr> dims;
  for (const auto& shape : operands) {
    if (shape.size() < from_end) continue;
    const Expr& d = shape[shape.size() - from_end];
    if (d.known() && !d.IsConstant(1)) dims.push_back(d);
  }
  return dims;
}

// Both sides of every equality a node needs between two dims: right-aligned
// broadcast operands of the ops that broadcast, and MatMul's inner dims.
std::vector<std::pair<Expr, Expr>> NeededEqualities(const onnx::NodeProto& node, const GraphShapes& shapes) {
  static const std::set<std::string> kBroadcasting = {"Add",   "Sub",     "Mul",  "Div",     "Pow",  "Where",
                                                      "Equal", "Greater", "Less", "And",     "Or",   "Max",
                                                      "Min",   "Sum",     "Mean", "Expand",  "PRelu"};
  std::vector<std::pair<Expr, Expr>> pairs;
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  if (!default_domain) return pairs;
  if (node.op_type() == "MatMul" && node.input_size() == 2) {
    const SymValue* a = shapes.Find(node.input(0));
    const SymValue* b = shapes.Find(node.input(1));
    if (a != nullptr && b != nullptr && a->shape.has_value() && b->shape.has_value() && a->shape->size() >= 2 &&
        b->shape->size() >= 2) {
      pairs.emplace_back(a->shape->back(), (*b->shape)[b->shape->size() - 2]);
    }
    return pairs;
  }
  if (!kBroadcasting.contains(node.op_type())) return pairs;
  const std::vector<std::vector<Expr>> operands = BroadcastOperands(node, shapes);
  for (size_t from_end = 1; from_end <= MaxRank(operands); ++from_end) {
    const std::vector<Expr> dims = DimsThatMustMatch(operands, from_end);
    for (size_t i = 1; i < dims.size(); ++i) pairs.emplace_back(dims[0], dims[i]);
  }
  return pairs;
}

}  // namespace

std::vector<DimTie> FindDimTies(const onnx::ModelProto& model, const ShapeTables& tables) {
  std::vector<DimTie> ties;
  auto graph = tables.graphs.find(&model.graph());
  if (graph == tables.graphs.end()) return ties;
  std::set<std::string> tied;
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (const auto& [a, b] : NeededEqualities(node, graph->second)) {
      if (a == b) continue;
      // seq = past + seq: the difference, a lone symbol, must be 0.
      const Expr difference = a - b;
      std::set<std::string> difference_names;
      difference.CollectSymbols(difference_names);
      if (difference.known() && difference_names.size() == 1 &&
          (difference == Expr::Symbol(*difference_names.begin()) ||
           -difference == Expr::Symbol(*difference_names.begin()))) {
        if (tied.insert(*difference_names.begin()).second) {
          ties.push_back(DimTie{.dim = *difference_names.begin(), .equals = Expr(0)});
        }
        continue;
      }
      for (const auto& [single, other] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
        std::set<std::string> names;
        single->CollectSymbols(names);
        if (names.size() != 1 || single->ToString() != *names.begin()) continue;
        std::set<std::string> other_names;
        other->CollectSymbols(other_names);
        if (other_names.empty() || other_names.contains(*names.begin()) || tied.contains(*names.begin())) continue;
        tied.insert(*names.begin());
        ties.push_back(DimTie{.dim = *names.begin(), .equals = *other});
        break;
      }
    }
  }
  return ties;
}

std::optional<std::string> FindDimDefaultConflict(const onnx::ModelProto& bound_model, const ShapeTables& bound,
                                                  const onnx::ModelProto& unbound_model, const ShapeTables& unbound,
                                                  int64_t dim_default) {
  auto bound_graph = bound.graphs.find(&bound_model.graph());
  auto unbound_graph = unbound.graphs.find(&unbound_model.graph());
  if (bound_graph == bound.graphs.end() || unbound_graph == unbound.graphs.end()) return std::nullopt;
  if (bound_model.graph().node_size() != unbound_model.graph().node_size()) return std::nullopt;
  std::set<std::string> symbols;
  for (const SymValue& v : unbound_graph->second.values) {
    if (!v.shape.has_value()) continue;
    for (const Expr& d : *v.shape) d.CollectSymbols(symbols);
  }
  SymbolValues all;
  for (const std::string& s : symbols) all[s] = dim_default;
  for (int k = 0; k < bound_model.graph().node_size(); ++k) {
    const onnx::NodeProto& node = bound_model.graph().node(k);
    bool clash = false;
    for (const std::string& output : node.output()) {
      const SymValue* v = bound_graph->second.Find(output);
      clash = clash || (v != nullptr && v->reason.find("do not broadcast") != std::string::npos);
    }
    if (!clash) continue;
    const std::vector<std::vector<Expr>> operands =
        BroadcastOperands(unbound_model.graph().node(k), unbound_graph->second);
    for (size_t from_end = 1; from_end <= MaxRank(operands); ++from_end) {
      const std::vector<Expr> dims = DimsThatMustMatch(operands, from_end);
      for (size_t i = 0; i < dims.size(); ++i) {
        for (size_t j = i + 1; j < dims.size(); ++j) {
          std::optional<int64_t> a = dims[i].Evaluate(all), b = dims[j].Evaluate(all);
          if (!a.has_value() || !b.has_value() || *a == *b) continue;
          // The single symbol first: "total_sequence_length (8) must equal past+seq (16)".
          const Expr& x = dims[i].terms().size() <= dims[j].terms().size() ? dims[i] : dims[j];
          const Expr& y = &x == &dims[i] ? dims[j] : dims[i];
          const std::string binding = ConsistentBinding(x, y, symbols, dim_default);
          return absl::StrCat("--dim-default ", dim_default, " makes the model contradict itself: ", x.ToString(), " (",
                              *x.Evaluate(all), ") must equal ", y.ToString(), " (", *y.Evaluate(all), ") at ",
                              node.op_type(), " '", node.name().empty() ? node.output(0) : node.name(), "'",
                              binding.empty() ? "" : absl::StrCat("; bind them consistently, e.g. ", binding));
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace footprint::symbolic
