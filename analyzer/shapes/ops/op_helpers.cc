// The OpContext accessors and the helpers every op family uses (declared in
// op_context.h for those the engine uses too, else in ops/op_helpers.h).
#include "analyzer/shapes/ops/op_helpers.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/shapes/op_context.h"

namespace footprint::symbolic {

const onnx::AttributeProto* OpContext::Attribute(const std::string& name) const { return FindAttribute(node, name); }
int64_t OpContext::Int(const std::string& name, int64_t fallback) const {
  return OptionalIntAttribute(node, name).value_or(fallback);
}
float OpContext::Float(const std::string& name, float fallback) const {
  return OptionalFloatAttribute(node, name).value_or(fallback);
}
std::string OpContext::String(const std::string& name, const std::string& fallback) const {
  return OptionalStringAttribute(node, name).value_or(fallback);
}
std::optional<std::vector<int64_t>> OpContext::Ints(const std::string& name) const {
  return OptionalIntsAttribute(node, name);
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
      return absl::StrCat("dims ", *x, " and ", *y, " do not broadcast");
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

bool Known(const SymValue* v) { return v != nullptr && v->kind == SymValue::Kind::kTensor; }
bool Ranked(const SymValue* v) { return Known(v) && v->shape.has_value(); }

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

void SetInts(SymValue& v, std::vector<Expr> values) {
  if (static_cast<int64_t>(values.size()) <= kMaxPropagatedElements) v.ints = std::move(values);
}

std::optional<int64_t> CheckedElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return std::nullopt;
  }
  return count;
}

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

const ShapeFunction* FindInTable(const ShapeFunctionTable& table, const std::string& op_type) {
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

std::optional<Concatenation> ConcatenatedShape(const std::vector<const SymValue*>& parts, int64_t axis) {
  if (parts.empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(parts[0]->shape->size());
  std::optional<int64_t> normalized = NormalizeAxis(axis, rank);
  if (!normalized.has_value()) return std::nullopt;
  Concatenation joined{.shape = *parts[0]->shape, .axis = *normalized};
  joined.shape[joined.axis] = 0;
  for (const SymValue* part : parts) {
    if (static_cast<int64_t>(part->shape->size()) != rank) return std::nullopt;
    joined.shape[joined.axis] = joined.shape[joined.axis] + (*part->shape)[joined.axis];
  }
  return joined;
}

}  // namespace footprint::symbolic
