// Shape functions of the ops that rearrange or select a tensor's elements:
// (Un)Squeeze, Reshape, Flatten, Concat, Gather, Slice, Pad, Transpose, and
// NonZero, Unique, Compress, whose output size is data-dependent. Small
// shape tensors keep their values through them.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

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
  std::optional<Concatenation> joined = ConcatenatedShape(parts, ctx.Int("axis", 0));
  if (!joined.has_value()) return false;
  std::vector<Expr>& shape = joined->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The other dims must agree: take the first part's that is a number.
  for (const SymValue* v : parts) {
    for (int64_t i = 0; i < rank; ++i) {
      if (i != joined->axis && !shape[i].AsConstant().has_value() && (*v->shape)[i].AsConstant().has_value()) {
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

// The elements of a row-major tensor of `dims` at the cross product of
// `kept` (per axis, the constant positions kept, in order).
std::vector<Expr> GatherRowMajor(const std::vector<Expr>& values, const std::vector<int64_t>& dims,
                                 const std::vector<std::vector<Expr>>& kept) {
  std::vector<Expr> out;
  const size_t rank = dims.size();
  if (rank == 0) return values;
  for (const std::vector<Expr>& axis : kept) {
    if (axis.empty()) return out;
  }
  std::vector<size_t> at(rank, 0);
  while (true) {
    int64_t flat = 0;
    for (size_t a = 0; a < rank; ++a) flat = flat * dims[a] + *kept[a][at[a]].AsConstant();
    if (flat < 0 || flat >= static_cast<int64_t>(values.size())) return {};
    out.push_back(values[flat]);
    size_t a = rank;
    while (a > 0 && ++at[a - 1] == kept[a - 1].size()) at[--a] = 0;
    if (a == 0) return out;
  }
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
  // The indices each axis keeps, for the values of a small concrete tensor
  // (a pads matrix reversed row by row, a shape's tail).
  const std::optional<std::vector<int64_t>> in_dims = x->ConcreteShape();
  const bool propagate = x->ints.has_value() && in_dims.has_value();
  std::vector<std::vector<Expr>> kept(rank);
  if (propagate) {
    for (int64_t a = 0; a < rank; ++a) {
      for (int64_t k = 0; k < (*in_dims)[a]; ++k) kept[a].push_back(Expr(k));
    }
  }
  for (size_t i = 0; i < starts->size(); ++i) {
    std::optional<int64_t> axis = NormalizeAxis((*axes)[i], rank);
    if (!axis.has_value() || (*steps)[i] == 0) return false;
    std::vector<Expr> positions;
    if (propagate) {
      for (int64_t k = 0; k < (*in_dims)[*axis]; ++k) positions.push_back(Expr(k));
    }
    std::vector<Expr> picked;
    shape[*axis] = SliceLength((*x->shape)[*axis], (*starts)[i], (*ends)[i], (*steps)[i],
                               propagate ? &picked : nullptr, propagate ? &positions : nullptr);
    if (propagate) kept[*axis] = std::move(picked);
  }
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  if (std::optional<std::vector<int64_t>> out_dims = result.ConcreteShape(); propagate && out_dims.has_value()) {
    bool consistent = true;
    for (int64_t a = 0; a < rank; ++a) consistent = consistent && static_cast<int64_t>(kept[a].size()) == (*out_dims)[a];
    if (consistent) SetInts(result, GatherRowMajor(*x->ints, *in_dims, kept));
  }
  out[0] = std::move(result);
  return true;
}

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
  SymValue result = TensorOf(x->elem_type, std::move(shape));
  if (std::optional<std::vector<int64_t>> dims = x->ConcreteShape(); dims.has_value() && x->ints.has_value()) {
    // Small integer matrices (pads as [rank, 2]) keep their values: read
    // the input at the permuted index of each output element.
    std::optional<std::vector<int64_t>> out_dims = result.ConcreteShape();
    std::vector<int64_t> in_strides(rank, 1);
    for (size_t a = rank; a-- > 1;) in_strides[a - 1] = in_strides[a] * (*dims)[a];
    std::vector<Expr> values;
    const int64_t count = CheckedElementCount(*out_dims).value_or(-1);
    std::vector<int64_t> at(rank, 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t flat = 0;
      for (size_t a = 0; a < rank; ++a) flat += at[a] * in_strides[perm[a]];
      values.push_back((*x->ints)[flat]);
      for (size_t a = rank; a-- > 0;) {
        if (++at[a] < (*out_dims)[a]) break;
        at[a] = 0;
      }
    }
    if (count >= 0 && values.size() == x->ints->size()) SetInts(result, std::move(values));
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

}  // namespace

void AddReshapeFunctions(ShapeFunctionTable& table) {
  table["Unsqueeze"] = UnsqueezeFunction;
  table["Squeeze"] = SqueezeFunction;
  table["Reshape"] = ReshapeFunction;
  table["Flatten"] = FlattenFunction;
  table["Concat"] = ConcatFunction;
  table["Gather"] = GatherFunction;
  table["Slice"] = SliceFunction;
  table["Pad"] = PadFunction;
  table["Transpose"] = TransposeFunction;
  for (const char* op : {"NonZero", "Unique", "Compress"}) table[op] = DataDependent;
}

}  // namespace footprint::symbolic
