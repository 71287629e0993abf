// FindDimDefaultConflict (shape_engine.h): where --dim-default N makes two
// dims that must be equal differ, named as the formulas of the unbound model;
// FindDimClash (dim_ties.h): the same for any binding, with the values that agree.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
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

// The shape of `node`'s input (or output) `index`, when ranked `rank` (0: any rank).
const std::vector<Expr>* ShapeAt(const GraphShapes& shapes, const google::protobuf::RepeatedPtrField<std::string>& names,
                                 int index, size_t rank) {
  if (index >= names.size() || names[index].empty()) return nullptr;
  const SymValue* v = shapes.Find(names[index]);
  if (v == nullptr || !v->shape.has_value() || (rank != 0 && v->shape->size() != rank)) return nullptr;
  return &*v->shape;
}

// com.microsoft's attention ops append the new tokens to the past ones: the
// total length they attend over (an attention mask's last dim, GroupQuery-
// Attention's total_sequence_length value) must be past + sequence.
std::vector<std::pair<Expr, Expr>> AttentionEqualities(const onnx::NodeProto& node, const GraphShapes& shapes) {
  std::vector<std::pair<Expr, Expr>> pairs;
  // A max-length cache: the past is not the tokens so far.
  if (IntAttribute(node, "past_present_share_buffer", 0) != 0) return pairs;
  const std::string& op = node.op_type();
  if (op == "Attention") {  // input (B,S,D), mask_index (B,T) or (B,S,T), past (2,B,N,P,H).
    const std::vector<Expr>* input = ShapeAt(shapes, node.input(), 0, 3);
    const std::vector<Expr>* mask = ShapeAt(shapes, node.input(), 3, 0);
    const std::vector<Expr>* past = ShapeAt(shapes, node.input(), 4, 5);
    if (input != nullptr && mask != nullptr && past != nullptr && mask->size() >= 2) {
      pairs.emplace_back(mask->back(), (*past)[3] + (*input)[1]);
    }
  } else if (op == "MultiHeadAttention") {
    // key_padding_mask (B,T), attention_bias (B or 1, N or 1, S, T), past_key (B,N,P,H) -> present_key (B,N,T,H).
    const std::vector<Expr>* past = ShapeAt(shapes, node.input(), 6, 4);
    const std::vector<Expr>* present = ShapeAt(shapes, node.output(), 1, 4);
    for (const std::vector<Expr>* mask : {ShapeAt(shapes, node.input(), 4, 2), ShapeAt(shapes, node.input(), 5, 4)}) {
      if (mask != nullptr && past != nullptr && present != nullptr) pairs.emplace_back(mask->back(), (*present)[2]);
    }
  } else if (op == "GroupQueryAttention") {  // query (B,S,D), past_key (B,kvN,P,H), total_sequence_length.
    const std::vector<Expr>* query = ShapeAt(shapes, node.input(), 0, 3);
    const std::vector<Expr>* past = ShapeAt(shapes, node.input(), 3, 4);
    const SymValue* total = node.input_size() > 6 ? shapes.Find(node.input(6)) : nullptr;
    if (query != nullptr && past != nullptr && total != nullptr && total->ints.has_value() && total->ints->size() == 1) {
      pairs.emplace_back((*total->ints)[0], (*past)[2] + (*query)[1]);
    }
  }
  return pairs;
}

// Both sides of every equality a node needs between two dims: right-aligned
// broadcast operands of the ops that broadcast, MatMul's inner dims, and the
// total length of com.microsoft's attention ops.
std::vector<std::pair<Expr, Expr>> NeededEqualities(const onnx::NodeProto& node, const GraphShapes& shapes) {
  static const std::set<std::string> kBroadcasting = {"Add",   "Sub",     "Mul",  "Div",     "Pow",  "Where",
                                                      "Equal", "Greater", "Less", "And",     "Or",   "Max",
                                                      "Min",   "Sum",     "Mean", "Expand",  "PRelu"};
  std::vector<std::pair<Expr, Expr>> pairs;
  if (node.domain() == "com.microsoft") return AttentionEqualities(node, shapes);
  const bool default_domain = IsDefaultDomain(node);
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

// The named dims of the graph's inputs: what --dim binds.
std::set<std::string> InputDimNames(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!input.type().has_tensor_type()) continue;
    for (const onnx::TensorShapeProto::Dimension& dim : input.type().tensor_type().shape().dim()) {
      if (!dim.dim_param().empty()) names.insert(dim.dim_param());
    }
  }
  return names;
}

// A graph output's declared dim against the formula the engine derived for
// it (present declared [.., total, ..], derived past + sequence), when both
// name input dims only and the formula does not hold the declared one: an
// export's traced names (a declared dim that is no input's) tie nothing.
std::vector<std::pair<Expr, Expr>> DeclaredOutputEqualities(const onnx::GraphProto& graph, const GraphShapes& shapes,
                                                             const std::set<std::string>& input_dims) {
  std::vector<std::pair<Expr, Expr>> pairs;
  const auto names_input_dims_only = [&](const Expr& e, const std::string& besides) {
    std::set<std::string> names;
    e.CollectSymbols(names);
    if (names.empty() || names.contains(besides)) return false;
    for (const std::string& name : names) {
      if (!input_dims.contains(name)) return false;
    }
    return true;
  };
  for (const onnx::ValueInfoProto& output : graph.output()) {
    const SymValue* v = shapes.Find(output.name());
    if (v == nullptr || !v->shape.has_value() || !output.type().has_tensor_type() ||
        !output.type().tensor_type().has_shape()) {
      continue;
    }
    const onnx::TensorShapeProto& declared = output.type().tensor_type().shape();
    if (declared.dim_size() != static_cast<int>(v->shape->size())) continue;
    for (int k = 0; k < declared.dim_size(); ++k) {
      const std::string& name = declared.dim(k).dim_param();
      if (input_dims.contains(name) && names_input_dims_only((*v->shape)[k], name)) {
        pairs.emplace_back(Expr::Symbol(name), (*v->shape)[k]);
      }
    }
  }
  return pairs;
}

}  // namespace

std::vector<DimTie> FindDimTies(const onnx::ModelProto& model, const ShapeTables& tables) {
  std::vector<DimTie> ties;
  auto graph = tables.graphs.find(&model.graph());
  if (graph == tables.graphs.end()) return ties;
  std::set<std::string> tied;
  const std::set<std::string> input_dims = InputDimNames(model.graph());
  // The attention ops' and the declared outputs' first: they say total = past
  // + sequence outright. A broadcast may still tie past = 0 (a causal mask
  // built [sequence, sequence] for the prompt alone, as in genai's Llama):
  // past > 0 then needs sequence 1, and a search of the sequence keeps past 0.
  std::vector<std::vector<std::pair<Expr, Expr>>> equalities;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.domain() == "com.microsoft") equalities.push_back(NeededEqualities(node, graph->second));
  }
  equalities.push_back(DeclaredOutputEqualities(model.graph(), graph->second, input_dims));
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.domain() != "com.microsoft") equalities.push_back(NeededEqualities(node, graph->second));
  }
  for (const std::vector<std::pair<Expr, Expr>>& pairs : equalities) {
    for (const auto& [a, b] : pairs) {
      if (a == b) continue;
      // Only input dims can be bound: a tie through a name the model gives
      // an intermediate value (a declared value_info's) ties nothing.
      std::set<std::string> symbols;
      a.CollectSymbols(symbols);
      b.CollectSymbols(symbols);
      if (std::any_of(symbols.begin(), symbols.end(), [&](const std::string& s) { return !input_dims.contains(s); })) {
        continue;
      }
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

namespace footprint::symbolic {
namespace {

// Where one symbol alone decides `clash`: the values of it at which every
// equality of the graph that it decides holds (a detector's adds at every
// stride whose formulas are known, not only the one that clashed).
void FindAgreeingValues(const onnx::GraphProto& graph, const GraphShapes& unbound, const SymbolValues& values,
                        DimClash& clash) {
  std::set<std::string> symbols;
  clash.a.CollectSymbols(symbols);
  clash.b.CollectSymbols(symbols);
  if (symbols.size() != 1 || !values.contains(*symbols.begin())) return;
  clash.symbol = *symbols.begin();
  std::vector<std::pair<Expr, Expr>> equalities = {{clash.a, clash.b}};
  std::set<std::pair<std::string, std::string>> seen;  // A block repeated 24 times needs each equality once.
  for (const onnx::NodeProto& node : graph.node()) {
    for (auto& [a, b] : NeededEqualities(node, unbound)) {
      std::set<std::string> names;
      a.CollectSymbols(names);
      b.CollectSymbols(names);
      if (names.contains(clash.symbol) && seen.emplace(a.ToString(), b.ToString()).second) {
        equalities.emplace_back(std::move(a), std::move(b));
      }
    }
  }
  const int64_t bound = values.at(clash.symbol);
  const int64_t range = std::min<int64_t>(std::max<int64_t>(4 * bound, 64), int64_t{1} << 14);
  SymbolValues at = values;
  for (int64_t v = 1; v <= range; ++v) {
    at[clash.symbol] = v;
    const bool agree = std::all_of(equalities.begin(), equalities.end(), [&at](const auto& pair) {
      const std::optional<int64_t> a = pair.first.Evaluate(at), b = pair.second.Evaluate(at);
      return !a.has_value() || !b.has_value() || *a == *b || *a == 1 || *b == 1;
    });
    if (agree) clash.agreeing.push_back(v);
  }
  // 1 agrees with anything once a dim becomes 1 (broadcast) or 0: not counted.
  int64_t multiple = 0, counted = 0;
  for (int64_t v : clash.agreeing) {
    if (v == 1) continue;
    multiple = std::gcd(multiple, v);
    ++counted;
  }
  if (multiple > 1 && counted == range / multiple) clash.multiple = multiple;
}

}  // namespace

std::optional<DimClash> FindDimClash(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                                     const GraphShapes& unbound, const SymbolValues& values) {
  const std::vector<std::vector<Expr>> operands = BroadcastOperands(node, unbound);
  for (size_t from_end = 1; from_end <= MaxRank(operands); ++from_end) {
    const std::vector<Expr> dims = DimsThatMustMatch(operands, from_end);
    for (size_t i = 0; i < dims.size(); ++i) {
      for (size_t j = i + 1; j < dims.size(); ++j) {
        const std::optional<int64_t> a = dims[i].Evaluate(values), b = dims[j].Evaluate(values);
        if (!a.has_value() || !b.has_value() || *a == *b || *a == 1 || *b == 1) continue;
        DimClash clash{.a = dims[i], .b = dims[j], .a_value = *a, .b_value = *b};
        FindAgreeingValues(graph, unbound, values, clash);
        return clash;
      }
    }
  }
  return std::nullopt;
}

}  // namespace footprint::symbolic
