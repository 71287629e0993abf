// Shape functions of default-domain ops that compute or consume shapes: they
// carry small integer tensors' values along (data propagation) and keep dims
// symbolic where ONNX's own functions give up.
#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/tensor_size.h"

namespace footprint::symbolic {

// --- OpContext and shared helpers --------------------------------------------

const onnx::AttributeProto* OpContext::Attribute(const std::string& name) const {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
int64_t OpContext::Int(const std::string& name, int64_t fallback) const {
  const onnx::AttributeProto* a = Attribute(name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}
float OpContext::Float(const std::string& name, float fallback) const {
  const onnx::AttributeProto* a = Attribute(name);
  return a != nullptr && a->has_f() ? a->f() : fallback;
}
std::string OpContext::String(const std::string& name, const std::string& fallback) const {
  const onnx::AttributeProto* a = Attribute(name);
  return a != nullptr && a->has_s() ? a->s() : fallback;
}
std::optional<std::vector<int64_t>> OpContext::Ints(const std::string& name) const {
  const onnx::AttributeProto* a = Attribute(name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

SymValue TensorOf(int32_t elem_type, std::vector<Expr> shape) {
  SymValue v;
  v.kind = SymValue::Kind::kTensor;
  v.elem_type = elem_type;
  v.shape = std::move(shape);
  return v;
}

SymValue UnknownValue(const std::string& reason) {
  SymValue v;
  v.reason = reason;
  return v;
}

Expr ElementCount(const std::vector<Expr>& shape) {
  Expr count = 1;
  for (const Expr& d : shape) count = count * d;
  return count;
}

std::vector<Expr> Broadcast(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<Expr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Expr* x = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Expr* y = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (x == nullptr) {
      out[i] = *y;
    } else if (y == nullptr) {
      out[i] = *x;
    } else if (*x == *y) {
      out[i] = *x;
    } else if (x->IsConstant(1)) {
      out[i] = *y;
    } else if (y->IsConstant(1)) {
      out[i] = *x;
    } else if (x->AsConstant().has_value() && !y->known()) {
      out[i] = *x;  // x > 1: y must be x or 1.
    } else if (y->AsConstant().has_value() && !x->known()) {
      out[i] = *y;
    } else if (x->known() && y->known() && !x->AsConstant().has_value() && y->AsConstant().has_value()) {
      out[i] = *y;  // A symbol against a constant > 1: the symbol must be 1 or equal.
    } else if (x->known() && y->known() && x->AsConstant().has_value() && !y->AsConstant().has_value()) {
      out[i] = *x;
    } else {
      out[i] = Expr::Unknown();
    }
  }
  return out;
}

std::string BroadcastConflict(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  const size_t rank = std::max(a.size(), b.size());
  for (size_t i = 0; i < rank; ++i) {
    if (i + a.size() < rank || i + b.size() < rank) continue;
    std::optional<int64_t> x = a[i + a.size() - rank].AsConstant();
    std::optional<int64_t> y = b[i + b.size() - rank].AsConstant();
    if (x.has_value() && y.has_value() && *x != *y && *x != 1 && *y != 1) {
      return absl::StrCat("dims ", *x, " and ", *y, " do not broadcast (are the bound dims consistent?)");
    }
  }
  return "";
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> ConstantInts(const SymValue* value) {
  if (value == nullptr || !value->ints.has_value()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(value->ints->size());
  for (const Expr& x : *value->ints) {
    std::optional<int64_t> c = x.AsConstant();
    if (!c.has_value()) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

bool IsIntegerType(int32_t t) {
  switch (t) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

bool IsFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::DOUBLE || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16;
}

namespace {

using Outputs = std::vector<SymValue>;

bool Known(const SymValue* v) { return v != nullptr && v->kind == SymValue::Kind::kTensor; }
bool Ranked(const SymValue* v) { return Known(v) && v->shape.has_value(); }

// The elements of a value as expressions: ints, or floats that are whole numbers.
std::optional<std::vector<Expr>> IntValues(const SymValue* v) {
  if (v == nullptr) return std::nullopt;
  if (v->ints.has_value()) return v->ints;
  if (v->floats.has_value()) {
    std::vector<Expr> out;
    for (double x : *v->floats) {
      if (x != std::floor(x) || std::fabs(x) > 9e15) return std::nullopt;
      out.push_back(Expr(static_cast<int64_t>(x)));
    }
    return out;
  }
  return std::nullopt;
}

// Keeps a value's elements only when small and row-major consistent with its shape.
void SetInts(SymValue& v, std::vector<Expr> values) {
  if (static_cast<int64_t>(values.size()) <= kMaxPropagatedElements) v.ints = std::move(values);
}

// The product of `dims`, or nullopt when a dim is negative or it overflows:
// dims come from the model file, and may be anything.
std::optional<int64_t> CheckedElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  return count;
}

// For each element of `out`, the flat index into a tensor of shape `in` broadcast to it.
std::optional<std::vector<int64_t>> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  const std::optional<int64_t> checked = CheckedElementCount(out);
  if (!checked.has_value() || *checked > kMaxPropagatedElements) return std::nullopt;
  const int64_t count = *checked;
  std::vector<int64_t> index(count);
  const size_t offset = out.size() - in.size();
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
      const int64_t coord = rest % out[k];
      rest /= out[k];
      if (k >= offset) {
        const int64_t dim = in[k - offset];
        src += (dim == 1 ? 0 : coord) * stride;
        stride *= dim;
      }
    }
    index[flat] = src;
  }
  return index;
}

// --- Elementwise ------------------------------------------------------------

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

ShapeFunction CompareFunction(Compare op) {
  return [op](const OpContext& ctx, Outputs& out) {
    std::optional<std::vector<Expr>> shape = BroadcastInputs(ctx);
    if (!shape.has_value() || ctx.inputs.size() != 2) return false;
    SymValue result = TensorOf(onnx::TensorProto::BOOL, *shape);
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
  std::optional<std::vector<Expr>> shape = BroadcastInputs(ctx);
  if (!shape.has_value() || ctx.inputs.size() != 3) return false;
  SymValue result = TensorOf(ctx.inputs[1]->elem_type != 0 ? ctx.inputs[1]->elem_type : ctx.inputs[2]->elem_type,
                             *shape);
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

// --- Shape ops ----------------------------------------------------------------

bool ShapeFunctionOp(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  int64_t start = ctx.Int("start", 0), end = ctx.Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SymValue result = TensorOf(onnx::TensorProto::INT64, {Expr(end - start)});
  std::vector<Expr> values(x->shape->begin() + start, x->shape->begin() + end);
  if (std::all_of(values.begin(), values.end(), [](const Expr& e) { return e.known(); })) {
    result.ints = std::move(values);
  }
  out[0] = std::move(result);
  return true;
}

bool SizeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  SymValue result = TensorOf(onnx::TensorProto::INT64, {});
  if (Ranked(x)) {
    Expr count = ElementCount(*x->shape);
    if (count.known()) result.ints = std::vector<Expr>{count};
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

std::optional<std::vector<int64_t>> AxesOf(const OpContext& ctx, size_t input_index) {
  if (const SymValue* axes = ctx.Input(input_index); axes != nullptr) return ConstantInts(axes);
  return ctx.Ints("axes");
}

bool UnsqueezeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  std::optional<std::vector<int64_t>> axes = AxesOf(ctx, 1);
  if (!axes.has_value()) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size() + axes->size());
  std::vector<bool> is_new(rank, false);
  for (int64_t axis : *axes) {
    std::optional<int64_t> a = NormalizeAxis(axis, rank);
    if (!a.has_value()) return false;
    is_new[*a] = true;
  }
  std::vector<Expr> shape;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (is_new[i]) {
      shape.push_back(Expr(1));
    } else if (k < x->shape->size()) {
      shape.push_back((*x->shape)[k++]);
    } else {
      return false;
    }
  }
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  result.ints = x->ints;
  result.floats = x->floats;
  out[0] = std::move(result);
  return true;
}

bool SqueezeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  std::optional<std::vector<int64_t>> axes = AxesOf(ctx, 1);
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::vector<bool> drop(rank, false);
  if (axes.has_value()) {
    for (int64_t axis : *axes) {
      std::optional<int64_t> a = NormalizeAxis(axis, rank);
      if (!a.has_value()) return false;
      drop[*a] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) {
      if (!(*x->shape)[i].AsConstant().has_value()) return false;  // Which dims are 1 is not known.
      drop[i] = (*x->shape)[i].IsConstant(1);
    }
  }
  std::vector<Expr> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) shape.push_back((*x->shape)[i]);
  }
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  result.ints = x->ints;
  result.floats = x->floats;
  out[0] = std::move(result);
  return true;
}

bool ReshapeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Known(x)) return false;
  std::optional<std::vector<Expr>> target;
  if (ctx.opset >= 5 || ctx.Input(1) != nullptr) {
    target = IntValues(ctx.Input(1));
  } else if (std::optional<std::vector<int64_t>> attr = ctx.Ints("shape")) {
    target.emplace(attr->begin(), attr->end());
  }
  const bool allow_zero = ctx.Int("allowzero", 0) != 0;
  if (!target.has_value()) {
    const SymValue* shape_input = ctx.Input(1);
    if (shape_input != nullptr && shape_input->shape.has_value() && shape_input->shape->size() == 1) {
      if (std::optional<int64_t> rank = (*shape_input->shape)[0].AsConstant(); rank.has_value() && *rank >= 0 && *rank <= 1024) {
        SymValue result = TensorOf(x->elem_type, std::vector<Expr>(*rank, Expr::Unknown()));
        result.reason = "Reshape to a shape computed from values not known before running";
        out[0] = std::move(result);
        return true;
      }
    }
    return false;
  }
  std::vector<Expr> shape = *target;
  int minus_one = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    std::optional<int64_t> c = shape[i].AsConstant();
    if (c == 0 && !allow_zero) {
      shape[i] = x->shape.has_value() && i < x->shape->size() ? (*x->shape)[i] : Expr::Unknown();
    } else if (c == -1) {
      minus_one = static_cast<int>(i);
    }
  }
  if (minus_one >= 0) {
    Expr known_part = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int>(i) != minus_one) known_part = known_part * shape[i];
    }
    shape[minus_one] = x->shape.has_value() ? Expr::DivideExact(ElementCount(*x->shape), known_part)
                                            : Expr::Unknown();
  }
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  result.ints = x->ints;
  result.floats = x->floats;
  if (!result.HasFullShape()) result.reason = "Reshape: a target dim is not known";
  out[0] = std::move(result);
  return true;
}

bool FlattenFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  int64_t axis = ctx.Int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return false;
  Expr outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) = (i < axis ? outer : inner) * (*x->shape)[i];
  SymValue result = TensorOf(x->elem_type, {outer, inner});
  result.ints = x->ints;
  result.floats = x->floats;
  out[0] = std::move(result);
  return true;
}

bool ConcatFunction(const OpContext& ctx, Outputs& out) {
  std::vector<const SymValue*> parts;
  for (const SymValue* v : ctx.inputs) {
    if (!Ranked(v)) return false;
    parts.push_back(v);
  }
  if (parts.empty()) return false;
  const int64_t rank = static_cast<int64_t>(parts[0]->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::vector<Expr> shape = *parts[0]->shape;
  shape[*axis] = 0;
  for (const SymValue* v : parts) {
    if (static_cast<int64_t>(v->shape->size()) != rank) return false;
    shape[*axis] = shape[*axis] + (*v->shape)[*axis];
    for (int64_t i = 0; i < rank; ++i) {
      if (i != *axis && !shape[i].AsConstant().has_value() && (*v->shape)[i].AsConstant().has_value()) {
        shape[i] = (*v->shape)[i];
      }
    }
  }
  SymValue result = TensorOf(parts[0]->elem_type, std::move(shape));
  if (rank == 1) {
    std::vector<Expr> ints;
    std::vector<double> floats;
    bool have_ints = true, have_floats = true;
    for (const SymValue* v : parts) {
      have_ints = have_ints && v->ints.has_value();
      have_floats = have_floats && v->floats.has_value();
      if (have_ints) ints.insert(ints.end(), v->ints->begin(), v->ints->end());
      if (have_floats) floats.insert(floats.end(), v->floats->begin(), v->floats->end());
    }
    if (have_ints) SetInts(result, std::move(ints));
    if (have_floats) result.floats = std::move(floats);
  }
  out[0] = std::move(result);
  return true;
}

bool GatherFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* data = ctx.Input(0);
  const SymValue* indices = ctx.Input(1);
  if (!Ranked(data) || !Ranked(indices)) return false;
  const int64_t rank = static_cast<int64_t>(data->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::vector<Expr> shape(data->shape->begin(), data->shape->begin() + *axis);
  shape.insert(shape.end(), indices->shape->begin(), indices->shape->end());
  shape.insert(shape.end(), data->shape->begin() + *axis + 1, data->shape->end());
  SymValue result = TensorOf(data->elem_type, std::move(shape));
  std::optional<std::vector<int64_t>> index = ConstantInts(indices);
  if (rank == 1 && index.has_value()) {
    std::optional<int64_t> size = (*data->shape)[0].AsConstant();
    auto pick = [&](int64_t i) -> std::optional<int64_t> {
      if (!size.has_value()) return std::nullopt;
      if (i < 0) i += *size;
      if (i < 0 || i >= *size) return std::nullopt;
      return i;
    };
    if (data->ints.has_value()) {
      std::vector<Expr> values;
      for (int64_t i : *index) {
        std::optional<int64_t> k = pick(i);
        if (!k.has_value()) break;
        values.push_back((*data->ints)[*k]);
      }
      if (values.size() == index->size()) SetInts(result, std::move(values));
    } else if (data->floats.has_value()) {
      std::vector<double> values;
      for (int64_t i : *index) {
        std::optional<int64_t> k = pick(i);
        if (!k.has_value()) break;
        values.push_back((*data->floats)[*k]);
      }
      if (values.size() == index->size()) result.floats = std::move(values);
    }
  }
  out[0] = std::move(result);
  return true;
}

// One axis of a Slice: start, end, step as given (possibly symbolic), dim D.
Expr SliceLength(const Expr& dim, const Expr& start_in, const Expr& end_in, int64_t step, std::vector<Expr>* picked,
                 const std::vector<Expr>* values) {
  constexpr int64_t kHuge = int64_t{1} << 31;  // Ends past this mean "to the end" (dims are smaller).
  auto clamp_index = [&](const Expr& index, bool is_end) -> Expr {
    std::optional<int64_t> c = index.AsConstant();
    if (c.has_value()) {
      if (step > 0) {
        if (*c >= kHuge) return dim;
        if (*c <= -kHuge) return Expr(0);
        if (*c < 0) return Expr::Max(Expr(0), dim + Expr(*c));
        if (*c == 0) return Expr(0);
        return Expr::Min(Expr(*c), dim);
      }
      // step < 0: indices are clamped to [-1, D-1].
      if (*c >= kHuge) return dim - Expr(1);
      if (*c <= -kHuge) return Expr(-1);
      if (*c < 0) return Expr::Max(is_end ? Expr(-1) : Expr(0) - Expr(1), dim + Expr(*c));
      return Expr::Min(Expr(*c), dim - Expr(1));
    }
    // A symbolic index (from a Shape) is taken as non-negative.
    return step > 0 ? Expr::Min(index, dim) : Expr::Min(index, dim - Expr(1));
  };
  const Expr start = clamp_index(start_in, false);
  const Expr end = clamp_index(end_in, true);
  Expr length = step > 0 ? Expr::Max(Expr(0), Expr::CeilDiv(end - start, step))
                         : Expr::Max(Expr(0), Expr::CeilDiv(start - end, -step));
  if (picked != nullptr && values != nullptr) {
    std::optional<int64_t> s = start.AsConstant(), n = length.AsConstant();
    if (s.has_value() && n.has_value()) {
      for (int64_t k = 0; k < *n; ++k) {
        const int64_t i = *s + k * step;
        if (i < 0 || i >= static_cast<int64_t>(values->size())) return length;
        picked->push_back((*values)[i]);
      }
    }
  }
  return length;
}

bool SliceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<std::vector<Expr>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.opset >= 10) {
    starts = IntValues(ctx.Input(1));
    ends = IntValues(ctx.Input(2));
    if (ctx.Input(3) != nullptr) {
      axes = ConstantInts(ctx.Input(3));
      if (!axes.has_value()) return false;
    }
    if (ctx.Input(4) != nullptr) {
      steps = ConstantInts(ctx.Input(4));
      if (!steps.has_value()) return false;
    }
  } else {
    if (auto s = ctx.Ints("starts")) starts.emplace(s->begin(), s->end());
    if (auto e = ctx.Ints("ends")) ends.emplace(e->begin(), e->end());
    axes = ctx.Ints("axes");
  }
  if (!starts.has_value() || !ends.has_value() || starts->size() != ends->size()) {
    // The rank is still known.
    SymValue result = TensorOf(x->elem_type, *x->shape);
    if (!starts.has_value() || !ends.has_value()) {
      std::optional<std::vector<int64_t>> known_axes = axes;
      if (!known_axes.has_value()) {
        for (Expr& d : *result.shape) d = Expr::Unknown();
      } else {
        for (int64_t a : *known_axes) {
          if (std::optional<int64_t> n = NormalizeAxis(a, rank)) (*result.shape)[*n] = Expr::Unknown();
        }
      }
      result.reason = "Slice bounds computed from values not known before running";
    }
    out[0] = std::move(result);
    return true;
  }
  if (!axes.has_value()) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps.has_value()) steps = std::vector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return false;
  std::vector<Expr> shape = *x->shape;
  std::vector<Expr> picked;
  const bool propagate = rank == 1 && x->ints.has_value() && starts->size() == 1;
  for (size_t i = 0; i < starts->size(); ++i) {
    std::optional<int64_t> axis = NormalizeAxis((*axes)[i], rank);
    if (!axis.has_value() || (*steps)[i] == 0) return false;
    shape[*axis] = SliceLength((*x->shape)[*axis], (*starts)[i], (*ends)[i], (*steps)[i],
                               propagate ? &picked : nullptr, propagate ? &*x->ints : nullptr);
  }
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  if (propagate && result.shape->at(0).AsConstant() == static_cast<int64_t>(picked.size())) {
    SetInts(result, std::move(picked));
  }
  out[0] = std::move(result);
  return true;
}

std::optional<std::vector<Expr>> ShapeInput(const OpContext& ctx, size_t i) { return IntValues(ctx.Input(i)); }

bool ExpandFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  std::optional<std::vector<Expr>> target = ShapeInput(ctx, 1);
  if (!target.has_value()) return false;
  SymValue result = TensorOf(x->elem_type, Broadcast(*x->shape, *target));
  if (!result.HasFullShape()) result.reason = BroadcastConflict(*x->shape, *target);
  if (std::optional<std::vector<int64_t>> concrete = result.ConcreteShape();
      concrete.has_value() && x->ints.has_value()) {
    if (std::optional<std::vector<int64_t>> idx = BroadcastIndex(*x->ConcreteShape(), *concrete)) {
      std::vector<Expr> values;
      for (int64_t i : *idx) values.push_back((*x->ints)[i]);
      SetInts(result, std::move(values));
    }
  }
  out[0] = std::move(result);
  return true;
}

bool ConstantOfShapeFunction(const OpContext& ctx, Outputs& out) {
  std::optional<std::vector<Expr>> target = ShapeInput(ctx, 0);
  int32_t type = onnx::TensorProto::FLOAT;
  std::optional<Expr> fill_int;
  std::optional<double> fill_float = 0.0;
  if (const onnx::AttributeProto* value = ctx.Attribute("value"); value != nullptr && value->has_t()) {
    type = value->t().data_type();
    // The fill value is a one-element tensor.
    const onnx::TensorProto& t = value->t();
    if (t.int64_data_size() == 1) fill_int = Expr(t.int64_data(0));
    if (t.int32_data_size() == 1) fill_int = Expr(t.int32_data(0));
    if (t.float_data_size() == 1) fill_float = t.float_data(0);
    if (t.raw_data().size() == 8 && type == onnx::TensorProto::INT64) {
      int64_t v;
      std::memcpy(&v, t.raw_data().data(), 8);
      fill_int = Expr(v);
    }
    if (t.raw_data().size() == 4 && type == onnx::TensorProto::INT32) {
      int32_t v;
      std::memcpy(&v, t.raw_data().data(), 4);
      fill_int = Expr(v);
    }
    if (t.raw_data().size() == 4 && type == onnx::TensorProto::FLOAT) {
      float v;
      std::memcpy(&v, t.raw_data().data(), 4);
      fill_float = v;
    }
    if (t.raw_data().size() == 1 && IsIntegerType(type)) fill_int = Expr(static_cast<uint8_t>(t.raw_data()[0]));
  }
  if (!target.has_value()) {
    const SymValue* shape_input = ctx.Input(0);
    if (shape_input != nullptr && shape_input->shape.has_value() && shape_input->shape->size() == 1) {
      if (std::optional<int64_t> rank = (*shape_input->shape)[0].AsConstant(); rank.has_value() && *rank >= 0 && *rank <= 1024) {
        SymValue result = TensorOf(type, std::vector<Expr>(*rank, Expr::Unknown()));
        result.reason = "ConstantOfShape of a shape computed from values not known before running";
        out[0] = std::move(result);
        return true;
      }
    }
    return false;
  }
  SymValue result = TensorOf(type, *target);
  if (std::optional<std::vector<int64_t>> concrete = result.ConcreteShape()) {
    const int64_t count = CheckedElementCount(*concrete).value_or(-1);
    if (count >= 0 && count <= kMaxPropagatedElements) {
      if (IsIntegerType(type) && fill_int.has_value()) result.ints = std::vector<Expr>(count, *fill_int);
      if (IsFloatType(type) && fill_float.has_value()) result.floats = std::vector<double>(count, *fill_float);
    }
  }
  out[0] = std::move(result);
  return true;
}

bool RangeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* start = ctx.Input(0);
  if (start == nullptr) return false;
  const int32_t type = start->elem_type;
  SymValue result = TensorOf(type, {Expr::Unknown()});
  result.reason = "Range bounds not known before running";
  std::optional<std::vector<Expr>> s = IntValues(ctx.Input(0)), l = IntValues(ctx.Input(1)),
                                   d = IntValues(ctx.Input(2));
  if (IsIntegerType(type) && s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
    std::optional<int64_t> delta = (*d)[0].AsConstant();
    if (delta.has_value() && *delta != 0) {
      const Expr span = *delta > 0 ? (*l)[0] - (*s)[0] : (*s)[0] - (*l)[0];
      const Expr count = Expr::Max(Expr(0), Expr::CeilDiv(span, std::abs(*delta)));
      (*result.shape)[0] = count;
      result.reason.clear();
      std::optional<int64_t> n = count.AsConstant();
      std::optional<int64_t> first = (*s)[0].AsConstant();
      if (n.has_value() && first.has_value() && *n <= kMaxPropagatedElements) {
        std::vector<Expr> values;
        for (int64_t i = 0; i < *n; ++i) values.push_back(Expr(*first + i * *delta));
        result.ints = std::move(values);
      }
    }
  } else if (start->floats.has_value() && ctx.Input(1) != nullptr && ctx.Input(1)->floats.has_value() &&
             ctx.Input(2) != nullptr && ctx.Input(2)->floats.has_value() && start->floats->size() == 1) {
    const double a = (*start->floats)[0], b = (*ctx.Input(1)->floats)[0], step = (*ctx.Input(2)->floats)[0];
    if (step != 0) {
      (*result.shape)[0] = Expr(std::max<int64_t>(0, static_cast<int64_t>(std::ceil((b - a) / step))));
      result.reason.clear();
    }
  }
  out[0] = std::move(result);
  return true;
}

bool TileFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  std::optional<std::vector<Expr>> repeats = ShapeInput(ctx, 1);
  if (!repeats.has_value() || repeats->size() != x->shape->size()) return false;
  std::vector<Expr> shape;
  for (size_t i = 0; i < repeats->size(); ++i) shape.push_back((*x->shape)[i] * (*repeats)[i]);
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  if (x->ints.has_value() && x->shape->size() == 1) {
    if (std::optional<int64_t> r = (*repeats)[0].AsConstant();
        r.has_value() && *r >= 0 && *r <= kMaxPropagatedElements &&
        *r * static_cast<int64_t>(x->ints->size()) <= kMaxPropagatedElements) {
      std::vector<Expr> values;
      for (int64_t k = 0; k < *r; ++k) values.insert(values.end(), x->ints->begin(), x->ints->end());
      result.ints = std::move(values);
    }
  }
  out[0] = std::move(result);
  return true;
}

bool ReduceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const std::string& op = ctx.node.op_type();
  const bool axes_from_input = ctx.opset >= 18 || (op == "ReduceSum" && ctx.opset >= 13);
  std::optional<std::vector<int64_t>> axes;
  if (axes_from_input) {
    if (ctx.Input(1) != nullptr) {
      axes = ConstantInts(ctx.Input(1));
      if (!axes.has_value()) return false;
    }
  } else {
    axes = ctx.Ints("axes");
  }
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::vector<bool> reduce(rank, false);
  if (!axes.has_value() || axes->empty()) {
    if (ctx.Int("noop_with_empty_axes", 0) != 0) {
      out[0] = *x;
      return true;
    }
    reduce.assign(rank, true);
  } else {
    for (int64_t a : *axes) {
      std::optional<int64_t> n = NormalizeAxis(a, rank);
      if (!n.has_value()) return false;
      reduce[*n] = true;
    }
  }
  std::vector<Expr> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduce[i]) {
      shape.push_back((*x->shape)[i]);
    } else if (keepdims) {
      shape.push_back(Expr(1));
    }
  }
  const bool arg = op == "ArgMax" || op == "ArgMin";
  SymValue result = TensorOf(arg ? onnx::TensorProto::INT64 : x->elem_type, std::move(shape));
  if (arg) {  // ArgMax/ArgMin: one axis attribute.
    std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
    if (!axis.has_value()) return false;
    result.shape = *x->shape;
    if (keepdims) {
      (*result.shape)[*axis] = Expr(1);
    } else {
      result.shape->erase(result.shape->begin() + *axis);
    }
  } else if (rank == 1 && x->ints.has_value() && reduce[0]) {
    Expr acc = op == "ReduceProd" ? Expr(1) : Expr(0);
    bool ok = op == "ReduceProd" || op == "ReduceSum" || ((op == "ReduceMax" || op == "ReduceMin") && !x->ints->empty());
    for (size_t i = 0; ok && i < x->ints->size(); ++i) {
      const Expr& e = (*x->ints)[i];
      if (op == "ReduceProd") acc = acc * e;
      if (op == "ReduceSum") acc = acc + e;
      if (op == "ReduceMax") acc = i == 0 ? e : Expr::Max(acc, e);
      if (op == "ReduceMin") acc = i == 0 ? e : Expr::Min(acc, e);
    }
    if (ok && acc.known()) result.ints = std::vector<Expr>{acc};
  } else if (rank == 1 && x->floats.has_value() && reduce[0] && !x->floats->empty()) {
    double acc = op == "ReduceProd" ? 1.0 : op == "ReduceMax" || op == "ReduceMin" ? (*x->floats)[0] : 0.0;
    for (double f : *x->floats) {
      if (op == "ReduceProd") acc *= f;
      if (op == "ReduceSum" || op == "ReduceMean") acc += f;
      if (op == "ReduceMax") acc = std::max(acc, f);
      if (op == "ReduceMin") acc = std::min(acc, f);
    }
    if (op == "ReduceMean") acc /= static_cast<double>(x->floats->size());
    result.floats = std::vector<double>{acc};
  }
  out[0] = std::move(result);
  return true;
}

bool SplitFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::optional<std::vector<Expr>> sizes;
  if (ctx.opset >= 13) {
    if (ctx.Input(1) != nullptr) {
      sizes = IntValues(ctx.Input(1));
      if (!sizes.has_value()) return false;
    }
  } else if (auto split = ctx.Ints("split")) {
    sizes.emplace(split->begin(), split->end());
  }
  const Expr dim = (*x->shape)[*axis];
  const int64_t n = static_cast<int64_t>(out.size());
  if (!sizes.has_value()) {
    sizes.emplace();
    if (n <= 0) return false;
    if (std::optional<int64_t> d = dim.AsConstant(); d.has_value() && *d % n != 0) {
      // Opset 18 num_outputs: ceil-sized chunks, the last one smaller.
      const int64_t chunk = (*d + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) sizes->push_back(Expr(std::min(chunk, *d - i * chunk)));
    } else {
      for (int64_t i = 0; i < n; ++i) sizes->push_back(Expr::DivideExact(dim, Expr(n)));
    }
  }
  if (static_cast<int64_t>(sizes->size()) != n) return false;
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    SymValue part = TensorOf(x->elem_type, *x->shape);
    (*part.shape)[*axis] = (*sizes)[i];
    // Splitting a 1-D shape tensor: each part keeps its values.
    std::optional<int64_t> size = (*sizes)[i].AsConstant();
    if (x->shape->size() == 1 && size.has_value() && offset >= 0) {
      if (x->ints.has_value() && offset + *size <= static_cast<int64_t>(x->ints->size())) {
        part.ints.emplace(x->ints->begin() + offset, x->ints->begin() + offset + *size);
      }
      if (x->floats.has_value() && offset + *size <= static_cast<int64_t>(x->floats->size())) {
        part.floats.emplace(x->floats->begin() + offset, x->floats->begin() + offset + *size);
      }
      offset += *size;
    } else {
      offset = -1;
    }
    out[i] = std::move(part);
  }
  return true;
}

bool ResizeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  const bool upsample = ctx.node.op_type() == "Upsample";
  const SymValue* scales_in = upsample || ctx.opset < 11 ? ctx.Input(1) : ctx.Input(2);
  const SymValue* sizes_in = upsample || ctx.opset < 11 ? nullptr : ctx.Input(3);
  std::optional<std::vector<int64_t>> axes = ctx.Ints("axes");
  if (!axes.has_value()) {
    axes.emplace();
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  std::vector<Expr> shape = *x->shape;
  SymValue result = TensorOf(x->elem_type, shape);
  std::optional<std::vector<Expr>> sizes = sizes_in != nullptr ? IntValues(sizes_in) : std::nullopt;
  std::optional<std::vector<double>> scales;
  if (scales_in != nullptr && scales_in->floats.has_value() && !scales_in->floats->empty()) scales = scales_in->floats;
  if (upsample && ctx.opset < 9) {
    if (const onnx::AttributeProto* a = ctx.Attribute("scales")) scales.emplace(a->floats().begin(), a->floats().end());
  }
  const std::string policy = ctx.String("keep_aspect_ratio_policy", "stretch");
  if (sizes.has_value() && sizes->size() == axes->size() && policy == "stretch") {
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> a = NormalizeAxis((*axes)[i], rank);
      if (!a.has_value()) return false;
      (*result.shape)[*a] = (*sizes)[i];
    }
  } else if (scales.has_value() && scales->size() == axes->size()) {
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> a = NormalizeAxis((*axes)[i], rank);
      if (!a.has_value()) return false;
      const double s = (*scales)[i];
      const Expr& d = (*x->shape)[*a];
      Expr r = Expr::Unknown();
      if (std::optional<int64_t> c = d.AsConstant()) {
        r = Expr(static_cast<int64_t>(std::floor(static_cast<double>(*c) * s)));
      } else if (s == std::floor(s) && s > 0) {
        r = d * Expr(static_cast<int64_t>(s));
      } else if (s > 0 && 1.0 / s == std::floor(1.0 / s)) {
        r = Expr::FloorDiv(d, static_cast<int64_t>(1.0 / s));
      }
      (*result.shape)[*a] = r;
    }
  } else {
    for (int64_t a : *axes) {
      if (std::optional<int64_t> n = NormalizeAxis(a, rank)) (*result.shape)[*n] = Expr::Unknown();
    }
    result.reason = absl::StrCat(ctx.node.op_type(), ": scales/sizes computed from values not known before running");
  }
  out[0] = std::move(result);
  return true;
}

bool DataDependent(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  const std::string reason = absl::StrCat("data-dependent shape: ", ctx.node.op_type(),
                                          "'s output size depends on the input values");
  const std::string& op = ctx.node.op_type();
  for (size_t o = 0; o < out.size(); ++o) {
    SymValue v = UnknownValue(reason);
    v.kind = SymValue::Kind::kTensor;
    v.elem_type = op == "NonZero" || (op == "Unique" && o > 0) ? onnx::TensorProto::INT64
                                                                : (x != nullptr ? x->elem_type : 0);
    const onnx::AttributeProto* axis = ctx.Attribute("axis");
    if (op == "NonZero" && Ranked(x)) {
      v.shape = std::vector<Expr>{Expr(static_cast<int64_t>(x->shape->size())), Expr::Unknown()};
    } else if (axis != nullptr && Ranked(x) && (op == "Compress" || o == 0)) {
      // Along an axis the rank stays; only that axis' length is data-dependent.
      v.shape = *x->shape;
      if (std::optional<int64_t> a = NormalizeAxis(axis->i(), static_cast<int64_t>(x->shape->size()))) {
        (*v.shape)[*a] = Expr::Unknown();
      } else {
        v.shape.reset();
      }
    } else if (op == "Compress" || op == "Unique") {
      v.shape = std::vector<Expr>{Expr::Unknown()};
    }
    out[o] = std::move(v);
  }
  return true;
}

// --- Sequences --------------------------------------------------------------

SymValue SequenceOf(std::vector<SymValue> elements, int32_t elem_type) {
  SymValue s;
  s.kind = SymValue::Kind::kSequence;
  s.elem_type = elem_type;
  s.elements_known = true;
  if (!elements.empty()) s.shape = elements[0].shape;
  for (SymValue& e : elements) {
    e.ints.reset();
    e.floats.reset();
    if (s.shape.has_value() && (!e.shape.has_value() || e.shape->size() != s.shape->size())) {
      s.shape.reset();
    } else if (s.shape.has_value()) {
      for (size_t i = 0; i < s.shape->size(); ++i) {
        if ((*s.shape)[i] != (*e.shape)[i]) (*s.shape)[i] = Expr::Unknown();
      }
    }
  }
  s.elements = std::move(elements);
  return s;
}

bool SequenceConstructFunction(const OpContext& ctx, Outputs& out) {
  std::vector<SymValue> elements;
  for (const SymValue* v : ctx.inputs) {
    if (v == nullptr) return false;
    elements.push_back(*v);
  }
  out[0] = SequenceOf(std::move(elements), elements.empty() ? 0 : elements[0].elem_type);
  if (!ctx.inputs.empty()) out[0].elem_type = ctx.inputs[0]->elem_type;
  return true;
}

bool SequenceEmptyFunction(const OpContext& ctx, Outputs& out) {
  out[0] = SequenceOf({}, static_cast<int32_t>(ctx.Int("dtype", onnx::TensorProto::FLOAT)));
  return true;
}

std::optional<int64_t> SequencePosition(const OpContext& ctx, size_t input, int64_t size, bool insert) {
  if (ctx.Input(input) == nullptr) return insert ? size : size - 1;
  std::optional<std::vector<int64_t>> p = ConstantInts(ctx.Input(input));
  if (!p.has_value() || p->size() != 1) return std::nullopt;
  int64_t i = (*p)[0];
  if (i < 0) i += size;
  if (i < 0 || i > (insert ? size : size - 1)) return std::nullopt;
  return i;
}

SymValue SequenceUnknownLength(const SymValue& from, const std::string& reason) {
  SymValue s = from;
  s.elements.clear();
  s.elements_known = false;
  s.reason = reason;
  return s;
}

bool SequenceInsertFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  const SymValue* t = ctx.Input(1);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence || t == nullptr) return false;
  if (seq->elements_known) {
    std::optional<int64_t> at = SequencePosition(ctx, 2, static_cast<int64_t>(seq->elements.size()), true);
    if (at.has_value()) {
      std::vector<SymValue> elements = seq->elements;
      elements.insert(elements.begin() + *at, *t);
      out[0] = SequenceOf(std::move(elements), seq->elem_type != 0 ? seq->elem_type : t->elem_type);
      return true;
    }
  }
  out[0] = SequenceUnknownLength(*seq, "sequence whose length is not known before running");
  return true;
}

bool SequenceEraseFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  if (seq->elements_known && !seq->elements.empty()) {
    std::optional<int64_t> at = SequencePosition(ctx, 1, static_cast<int64_t>(seq->elements.size()), false);
    if (at.has_value()) {
      std::vector<SymValue> elements = seq->elements;
      elements.erase(elements.begin() + *at);
      out[0] = SequenceOf(std::move(elements), seq->elem_type);
      return true;
    }
  }
  out[0] = SequenceUnknownLength(*seq, "sequence whose length is not known before running");
  return true;
}

bool SequenceAtFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  if (seq->elements_known && !seq->elements.empty()) {
    std::optional<int64_t> at = SequencePosition(ctx, 1, static_cast<int64_t>(seq->elements.size()), false);
    if (at.has_value()) {
      out[0] = seq->elements[*at];
      return true;
    }
  }
  SymValue element = TensorOf(seq->elem_type, {});
  element.shape = seq->shape;
  if (!element.HasFullShape()) element.reason = "element of a sequence whose elements differ in shape";
  out[0] = std::move(element);
  return true;
}

bool SequenceLengthFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  SymValue result = TensorOf(onnx::TensorProto::INT64, {});
  if (seq != nullptr && seq->elements_known) {
    result.ints = std::vector<Expr>{Expr(static_cast<int64_t>(seq->elements.size()))};
  }
  out[0] = std::move(result);
  return true;
}

bool SplitToSequenceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  std::optional<int64_t> dim;  // Unset when unknown or too many elements to list.
  if (std::optional<int64_t> c = (*x->shape)[*axis].AsConstant(); c.has_value() && *c >= 0 &&
                                                                 *c <= kMaxPropagatedElements) {
    dim = *c;
  }
  std::vector<SymValue> elements;
  if (ctx.Input(1) == nullptr) {
    if (!dim.has_value()) {
      SymValue element = TensorOf(x->elem_type, *x->shape);
      if (keepdims) {
        (*element.shape)[*axis] = Expr(1);
      } else {
        element.shape->erase(element.shape->begin() + *axis);
      }
      SymValue s = SequenceOf({}, x->elem_type);
      s.elements_known = false;
      s.shape = element.shape;
      s.reason = "sequence whose length is a symbolic dim";
      out[0] = std::move(s);
      return true;
    }
    for (int64_t i = 0; i < *dim; ++i) {
      SymValue element = TensorOf(x->elem_type, *x->shape);
      if (keepdims) {
        (*element.shape)[*axis] = Expr(1);
      } else {
        element.shape->erase(element.shape->begin() + *axis);
      }
      elements.push_back(std::move(element));
    }
  } else {
    std::optional<std::vector<Expr>> split = IntValues(ctx.Input(1));
    if (!split.has_value()) return false;
    if (split->size() == 1 && ctx.Input(1)->shape.has_value() && ctx.Input(1)->shape->empty()) {
      std::optional<int64_t> chunk = (*split)[0].AsConstant();
      if (!chunk.has_value() || !dim.has_value() || *chunk <= 0) return false;
      for (int64_t start = 0; start < *dim; start += *chunk) {
        SymValue element = TensorOf(x->elem_type, *x->shape);
        (*element.shape)[*axis] = Expr(std::min(*chunk, *dim - start));
        elements.push_back(std::move(element));
      }
    } else {
      for (const Expr& size : *split) {
        SymValue element = TensorOf(x->elem_type, *x->shape);
        (*element.shape)[*axis] = size;
        elements.push_back(std::move(element));
      }
    }
  }
  out[0] = SequenceOf(std::move(elements), x->elem_type);
  return true;
}

bool ConcatFromSequenceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  const bool new_axis = ctx.Int("new_axis", 0) != 0;
  if (!seq->elements_known || seq->elements.empty()) {
    if (!seq->shape.has_value()) return false;
    SymValue result = TensorOf(seq->elem_type, *seq->shape);
    const int64_t rank = static_cast<int64_t>(seq->shape->size()) + (new_axis ? 1 : 0);
    std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
    if (!axis.has_value()) return false;
    if (new_axis) {
      result.shape->insert(result.shape->begin() + *axis, Expr::Unknown());
    } else {
      (*result.shape)[*axis] = Expr::Unknown();
    }
    result.reason = "concatenation of a sequence whose length is not known before running";
    out[0] = std::move(result);
    return true;
  }
  const SymValue& first = seq->elements[0];
  if (!first.shape.has_value()) return false;
  const int64_t rank = static_cast<int64_t>(first.shape->size()) + (new_axis ? 1 : 0);
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::vector<Expr> shape = *first.shape;
  if (new_axis) {
    shape.insert(shape.begin() + *axis, Expr(static_cast<int64_t>(seq->elements.size())));
  } else {
    Expr sum = 0;
    for (const SymValue& e : seq->elements) {
      if (!e.shape.has_value() || static_cast<int64_t>(e.shape->size()) != rank) return false;
      sum = sum + (*e.shape)[*axis];
    }
    shape[*axis] = sum;
  }
  out[0] = TensorOf(seq->elem_type, std::move(shape));
  return true;
}

// --- Convolutions and pools, for symbolic spatial dims --------------------------

bool ConvLikeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 3) return false;
  if (x->HasConcreteShape()) return false;  // ONNX's own function handles concrete shapes.
  return PoolShapeFunction(ctx, out);
}

}  // namespace

bool PoolShapeFunction(const OpContext& ctx, std::vector<SymValue>& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 3) return false;
  const std::string& op = ctx.node.op_type();
  const bool conv = op == "Conv" || op == "ConvInteger" || op == "QLinearConv";
  const size_t spatial = x->shape->size() - 2;
  const SymValue* w = conv ? ctx.Input(op == "QLinearConv" ? 3 : 1) : nullptr;
  std::vector<int64_t> kernel;
  if (auto k = ctx.Ints("kernel_shape")) {
    kernel = *k;
  } else if (w != nullptr && w->shape.has_value() && w->shape->size() == spatial + 2) {
    for (size_t i = 0; i < spatial; ++i) {
      std::optional<int64_t> c = (*w->shape)[2 + i].AsConstant();
      if (!c.has_value()) return false;
      kernel.push_back(*c);
    }
  }
  if (kernel.size() != spatial) return false;
  const std::vector<int64_t> strides = ctx.Ints("strides").value_or(std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = ctx.Ints("dilations").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = ctx.Ints("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = ctx.String("auto_pad", "NOTSET");
  const bool ceil_mode = ctx.Int("ceil_mode", 0) != 0;
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) return false;
  std::vector<Expr> shape;
  shape.push_back((*x->shape)[0]);
  if (conv) {
    if (w == nullptr || !w->shape.has_value() || w->shape->empty()) return false;
    shape.push_back((*w->shape)[0]);
  } else {
    shape.push_back((*x->shape)[1]);
  }
  for (size_t i = 0; i < spatial; ++i) {
    const Expr& d = (*x->shape)[2 + i];
    const int64_t effective = dilations[i] * (kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      shape.push_back(Expr::CeilDiv(d, strides[i]));
    } else if (auto_pad == "VALID") {
      shape.push_back(Expr::FloorDiv(d - Expr(effective), strides[i]) + Expr(1));
    } else {
      const Expr span = d + Expr(pads[i] + pads[i + spatial] - effective);
      shape.push_back((ceil_mode ? Expr::CeilDiv(span, strides[i]) : Expr::FloorDiv(span, strides[i])) + Expr(1));
    }
  }
  out[0] = TensorOf(x->elem_type, std::move(shape));
  if (op == "QLinearConv") out[0].elem_type = x->elem_type;
  for (size_t o = 1; o < out.size(); ++o) {
    out[o] = TensorOf(onnx::TensorProto::INT64, *out[0].shape);  // MaxPool's indices.
  }
  return true;
}

namespace {

bool PadFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<std::vector<Expr>> pads;
  if (ctx.opset >= 11) {
    pads = IntValues(ctx.Input(1));
  } else if (auto p = ctx.Ints("pads")) {
    pads.emplace(p->begin(), p->end());
  }
  std::optional<std::vector<int64_t>> axes;
  if (ctx.Input(3) != nullptr) {
    axes = ConstantInts(ctx.Input(3));
    if (!axes.has_value()) return false;
  } else {
    axes.emplace();
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  SymValue result = TensorOf(x->elem_type, *x->shape);
  if (!pads.has_value() || pads->size() != 2 * axes->size()) {
    for (Expr& d : *result.shape) d = Expr::Unknown();
    result.reason = "Pad amounts computed from values not known before running";
    out[0] = std::move(result);
    return true;
  }
  const size_t n = axes->size();
  for (size_t i = 0; i < n; ++i) {
    std::optional<int64_t> a = NormalizeAxis((*axes)[i], rank);
    if (!a.has_value()) return false;
    (*result.shape)[*a] = (*x->shape)[*a] + (*pads)[i] + (*pads)[i + n];
  }
  out[0] = std::move(result);
  return true;
}

// MatMul as numpy does it: a 1-D operand is promoted (and its dim dropped
// again), the batch dims broadcast.
bool MatMulFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  const SymValue* b = ctx.Input(1);
  if (!Ranked(a) || !Ranked(b) || a->shape->empty() || b->shape->empty()) return false;
  std::vector<Expr> sa = *a->shape;
  std::vector<Expr> sb = *b->shape;
  const bool a_vector = sa.size() == 1;
  const bool b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), Expr(1));
  if (b_vector) sb.push_back(Expr(1));
  std::vector<Expr> shape = Broadcast(std::vector<Expr>(sa.begin(), sa.end() - 2),
                                      std::vector<Expr>(sb.begin(), sb.end() - 2));
  if (!a_vector) shape.push_back(sa[sa.size() - 2]);
  if (!b_vector) shape.push_back(sb.back());
  out[0] = TensorOf(a->elem_type, std::move(shape));
  return true;
}

// Gemm: (M, K) x (K, N) -> (M, N), either operand possibly transposed.
bool GemmFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  std::optional<std::vector<Expr>> shape = GemmOutputShape(ctx, a, ctx.Input(1));
  if (!shape.has_value()) return false;
  out[0] = TensorOf(a->elem_type, *std::move(shape));
  return true;
}

// Transpose: the dims in `perm` order (reversed by default).
bool TransposeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const size_t rank = x->shape->size();
  std::vector<int64_t> perm(rank);
  if (std::optional<std::vector<int64_t>> given = ctx.Ints("perm"); given.has_value()) {
    perm = *given;
  } else {
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  }
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  std::vector<Expr> shape;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(rank) || seen[axis]) return false;
    seen[axis] = true;
    shape.push_back((*x->shape)[axis]);
  }
  out[0] = TensorOf(x->elem_type, std::move(shape));
  return true;
}

// GlobalAveragePool and friends: (N, C, d1, d2...) -> (N, C, 1, 1...).
bool GlobalPoolFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 2) return false;
  std::vector<Expr> shape = *x->shape;
  for (size_t i = 2; i < shape.size(); ++i) shape[i] = Expr(1);
  out[0] = TensorOf(x->elem_type, std::move(shape));
  return true;
}

// Ops whose one output has the shape and type of input 0 (normalizations in
// inference mode); with more outputs (training statistics) ONNX's function
// decides.
bool SameAsFirstInputFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || out.size() != 1) return false;
  out[0] = TensorOf(x->elem_type, *x->shape);
  return true;
}

const absl::flat_hash_map<std::string, ShapeFunction>& StandardFunctions() {
  static const auto* functions = [] {
    auto* m = new absl::flat_hash_map<std::string, ShapeFunction>();
    (*m)["Shape"] = ShapeFunctionOp;
    (*m)["Size"] = SizeFunction;
    (*m)["Cast"] = CastFunction;
    (*m)["CastLike"] = CastFunction;
    (*m)["Unsqueeze"] = UnsqueezeFunction;
    (*m)["Squeeze"] = SqueezeFunction;
    (*m)["Reshape"] = ReshapeFunction;
    (*m)["Flatten"] = FlattenFunction;
    (*m)["Concat"] = ConcatFunction;
    (*m)["Gather"] = GatherFunction;
    (*m)["Slice"] = SliceFunction;
    (*m)["Expand"] = ExpandFunction;
    (*m)["ConstantOfShape"] = ConstantOfShapeFunction;
    (*m)["Range"] = RangeFunction;
    (*m)["Tile"] = TileFunction;
    (*m)["Where"] = WhereFunction;
    (*m)["Split"] = SplitFunction;
    (*m)["Resize"] = ResizeFunction;
    (*m)["Upsample"] = ResizeFunction;
    (*m)["Pad"] = PadFunction;
    (*m)["SimplifiedLayerNormalization"] = LayerNormShapeFunction;
    (*m)["LayerNormalization"] = LayerNormShapeFunction;
    (*m)["MatMul"] = MatMulFunction;
    (*m)["Gemm"] = GemmFunction;
    (*m)["Transpose"] = TransposeFunction;
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) (*m)[op] = GlobalPoolFunction;
    for (const char* op : {"BatchNormalization", "InstanceNormalization", "LRN", "GroupNormalization",
                           "MeanVarianceNormalization", "Clip", "PRelu"}) {
      (*m)[op] = SameAsFirstInputFunction;
    }
    for (const char* op : {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool"}) {
      (*m)[op] = ConvLikeFunction;
    }
    for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
      (*m)[op] = ReduceFunction;
    }
    (*m)["Add"] = ArithFunction(Arith::kAdd);
    (*m)["Sub"] = ArithFunction(Arith::kSub);
    (*m)["Mul"] = ArithFunction(Arith::kMul);
    (*m)["Div"] = ArithFunction(Arith::kDiv);
    (*m)["Mod"] = ArithFunction(Arith::kMod);
    (*m)["Min"] = ArithFunction(Arith::kMin);
    (*m)["Max"] = ArithFunction(Arith::kMax);
    (*m)["Pow"] = ArithFunction(Arith::kPow);
    (*m)["Sum"] = ArithFunction(Arith::kAdd);
    (*m)["Equal"] = CompareFunction(Compare::kEqual);
    (*m)["Less"] = CompareFunction(Compare::kLess);
    (*m)["Greater"] = CompareFunction(Compare::kGreater);
    (*m)["LessOrEqual"] = CompareFunction(Compare::kLessOrEqual);
    (*m)["GreaterOrEqual"] = CompareFunction(Compare::kGreaterOrEqual);
    (*m)["And"] = CompareFunction(Compare::kAnd);
    (*m)["Or"] = CompareFunction(Compare::kOr);
    (*m)["Xor"] = CompareFunction(Compare::kXor);
    const auto identity = [](const Expr& e) -> std::optional<Expr> { return e; };
    const auto same = [](double f) { return f; };
    (*m)["Identity"] = UnaryFunction(identity, same);
    (*m)["Dropout"] = UnaryFunction(identity, same);
    (*m)["Neg"] = UnaryFunction([](const Expr& e) -> std::optional<Expr> { return -e; }, [](double f) { return -f; });
    (*m)["Abs"] = UnaryFunction(
        [](const Expr& e) -> std::optional<Expr> {
          std::optional<int64_t> c = e.AsConstant();
          if (!c.has_value()) return std::nullopt;
          return Expr(*c < 0 ? -*c : *c);
        },
        [](double f) { return std::fabs(f); });
    (*m)["Not"] = UnaryFunction(
        [](const Expr& e) -> std::optional<Expr> {
          std::optional<int64_t> c = e.AsConstant();
          if (!c.has_value()) return std::nullopt;
          return Expr(*c == 0 ? 1 : 0);
        },
        nullptr, /*to_bool=*/true);
    (*m)["Floor"] = UnaryFunction(identity, [](double f) { return std::floor(f); });
    (*m)["Ceil"] = UnaryFunction(identity, [](double f) { return std::ceil(f); });
    (*m)["Round"] = UnaryFunction(identity, [](double f) { return std::nearbyint(f); });
    (*m)["Sqrt"] = UnaryFunction(nullptr, [](double f) { return std::sqrt(f); });
    (*m)["Reciprocal"] = UnaryFunction(nullptr, [](double f) { return 1.0 / f; });
    (*m)["Relu"] = UnaryFunction(nullptr, nullptr);
    (*m)["Sigmoid"] = UnaryFunction(nullptr, nullptr);
    (*m)["Tanh"] = UnaryFunction(nullptr, nullptr);
    (*m)["Erf"] = UnaryFunction(nullptr, nullptr);
    (*m)["Softmax"] = UnaryFunction(nullptr, nullptr);
    (*m)["LogSoftmax"] = UnaryFunction(nullptr, nullptr);
    (*m)["Exp"] = UnaryFunction(nullptr, nullptr);
    (*m)["Log"] = UnaryFunction(nullptr, nullptr);
    for (const char* op : {"LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Softplus", "Softsign",
                           "ThresholdedRelu", "Mish", "Gelu", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
                           "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Hardmax", "Shrink", "BitwiseNot"}) {
      (*m)[op] = UnaryFunction(nullptr, nullptr);
    }
    for (const char* op : {"IsNaN", "IsInf"}) (*m)[op] = UnaryFunction(nullptr, nullptr, /*to_bool=*/true);
    for (const char* op : {"NonZero", "Unique", "Compress"}) (*m)[op] = DataDependent;
    (*m)["SequenceConstruct"] = SequenceConstructFunction;
    (*m)["SequenceEmpty"] = SequenceEmptyFunction;
    (*m)["SequenceInsert"] = SequenceInsertFunction;
    (*m)["SequenceErase"] = SequenceEraseFunction;
    (*m)["SequenceAt"] = SequenceAtFunction;
    (*m)["SequenceLength"] = SequenceLengthFunction;
    (*m)["SplitToSequence"] = SplitToSequenceFunction;
    (*m)["ConcatFromSequence"] = ConcatFromSequenceFunction;
    return m;
  }();
  return *functions;
}

}  // namespace

const ShapeFunction* FindStandardShapeFunction(const std::string& op_type) {
  const auto& functions = StandardFunctions();
  auto it = functions.find(op_type);
  return it == functions.end() ? nullptr : &it->second;
}

std::optional<std::vector<Expr>> GemmOutputShape(const OpContext& ctx, const SymValue* a, const SymValue* b) {
  if (a == nullptr || b == nullptr || a->kind != SymValue::Kind::kTensor || b->kind != SymValue::Kind::kTensor ||
      !a->shape.has_value() || !b->shape.has_value() || a->shape->size() != 2 || b->shape->size() != 2) return std::nullopt;
  const Expr m = ctx.Int("transA", 0) != 0 ? (*a->shape)[1] : (*a->shape)[0];
  const Expr n = ctx.Int("transB", 0) != 0 ? (*b->shape)[0] : (*b->shape)[1];
  return std::vector<Expr>{m, n};
}

}  // namespace footprint::symbolic
