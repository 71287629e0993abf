// Values from ONNX's protos and back (engine/proto_values.h).
#include "analyzer/shapes/engine/proto_values.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/tensor_size.h"

namespace footprint::symbolic {
namespace {

Expr DimFromProto(const onnx::TensorShapeProto_Dimension& dim) {
  if (dim.has_dim_value()) return Expr(dim.dim_value());
  if (dim.has_dim_param() && !dim.dim_param().empty()) {
    const std::string& param = dim.dim_param();
    if (param.rfind("unk__", 0) == 0) return Expr::Unknown();
    if (std::optional<Expr> parsed = Expr::Parse(param)) return *parsed;
    return Expr::Symbol(param);
  }
  return Expr::Unknown();
}

// IEEE half precision to double (fp16 models keep their Resize scales and
// shape arithmetic constants in it).
double HalfToDouble(uint16_t bits) {
  const int sign = (bits >> 15) != 0 ? -1 : 1;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa == 0 ? sign * HUGE_VAL : NAN;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

// The values of an initializer or Constant tensor, when kept and small.
void ReadTensorData(const onnx::TensorProto& tensor, SymValue& v) {
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return;
  }
  if (count > kMaxPropagatedElements || tensor.data_location() == onnx::TensorProto::EXTERNAL) return;
  const int32_t t = tensor.data_type();
  if (IsFloatType(t) && count > kMaxPropagatedFloats) return;
  const std::string& raw = tensor.raw_data();
  std::vector<int64_t> ints;
  std::vector<double> floats;
  auto from_raw = [&](auto sample, bool is_float) {
    using T = decltype(sample);
    if (raw.size() != static_cast<size_t>(count) * sizeof(T)) return false;
    for (int64_t i = 0; i < count; ++i) {
      T x;
      std::memcpy(&x, raw.data() + i * sizeof(T), sizeof(T));
      if (is_float) {
        floats.push_back(static_cast<double>(x));
      } else {
        ints.push_back(static_cast<int64_t>(x));
      }
    }
    return true;
  };
  bool ok = false;
  if (!raw.empty() || count == 0) {
    switch (t) {
      case onnx::TensorProto::INT64: ok = from_raw(int64_t{}, false); break;
      case onnx::TensorProto::INT32: ok = from_raw(int32_t{}, false); break;
      case onnx::TensorProto::INT16: ok = from_raw(int16_t{}, false); break;
      case onnx::TensorProto::UINT16: ok = from_raw(uint16_t{}, false); break;
      case onnx::TensorProto::INT8: ok = from_raw(int8_t{}, false); break;
      case onnx::TensorProto::UINT8: ok = from_raw(uint8_t{}, false); break;
      case onnx::TensorProto::BOOL: ok = from_raw(uint8_t{}, false); break;
      case onnx::TensorProto::UINT32: ok = from_raw(uint32_t{}, false); break;
      case onnx::TensorProto::FLOAT16:
        if (raw.size() == static_cast<size_t>(count) * 2) {
          for (int64_t i = 0; i < count; ++i) {
            uint16_t bits;
            std::memcpy(&bits, raw.data() + i * 2, 2);
            floats.push_back(HalfToDouble(bits));
          }
          ok = true;
        }
        break;
      case onnx::TensorProto::FLOAT: ok = from_raw(float{}, true); break;
      case onnx::TensorProto::DOUBLE: ok = from_raw(double{}, true); break;
      default: break;
    }
  } else if (tensor.int64_data_size() == count && (t == onnx::TensorProto::INT64)) {
    ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
    ok = true;
  } else if (tensor.int32_data_size() == count && t == onnx::TensorProto::FLOAT16) {
    for (int32_t bits : tensor.int32_data()) floats.push_back(HalfToDouble(static_cast<uint16_t>(bits)));
    ok = true;
  } else if (tensor.int32_data_size() == count && IsIntegerType(t)) {
    ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
    ok = true;
  } else if (tensor.uint64_data_size() == count && IsIntegerType(t)) {
    for (uint64_t x : tensor.uint64_data()) ints.push_back(static_cast<int64_t>(x));
    ok = true;
  } else if (tensor.float_data_size() == count && t == onnx::TensorProto::FLOAT) {
    floats.assign(tensor.float_data().begin(), tensor.float_data().end());
    ok = true;
  } else if (tensor.double_data_size() == count && t == onnx::TensorProto::DOUBLE) {
    floats.assign(tensor.double_data().begin(), tensor.double_data().end());
    ok = true;
  }
  if (!ok) return;
  if (IsFloatType(t)) {
    v.floats = std::move(floats);
  } else {
    v.ints.emplace(ints.begin(), ints.end());
  }
}

}  // namespace

SymValue FromTypeProto(const onnx::TypeProto* type) {
  if (type == nullptr) return UnknownValue("no type");
  switch (type->value_case()) {
    case onnx::TypeProto::kTensorType: {
      SymValue v;
      v.kind = SymValue::Kind::kTensor;
      v.elem_type = type->tensor_type().elem_type();
      if (type->tensor_type().has_shape()) {
        v.shape.emplace();
        for (const auto& dim : type->tensor_type().shape().dim()) v.shape->push_back(DimFromProto(dim));
      }
      return v;
    }
    case onnx::TypeProto::kSequenceType: {
      SymValue element = FromTypeProto(&type->sequence_type().elem_type());
      SymValue v;
      v.kind = SymValue::Kind::kSequence;
      v.elem_type = element.elem_type;
      v.shape = element.shape;  // The element shape when uniform.
      v.reason = "sequence of unknown length";
      return v;
    }
    case onnx::TypeProto::kMapType:
    case onnx::TypeProto::kOptionalType:
    case onnx::TypeProto::kSparseTensorType: {
      SymValue v;
      v.kind = SymValue::Kind::kOther;
      v.reason = type->has_map_type() ? "map" : type->has_optional_type() ? "optional" : "sparse tensor";
      return v;
    }
    default:
      return UnknownValue("no type");
  }
}

void ToTypeProto(const SymValue& value, onnx::TypeProto& type) {
  onnx::TypeProto_Tensor* tensor = nullptr;
  if (value.kind == SymValue::Kind::kSequence) {
    tensor = type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  } else {
    tensor = type.mutable_tensor_type();
  }
  tensor->set_elem_type(value.elem_type);
  if (!value.shape.has_value()) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const Expr& d : *value.shape) {
    auto* dim = shape->add_dim();
    if (std::optional<int64_t> c = d.AsConstant()) {
      dim->set_dim_value(*c);
    } else if (d.known()) {
      dim->set_dim_param(d.ToString());
    }
  }
}

SymValue FromTensorProto(const onnx::TensorProto& tensor) {
  std::vector<Expr> dims(tensor.dims().begin(), tensor.dims().end());
  SymValue v = TensorOf(tensor.data_type(), std::move(dims));
  ReadTensorData(tensor, v);
  return v;
}

SymValue FromConstantNode(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "value") return FromTensorProto(a.t());
    if (a.name() == "value_float") {
      SymValue v = TensorOf(onnx::TensorProto::FLOAT, {});
      v.floats = std::vector<double>{a.f()};
      return v;
    }
    if (a.name() == "value_int") {
      SymValue v = TensorOf(onnx::TensorProto::INT64, {});
      v.ints = std::vector<Expr>{Expr(a.i())};
      return v;
    }
    if (a.name() == "value_floats") {
      SymValue v = TensorOf(onnx::TensorProto::FLOAT, {Expr(a.floats_size())});
      v.floats = std::vector<double>(a.floats().begin(), a.floats().end());
      return v;
    }
    if (a.name() == "value_ints") {
      SymValue v = TensorOf(onnx::TensorProto::INT64, {Expr(a.ints_size())});
      v.ints = std::vector<Expr>(a.ints().begin(), a.ints().end());
      return v;
    }
    if (a.name() == "value_string") return TensorOf(kDataTypeString, {});
    if (a.name() == "value_strings") return TensorOf(kDataTypeString, {Expr(a.strings_size())});
    if (a.name() == "sparse_value") {
      std::vector<Expr> dims(a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end());
      return TensorOf(a.sparse_tensor().values().data_type(), std::move(dims));
    }
  }
  return UnknownValue("Constant without a value");
}

void MergeOnnxType(const onnx::TypeProto* type, SymValue& ours, const std::set<std::string>* made_up) {
  if (type == nullptr) return;
  SymValue theirs = FromTypeProto(type);
  if (theirs.kind == SymValue::Kind::kUnknown) return;
  if (ours.kind == SymValue::Kind::kUnknown) {
    theirs.ints = std::nullopt;
    if (!theirs.HasFullShape() && theirs.reason.empty()) theirs.reason = ours.reason;
    ours = std::move(theirs);
    return;
  }
  if (ours.kind != theirs.kind) return;
  if (ours.elem_type == 0) ours.elem_type = theirs.elem_type;
  if (!theirs.shape.has_value()) return;
  if (!ours.shape.has_value()) {
    ours.shape = theirs.shape;
    return;
  }
  if (ours.shape->size() != theirs.shape->size()) return;
  for (size_t i = 0; i < ours.shape->size(); ++i) {
    Expr& mine = (*ours.shape)[i];
    const Expr& other = (*theirs.shape)[i];
    if (!mine.known() && other.known()) {
      mine = other;
    } else if (made_up != nullptr && !made_up->empty() && mine.known() && !mine.AsConstant().has_value() &&
               other.AsConstant().has_value()) {
      std::set<std::string> symbols;
      mine.CollectSymbols(symbols);
      for (const std::string& symbol : symbols) {
        if (made_up->contains(symbol)) {
          mine = other;
          break;
        }
      }
    }
  }
}

}  // namespace footprint::symbolic
