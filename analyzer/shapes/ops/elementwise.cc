// Shape functions of the elementwise ops: arithmetic, comparisons and logic
// (numpy broadcast, values folded when every input has them: shape
// arithmetic), unary math, Where and Cast.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kMin, kMax, kPow };

std::optional<Expr> ArithInts(Arith op, const Expr& a, const Expr& b) {
  switch (op) {
    case Arith::kAdd: return a + b;
    case Arith::kSub: return a - b;
    case Arith::kMul: return a * b;
    case Arith::kDiv: {
      // ONNX integer Div truncates; dims and shape arithmetic are non-negative, where it is floor.
      std::optional<int64_t> d = b.AsConstant();
      if (d.has_value() && *d > 0) {
        std::optional<int64_t> n = a.AsConstant();
        if (n.has_value()) return Expr(*n / *d);
        return Expr::FloorDiv(a, *d);
      }
      if (d.has_value()) {
        std::optional<int64_t> n = a.AsConstant();
        if (n.has_value() && *d != 0) return Expr(*n / *d);
        return std::nullopt;
      }
      Expr q = Expr::DivideExact(a, b);
      if (q.known()) return q;
      return std::nullopt;
    }
    case Arith::kMod: {
      std::optional<int64_t> d = b.AsConstant();
      std::optional<int64_t> n = a.AsConstant();
      if (n.has_value() && d.has_value() && *d != 0) {
        int64_t r = *n % *d;
        if (r != 0 && ((r < 0) != (*d < 0))) r += *d;  // fmod=0: sign of the divisor.
        return Expr(r);
      }
      if (d.has_value() && *d > 0) return Expr::Mod(a, *d);
      return std::nullopt;
    }
    case Arith::kMin: return Expr::Min(a, b);
    case Arith::kMax: return Expr::Max(a, b);
    case Arith::kPow: {
      std::optional<int64_t> e = b.AsConstant();
      if (!e.has_value() || *e < 0 || *e > 62) return std::nullopt;
      Expr r = 1;
      for (int64_t i = 0; i < *e; ++i) r = r * a;
      return r;
    }
  }
  return std::nullopt;
}

double ArithFloats(Arith op, double a, double b) {
  switch (op) {
    case Arith::kAdd: return a + b;
    case Arith::kSub: return a - b;
    case Arith::kMul: return a * b;
    case Arith::kDiv: return a / b;
    case Arith::kMod: return std::fmod(a, b);
    case Arith::kMin: return std::min(a, b);
    case Arith::kMax: return std::max(a, b);
    case Arith::kPow: return std::pow(a, b);
  }
  return 0;
}

// Output shape of a variadic broadcasting op.
std::optional<std::vector<Expr>> BroadcastInputs(const OpContext& ctx, std::string* conflict = nullptr) {
  std::optional<std::vector<Expr>> shape;
  for (const SymValue* v : ctx.inputs) {
    if (!Ranked(v)) return std::nullopt;
    if (shape.has_value() && conflict != nullptr && conflict->empty()) *conflict = BroadcastConflict(*shape, *v->shape);
    shape = shape.has_value() ? Broadcast(*shape, *v->shape) : *v->shape;
  }
  return shape;
}

int32_t FirstType(const OpContext& ctx) {
  for (const SymValue* v : ctx.inputs) {
    if (v != nullptr && v->elem_type != 0) return v->elem_type;
  }
  return 0;
}

ShapeFunction ArithFunction(Arith op) {
  return [op](const OpContext& ctx, Outputs& out) {
    std::string conflict;
    std::optional<std::vector<Expr>> shape = BroadcastInputs(ctx, &conflict);
    if (!shape.has_value() || ctx.inputs.empty()) return false;
    SymValue result = TensorOf(FirstType(ctx), *shape);
    result.reason = conflict;
    result.contradiction = !conflict.empty();
    // Values fold only when every input has them (shape arithmetic); an
    // activation plus a bias has none, and needs no broadcast index.
    bool any_values_missing = false;
    for (const SymValue* v : ctx.inputs) any_values_missing |= !v->ints.has_value() && !v->floats.has_value();
    const std::optional<std::vector<int64_t>> concrete =
        any_values_missing ? std::nullopt : result.ConcreteShape();
    if (concrete.has_value()) {
      std::vector<std::vector<int64_t>> index;
      bool all_ints = true, all_floats = true;
      for (const SymValue* v : ctx.inputs) {
        std::optional<std::vector<int64_t>> in_shape = v->ConcreteShape();
        std::optional<std::vector<int64_t>> idx =
            in_shape.has_value() ? BroadcastIndex(*in_shape, *concrete) : std::nullopt;
        if (!idx.has_value()) {
          all_ints = all_floats = false;
          break;
        }
        index.push_back(*std::move(idx));
        all_ints = all_ints && v->ints.has_value();
        all_floats = all_floats && (v->floats.has_value() || v->ints.has_value());
      }
      const int64_t count = index.empty() ? 0 : static_cast<int64_t>(index[0].size());
      if (all_ints && IsIntegerType(result.elem_type)) {
        std::vector<Expr> values;
        for (int64_t i = 0; i < count; ++i) {
          Expr acc = (*ctx.inputs[0]->ints)[index[0][i]];
          for (size_t k = 1; k < ctx.inputs.size(); ++k) {
            std::optional<Expr> r = ArithInts(op, acc, (*ctx.inputs[k]->ints)[index[k][i]]);
            acc = r.value_or(Expr::Unknown());
          }
          if (!acc.known()) break;
          values.push_back(acc);
        }
        if (static_cast<int64_t>(values.size()) == count) SetInts(result, std::move(values));
      } else if (all_floats && IsFloatType(result.elem_type)) {
        auto get = [&](size_t k, int64_t i) -> std::optional<double> {
          const SymValue* v = ctx.inputs[k];
          if (v->floats.has_value()) return (*v->floats)[index[k][i]];
          std::optional<int64_t> c = (*v->ints)[index[k][i]].AsConstant();
          if (!c.has_value()) return std::nullopt;
          return static_cast<double>(*c);
        };
        std::vector<double> values;
        for (int64_t i = 0; i < count; ++i) {
          std::optional<double> acc = get(0, i);
          for (size_t k = 1; k < ctx.inputs.size() && acc.has_value(); ++k) {
            std::optional<double> b = get(k, i);
            acc = b.has_value() ? std::optional<double>(ArithFloats(op, *acc, *b)) : std::nullopt;
          }
          if (!acc.has_value()) break;
          values.push_back(*acc);
        }
        if (static_cast<int64_t>(values.size()) == count) result.floats = std::move(values);
      }
    }
    out[0] = std::move(result);
    return true;
  };
}

enum class Compare { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };

// e >= 1 whatever its symbols' values >= 0 (a dim may be 0): a constant >= 1
// plus symbols with positive coefficients. Decides Equal(seq + 1, 0) and
// Equal(seq, -1) (the "-1 means keep" of exported Expand shapes) with dims unbound.
bool AtLeastOneForAnyDims(const Expr& e) {
  if (!e.known()) return false;
  int64_t constant = 0;
  for (const Term& term : e.terms()) {
    if (term.factors.empty()) {
      constant = term.coeff;
      continue;
    }
    if (term.coeff <= 0) return false;
    for (const AtomPtr& atom : term.factors) {
      if (atom->kind != AtomKind::kSymbol) return false;
    }
  }
  return constant >= 1;
}

ShapeFunction CompareFunction(Compare op) {
  return [op](const OpContext& ctx, Outputs& out) {
    std::string conflict;
    std::optional<std::vector<Expr>> shape = BroadcastInputs(ctx, &conflict);
    if (!shape.has_value() || ctx.inputs.size() != 2) return false;
    SymValue result = TensorOf(onnx::TensorProto::BOOL, *shape);
    result.reason = conflict;
    result.contradiction = !conflict.empty();
    const std::optional<std::vector<int64_t>> concrete = result.ConcreteShape();
    std::optional<std::vector<Expr>> a = IntValues(ctx.inputs[0]);
    std::optional<std::vector<Expr>> b = IntValues(ctx.inputs[1]);
    if (concrete.has_value() && a.has_value() && b.has_value()) {
      std::optional<std::vector<int64_t>> ia = BroadcastIndex(*ctx.inputs[0]->ConcreteShape(), *concrete);
      std::optional<std::vector<int64_t>> ib = BroadcastIndex(*ctx.inputs[1]->ConcreteShape(), *concrete);
      if (ia.has_value() && ib.has_value()) {
        std::vector<Expr> values;
        for (size_t i = 0; i < ia->size(); ++i) {
          const Expr& x = (*a)[(*ia)[i]];
          const Expr& y = (*b)[(*ib)[i]];
          std::optional<int64_t> d = (x - y).AsConstant();
          if (!d.has_value() && AtLeastOneForAnyDims(x - y)) d = 1;    // Only its sign matters below.
          if (!d.has_value() && AtLeastOneForAnyDims(y - x)) d = -1;
          std::optional<int64_t> cx = x.AsConstant(), cy = y.AsConstant();
          std::optional<bool> r;
          switch (op) {
            case Compare::kEqual: if (d.has_value()) r = *d == 0; break;
            case Compare::kLess: if (d.has_value()) r = *d < 0; break;
            case Compare::kGreater: if (d.has_value()) r = *d > 0; break;
            case Compare::kLessOrEqual: if (d.has_value()) r = *d <= 0; break;
            case Compare::kGreaterOrEqual: if (d.has_value()) r = *d >= 0; break;
            case Compare::kAnd: if (cx && cy) r = *cx != 0 && *cy != 0; break;
            case Compare::kOr: if (cx && cy) r = *cx != 0 || *cy != 0; break;
            case Compare::kXor: if (cx && cy) r = (*cx != 0) != (*cy != 0); break;
          }
          if (!r.has_value()) break;
          values.push_back(Expr(*r ? 1 : 0));
        }
        if (values.size() == ia->size()) SetInts(result, std::move(values));
      }
    }
    out[0] = std::move(result);
    return true;
  };
}

// Same shape and type as input 0; `map` transforms known values.
ShapeFunction UnaryFunction(std::function<std::optional<Expr>(const Expr&)> int_map,
                            std::function<double(double)> float_map, bool to_bool = false) {
  return [int_map, float_map, to_bool](const OpContext& ctx, Outputs& out) {
    const SymValue* x = ctx.Input(0);
    if (!Ranked(x)) return false;
    SymValue result = TensorOf(to_bool ? onnx::TensorProto::BOOL : x->elem_type, *x->shape);
    if (x->ints.has_value() && int_map) {
      std::vector<Expr> values;
      for (const Expr& e : *x->ints) {
        std::optional<Expr> r = int_map(e);
        if (!r.has_value() || !r->known()) break;
        values.push_back(*r);
      }
      if (values.size() == x->ints->size()) SetInts(result, std::move(values));
    }
    if (x->floats.has_value() && float_map) {
      result.floats.emplace();
      for (double f : *x->floats) result.floats->push_back(float_map(f));
    }
    out[0] = std::move(result);
    for (size_t o = 1; o < out.size(); ++o) out[o] = TensorOf(onnx::TensorProto::BOOL, *x->shape);  // Dropout's mask.
    return true;
  };
}

bool WhereFunction(const OpContext& ctx, Outputs& out) {
  std::string conflict;
  std::optional<std::vector<Expr>> shape = BroadcastInputs(ctx, &conflict);
  if (!shape.has_value() || ctx.inputs.size() != 3) return false;
  SymValue result = TensorOf(ctx.inputs[1]->elem_type != 0 ? ctx.inputs[1]->elem_type : ctx.inputs[2]->elem_type,
                             *shape);
  result.reason = conflict;
  result.contradiction = !conflict.empty();
  const std::optional<std::vector<int64_t>> concrete = result.ConcreteShape();
  std::optional<std::vector<int64_t>> cond = ConstantInts(ctx.inputs[0]);
  if (concrete.has_value() && cond.has_value()) {
    std::vector<std::vector<int64_t>> index;
    for (const SymValue* v : ctx.inputs) {
      std::optional<std::vector<int64_t>> idx = BroadcastIndex(*v->ConcreteShape(), *concrete);
      if (!idx.has_value()) return out[0] = std::move(result), true;
      index.push_back(*std::move(idx));
    }
    if (ctx.inputs[1]->ints.has_value() && ctx.inputs[2]->ints.has_value()) {
      std::vector<Expr> values;
      for (size_t i = 0; i < index[0].size(); ++i) {
        values.push_back((*cond)[index[0][i]] != 0 ? (*ctx.inputs[1]->ints)[index[1][i]]
                                                   : (*ctx.inputs[2]->ints)[index[2][i]]);
      }
      SetInts(result, std::move(values));
    } else if (ctx.inputs[1]->floats.has_value() && ctx.inputs[2]->floats.has_value()) {
      std::vector<double> values;
      for (size_t i = 0; i < index[0].size(); ++i) {
        values.push_back((*cond)[index[0][i]] != 0 ? (*ctx.inputs[1]->floats)[index[1][i]]
                                                   : (*ctx.inputs[2]->floats)[index[2][i]]);
      }
      result.floats = std::move(values);
    }
  }
  out[0] = std::move(result);
  return true;
}

bool CastFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  int32_t to = static_cast<int32_t>(ctx.Int("to", 0));
  if (ctx.node.op_type() == "CastLike") {
    const SymValue* like = ctx.Input(1);
    if (like == nullptr || like->elem_type == 0) return false;
    to = like->elem_type;
  }
  SymValue result = TensorOf(to, *x->shape);
  if (IsIntegerType(to)) {
    if (x->ints.has_value()) {
      std::vector<Expr> values = *x->ints;
      if (to == onnx::TensorProto::BOOL) {
        for (Expr& e : values) {
          std::optional<int64_t> c = e.AsConstant();
          e = c.has_value() ? Expr(*c != 0 ? 1 : 0) : Expr::Unknown();
        }
        if (!std::all_of(values.begin(), values.end(), [](const Expr& e) { return e.known(); })) values.clear();
        if (!values.empty() || x->ints->empty()) result.ints = std::move(values);
      } else {
        result.ints = std::move(values);
      }
    } else if (x->floats.has_value()) {
      std::vector<Expr> values;
      for (double f : *x->floats) {
        if (!std::isfinite(f) || std::fabs(f) > 9e15) break;
        values.push_back(Expr(static_cast<int64_t>(std::trunc(f))));
      }
      if (values.size() == x->floats->size()) result.ints = std::move(values);
    }
  } else if (IsFloatType(to)) {
    if (x->floats.has_value()) {
      result.floats = x->floats;
    } else if (std::optional<std::vector<int64_t>> c = ConstantInts(x)) {
      result.floats.emplace(c->begin(), c->end());
    }
  }
  out[0] = std::move(result);
  return true;
}

}  // namespace

void AddElementwiseFunctions(ShapeFunctionTable& table) {
  table["Cast"] = CastFunction;
  table["CastLike"] = CastFunction;
  table["Where"] = WhereFunction;
  table["Add"] = ArithFunction(Arith::kAdd);
  table["Sub"] = ArithFunction(Arith::kSub);
  table["Mul"] = ArithFunction(Arith::kMul);
  table["Div"] = ArithFunction(Arith::kDiv);
  table["Mod"] = ArithFunction(Arith::kMod);
  table["Min"] = ArithFunction(Arith::kMin);
  table["Max"] = ArithFunction(Arith::kMax);
  table["Pow"] = ArithFunction(Arith::kPow);
  table["Sum"] = ArithFunction(Arith::kAdd);
  table["Equal"] = CompareFunction(Compare::kEqual);
  table["Less"] = CompareFunction(Compare::kLess);
  table["Greater"] = CompareFunction(Compare::kGreater);
  table["LessOrEqual"] = CompareFunction(Compare::kLessOrEqual);
  table["GreaterOrEqual"] = CompareFunction(Compare::kGreaterOrEqual);
  table["And"] = CompareFunction(Compare::kAnd);
  table["Or"] = CompareFunction(Compare::kOr);
  table["Xor"] = CompareFunction(Compare::kXor);
  const auto identity = [](const Expr& e) -> std::optional<Expr> { return e; };
  const auto same = [](double f) { return f; };
  table["Identity"] = UnaryFunction(identity, same);
  table["Dropout"] = UnaryFunction(identity, same);
  table["Neg"] = UnaryFunction([](const Expr& e) -> std::optional<Expr> { return -e; }, [](double f) { return -f; });
  table["Abs"] = UnaryFunction(
      [](const Expr& e) -> std::optional<Expr> {
        std::optional<int64_t> c = e.AsConstant();
        if (!c.has_value()) return std::nullopt;
        return Expr(*c < 0 ? -*c : *c);
      },
      [](double f) { return std::fabs(f); });
  table["Not"] = UnaryFunction(
      [](const Expr& e) -> std::optional<Expr> {
        std::optional<int64_t> c = e.AsConstant();
        if (!c.has_value()) return std::nullopt;
        return Expr(*c == 0 ? 1 : 0);
      },
      nullptr, /*to_bool=*/true);
  table["Floor"] = UnaryFunction(identity, [](double f) { return std::floor(f); });
  table["Ceil"] = UnaryFunction(identity, [](double f) { return std::ceil(f); });
  table["Round"] = UnaryFunction(identity, [](double f) { return std::nearbyint(f); });
  table["Sqrt"] = UnaryFunction(nullptr, [](double f) { return std::sqrt(f); });
  table["Reciprocal"] = UnaryFunction(nullptr, [](double f) { return 1.0 / f; });
  table["Relu"] = UnaryFunction(nullptr, nullptr);
  table["Sigmoid"] = UnaryFunction(nullptr, nullptr);
  table["Tanh"] = UnaryFunction(nullptr, nullptr);
  table["Erf"] = UnaryFunction(nullptr, nullptr);
  table["Softmax"] = UnaryFunction(nullptr, nullptr);
  table["LogSoftmax"] = UnaryFunction(nullptr, nullptr);
  table["Exp"] = UnaryFunction(nullptr, nullptr);
  table["Log"] = UnaryFunction(nullptr, nullptr);
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Softplus", "Softsign",
                         "ThresholdedRelu", "Mish", "Gelu", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                         "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Hardmax", "Shrink", "BitwiseNot"}) {
    table[op] = UnaryFunction(nullptr, nullptr);
  }
  for (const char* op : {"IsNaN", "IsInf"}) table[op] = UnaryFunction(nullptr, nullptr, /*to_bool=*/true);
}

}  // namespace footprint::symbolic
