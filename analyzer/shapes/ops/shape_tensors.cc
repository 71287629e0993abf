// Shape functions of Shape and Size (a shape as values) and of the ops that
// build a tensor from a shape tensor: Expand, ConstantOfShape, Range, Tile.
// Their values are carried along, so that shape arithmetic downstream folds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

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

std::optional<std::vector<Expr>> ShapeInput(const OpContext& ctx, size_t i) { return IntValues(ctx.Input(i)); }

bool ExpandFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  std::optional<std::vector<Expr>> target = ShapeInput(ctx, 1);
  if (!target.has_value()) return false;
  SymValue result = TensorOf(x->elem_type, Broadcast(*x->shape, *target));
  if (!result.HasFullShape()) {
    result.reason = BroadcastConflict(*x->shape, *target);
    result.contradiction = !result.reason.empty();
  }
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

}  // namespace

void AddShapeTensorFunctions(ShapeFunctionTable& table) {
  table["Shape"] = ShapeFunctionOp;
  table["Size"] = SizeFunction;
  table["Expand"] = ExpandFunction;
  table["ConstantOfShape"] = ConstantOfShapeFunction;
  table["Range"] = RangeFunction;
  table["Tile"] = TileFunction;
}

}  // namespace footprint::symbolic
