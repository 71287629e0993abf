#include "analyzer/shapes/shape_engine.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <forward_list>
#include <iostream>
#include <set>
#include <unordered_map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/tensor_size.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace footprint::symbolic {

bool SymValue::HasFullShape() const {
  if (!shape.has_value()) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Expr& d) { return d.known(); });
}

void GraphShapes::Set(absl::string_view name, SymValue value) {
  auto [it, inserted] = index.try_emplace(name, static_cast<int32_t>(values.size()));
  if (inserted) {
    values.push_back(std::move(value));
  } else {
    values[it->second] = std::move(value);
  }
}

bool SymValue::HasConcreteShape() const {
  if (!shape.has_value()) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Expr& d) { return d.AsConstant().has_value(); });
}

std::optional<std::vector<int64_t>> SymValue::ConcreteShape() const {
  if (!shape.has_value()) return std::nullopt;
  std::vector<int64_t> dims;
  dims.reserve(shape->size());
  for (const Expr& d : *shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c.has_value()) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

Expr BytesOf(const SymValue& value) {
  if (value.kind == SymValue::Kind::kSequence) {
    if (!value.elements_known) return Expr::Unknown();
    Expr sum = 0;
    for (const SymValue& element : value.elements) sum = sum + BytesOf(element);
    return sum;
  }
  if (value.kind != SymValue::Kind::kTensor || !value.shape.has_value()) return Expr::Unknown();
  const std::optional<int> bits = BitsPerElement(value.elem_type);
  if (!bits.has_value()) return Expr::Unknown();
  const Expr count = ElementCount(*value.shape);
  if (*bits % 8 == 0) return count * Expr(*bits / 8);
  return Expr::CeilDiv(count * Expr(*bits), 8);
}

namespace {

constexpr int kMaxDepth = 64;

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

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

// Where ONNX's whole-model pass (or the model's own declarations) knows a
// value better than we do, take its dims: where ours is unknown, or a symbol
// we made up ourselves (an unnamed input dim, a trip count) against a number.
// A formula we derived from the input dims stands against a declared number
// (exporters write shapes traced at one size).
void MergeOnnxType(const onnx::TypeProto* type, SymValue& ours, const std::set<std::string>* made_up = nullptr) {
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

// --- ONNX's per-node shape functions, fed with our shapes and values ------

onnx::TensorProto DataProto(const SymValue& v) {
  onnx::TensorProto t;
  t.set_data_type(v.elem_type);
  for (const Expr& d : *v.shape) t.add_dims(*d.AsConstant());
  if (v.ints.has_value()) {
    for (const Expr& x : *v.ints) {
      const int64_t value = *x.AsConstant();
      switch (v.elem_type) {
        case onnx::TensorProto::INT64:
          t.add_int64_data(value);
          break;
        case onnx::TensorProto::UINT64:
          t.add_uint64_data(static_cast<uint64_t>(value));
          break;
        default:
          t.add_int32_data(static_cast<int32_t>(value));
          break;
      }
    }
  } else {
    for (double x : *v.floats) {
      if (v.elem_type == onnx::TensorProto::DOUBLE) {
        t.add_double_data(x);
      } else {
        t.add_float_data(static_cast<float>(x));
      }
    }
  }
  return t;
}

bool HasConstantData(const SymValue& v) {
  if (!v.HasConcreteShape()) return false;
  if (v.floats.has_value()) return v.elem_type == onnx::TensorProto::FLOAT || v.elem_type == onnx::TensorProto::DOUBLE;
  if (!v.ints.has_value()) return false;
  if (v.elem_type != onnx::TensorProto::INT64 && v.elem_type != onnx::TensorProto::INT32 &&
      v.elem_type != onnx::TensorProto::BOOL && v.elem_type != onnx::TensorProto::UINT8 &&
      v.elem_type != onnx::TensorProto::INT8) {
    return false;
  }
  return std::all_of(v.ints->begin(), v.ints->end(), [](const Expr& x) { return x.AsConstant().has_value(); });
}

}  // namespace

// "float32 [batch,3] ints=[..]" for FOOTPRINT_SHAPES_TRACE.
std::string Describe(const SymValue& v) {
  std::string out = absl::StrCat("kind=", static_cast<int>(v.kind), " type=", v.elem_type, " shape=");
  if (v.shape.has_value()) {
    absl::StrAppend(&out, "[", absl::StrJoin(*v.shape, ",", [](std::string* o, const Expr& e) { o->append(e.ToString()); }), "]");
  } else {
    absl::StrAppend(&out, "?");
  }
  if (v.ints.has_value() && v.ints->size() <= 16) {
    absl::StrAppend(&out, " ints=[", absl::StrJoin(*v.ints, ",", [](std::string* o, const Expr& e) { o->append(e.ToString()); }), "]");
  }
  if (!v.reason.empty()) absl::StrAppend(&out, " (", v.reason, ")");
  return out;
}

// --- The engine -------------------------------------------------------------

struct Scope {
  GraphShapes* table = nullptr;
  const Scope* outer = nullptr;

  const SymValue* Find(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->outer) {
      if (const SymValue* value = s->table->Find(name)) return value;
    }
    return nullptr;
  }
};

class Engine {
 public:
  Engine(const onnx::ModelProto& model, const TensorShapes& tensor_shapes, const SymbolValues& symbol_values,
         bool onnx_fallback, ShapeTables& tables)
      : onnx_fallback_(onnx_fallback), tables_(tables), tensor_shapes_(tensor_shapes), symbol_values_(symbol_values) {
    for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
      opsets_[opset.domain() == "ai.onnx" ? "" : opset.domain()] = static_cast<int>(opset.version());
    }
  }

  // Infers `graph`; `input_values` (for bodies) overrides the types of its inputs.
  void InferGraph(const onnx::GraphProto& graph, const Scope* outer, const std::vector<SymValue>* input_values,
                  int depth);

  // Infers a body again, returning its output values.
  std::vector<SymValue> InferBody(const onnx::GraphProto& body, const Scope* outer,
                                  const std::vector<SymValue>& inputs, int depth) {
    InferGraph(body, outer, &inputs, depth);
    std::vector<SymValue> outputs;
    const GraphShapes& table = tables_.graphs[&body];
    for (const auto& output : body.output()) {
      const SymValue* value = table.Find(output.name());
      outputs.push_back(value == nullptr ? UnknownValue("body output not produced") : *value);
    }
    return outputs;
  }

  void Finish() {
    if (!unknown_ops_.empty()) {
      std::vector<std::string> names;
      for (const auto& [op, count] : unknown_ops_) names.push_back(absl::StrCat(op, " (", count, ")"));
      std::sort(names.begin(), names.end());
      tables_.warnings.push_back(absl::StrCat("no shape function for: ", absl::StrJoin(names, ", ")));
    }
  }

 private:
  void InferNode(const onnx::NodeProto& node, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferIf(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferLoop(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferScan(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferWithOnnx(const OpContext& ctx, std::vector<SymValue>& outputs);

  bool onnx_fallback_;  // Ask ONNX's per-node shape functions for ops we have none for.
  ShapeTables& tables_;
  const TensorShapes& tensor_shapes_;
  const SymbolValues& symbol_values_;
 public:
  std::set<std::string> used_tensor_shapes_;  // Names of tensor_shapes_ some node writes.
  std::set<std::string> used_symbol_values_;  // Names of symbol_values_ the engine's own symbols have.
  // A symbol the engine makes up, or its value when the user bound it.
  std::set<std::string> made_up_symbols_;  // Symbols no input names: unnamed dims, trip counts.
  Expr MadeUpSymbol(const std::string& name) {
    auto it = symbol_values_.find(name);
    made_up_symbols_.insert(name);
    if (it == symbol_values_.end()) return Expr::Symbol(name);
    used_symbol_values_.insert(name);
    return Expr(it->second);
  }
 private:
  const bool trace_ = std::getenv("FOOTPRINT_SHAPES_TRACE") != nullptr;  // Each output to stderr.
  std::map<std::string, int> opsets_;
  std::map<std::string, int> unknown_ops_;
};

void Engine::InferGraph(const onnx::GraphProto& graph, const Scope* outer, const std::vector<SymValue>* input_values,
                        int depth) {
  GraphShapes& table = tables_.graphs[&graph];
  table.values.clear();
  table.index.clear();
  Scope scope{.table = &table, .outer = outer};
  if (depth > kMaxDepth) return;
  size_t value_count = graph.initializer_size() + graph.input_size();
  for (const onnx::NodeProto& node : graph.node()) value_count += node.output_size();
  table.values.reserve(value_count);
  table.index.reserve(value_count);
  for (const onnx::TensorProto& tensor : graph.initializer()) table.Set(tensor.name(), FromTensorProto(tensor));
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& tensor : graph.initializer()) initializers.insert(tensor.name());
  for (int i = 0; i < graph.input_size(); ++i) {
    const onnx::ValueInfoProto& input = graph.input(i);
    if (input_values != nullptr && i < static_cast<int>(input_values->size())) {
      SymValue v = (*input_values)[i];
      // The body's own declaration can only add what the outer node does not say.
      MergeOnnxType(input.has_type() ? &input.type() : nullptr, v);
      table.Set(input.name(), std::move(v));
      continue;
    }
    if (initializers.contains(input.name())) continue;  // An input with a default value.
    SymValue v = FromTypeProto(input.has_type() ? &input.type() : nullptr);
    if (v.shape.has_value() && outer == nullptr) {
      // An unnamed dim of a main-graph input gets a name of its own, so that
      // the figures can still be formulas.
      for (size_t d = 0; d < v.shape->size(); ++d) {
        if (!(*v.shape)[d].known()) {
          (*v.shape)[d] = MadeUpSymbol(absl::StrCat(input.name(), "_dim", d));
        }
      }
    }
    table.Set(input.name(), std::move(v));
  }
  absl::flat_hash_map<std::string, const onnx::TypeProto*> onnx_types;
  for (const auto& info : graph.value_info()) onnx_types[info.name()] = &info.type();
  for (const auto& info : graph.output()) {
    if (info.has_type()) onnx_types[info.name()] = &info.type();
  }

  // File order, deferring a node whose inputs are not defined yet (files are
  // nearly always in order, so this stays linear).
  std::vector<const onnx::NodeProto*> pending;
  for (const onnx::NodeProto& node : graph.node()) pending.push_back(&node);
  std::vector<SymValue> outputs;
  bool progress = true;
  while (!pending.empty()) {
    std::vector<const onnx::NodeProto*> later;
    for (const onnx::NodeProto* node : pending) {
      bool ready = true;
      if (progress) {
        for (const std::string& input : node->input()) {
          if (!input.empty() && scope.Find(input) == nullptr) {
            ready = false;
            break;
          }
        }
      }
      if (!ready) {
        later.push_back(node);
        continue;
      }
      // Shape functions may write out[0] unchecked: a (damaged) node that
      // lists no output has nothing to infer.
      if (node->output_size() == 0) continue;
      outputs.assign(node->output_size(), SymValue{});
      InferNode(*node, scope, depth, outputs);
      for (int o = 0; o < node->output_size(); ++o) {
        if (node->output(o).empty()) continue;
        SymValue& v = outputs[o];
        auto type = onnx_types.find(node->output(o));
        if (type != onnx_types.end()) MergeOnnxType(type->second, v, &made_up_symbols_);
        if (v.kind == SymValue::Kind::kTensor && v.HasConcreteShape() && v.elem_type != 0) {
          v.reason.clear();  // Sized after all (ONNX's pass or the model's declarations filled it in).
        }
        if (!v.HasFullShape() && v.reason.empty()) {
          for (const std::string& input : node->input()) {
            const SymValue* in = input.empty() ? nullptr : scope.Find(input);
            if (in != nullptr && in->kind != SymValue::Kind::kSequence && !in->HasFullShape()) {
              v.reason = absl::StrCat("depends on '", input, "', whose shape is not known");
              break;
            }
          }
        }
        if (auto given = tensor_shapes_.find(node->output(o)); given != tensor_shapes_.end()) {
          used_tensor_shapes_.insert(given->first);
          v.kind = SymValue::Kind::kTensor;
          v.shape = std::vector<Expr>(given->second.begin(), given->second.end());
          v.ints.reset();
          v.floats.reset();
          v.reason = v.elem_type == 0 ? "element type unknown (the op has no shape function)" : "";
        } else if (!v.HasFullShape() && !v.reason.empty() && v.reason.find("--tensor-shape") == std::string::npos &&
                   (v.reason.find("data-dependent") != std::string::npos ||
                    v.reason.find("before running") != std::string::npos ||
                    v.reason.find("no shape function") != std::string::npos)) {
          absl::StrAppend(&v.reason, " (give it with --tensor-shape ", node->output(o), "=DIMS)");
        }
        if (trace_) {
          std::cerr << node->op_type() << " " << node->name() << " -> " << node->output(o) << " " << Describe(v) << "\n";
        }
        table.Set(node->output(o), std::move(v));
      }
    }
    progress = later.size() < pending.size();
    pending.swap(later);
  }
}

void Engine::InferNode(const onnx::NodeProto& node, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto opset = opsets_.find(domain);
  OpContext ctx{.node = node, .opset = opset == opsets_.end() ? 0 : opset->second, .engine = this, .scope = &scope};
  std::forward_list<SymValue> missing;  // Keeps the "undefined input" values alive (and in place).
  for (const std::string& input : node.input()) {
    if (input.empty()) {
      ctx.inputs.push_back(nullptr);
      continue;
    }
    const SymValue* v = scope.Find(input);
    if (v == nullptr) {
      missing.push_front(UnknownValue(absl::StrCat("input '", input, "' is not defined")));
      v = &missing.front();
    }
    ctx.inputs.push_back(v);
  }
  const bool default_domain = IsDefaultDomain(node.domain());
  if (default_domain && node.op_type() == "Constant") {
    outputs[0] = FromConstantNode(node);
    return;
  }
  if (default_domain && node.op_type() == "If" && InferIf(ctx, scope, depth, outputs)) return;
  if (default_domain && node.op_type() == "Loop" && InferLoop(ctx, scope, depth, outputs)) return;
  if (default_domain && node.op_type() == "Scan" && InferScan(ctx, scope, depth, outputs)) return;
  const ShapeFunction* function = nullptr;
  if (default_domain) {
    function = FindStandardShapeFunction(node.op_type());
  } else if (node.domain() == "com.microsoft") {
    function = FindContribShapeFunction(node.op_type());
  }
  if (function != nullptr && (*function)(ctx, outputs)) return;
  if (InferWithOnnx(ctx, outputs)) {
    ++tables_.onnx_fallback_nodes;
    return;
  }
  if (node.domain() == "ai.onnx.ml" || node.domain() == "com.microsoft.extensions") {
    // After ONNX's: it has shape functions for some ml ops, not these.
    function = FindMlShapeFunction(node.op_type());
    if (function != nullptr && (*function)(ctx, outputs)) return;
  }
  const std::string op_name = default_domain ? node.op_type() : absl::StrCat(node.domain(), ".", node.op_type());
  bool any_unknown = false;
  for (SymValue& out : outputs) {
    if (out.kind == SymValue::Kind::kUnknown || !out.HasFullShape()) {
      any_unknown = true;
      if (out.reason.empty()) {
        out.reason = function != nullptr || default_domain
                         ? absl::StrCat("op ", op_name, ": output shape depends on values not known before running")
                         : absl::StrCat("no shape function for op ", op_name);
      }
    }
  }
  if (any_unknown && function == nullptr && !default_domain) ++unknown_ops_[op_name];
}

bool Engine::InferWithOnnx(const OpContext& ctx, std::vector<SymValue>& outputs) {
  if (!onnx_fallback_) return false;
  const onnx::NodeProto& node = ctx.node;
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto opset = opsets_.find(domain);
  if (opset == opsets_.end()) return false;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
  if (schema == nullptr || !schema->has_type_and_shape_inference_function()) return false;
  std::vector<onnx::TypeProto> types(node.input_size());
  std::vector<onnx::TensorProto> data;
  data.reserve(node.input_size());
  std::unordered_map<std::string, onnx::TypeProto*> types_by_name;
  std::unordered_map<std::string, const onnx::TensorProto*> data_by_name;
  for (int i = 0; i < node.input_size(); ++i) {
    const SymValue* v = ctx.Input(i);
    if (v == nullptr || v->kind == SymValue::Kind::kUnknown || v->kind == SymValue::Kind::kOther) continue;
    ToTypeProto(*v, types[i]);
    types_by_name[node.input(i)] = &types[i];
    if (v->kind == SymValue::Kind::kTensor && HasConstantData(*v)) {
      data.push_back(DataProto(*v));
      data_by_name[node.input(i)] = &data.back();
    }
  }
  try {
    // ONNX wants a mutable node only to reach subgraph attributes, which the
    // ops sent here do not have: nothing is written.
    onnx::NodeProto& mutable_node = const_cast<onnx::NodeProto&>(node);
    onnx::shape_inference::InferenceContextImpl context(mutable_node, types_by_name, data_by_name, {});
    schema->GetTypeAndShapeInferenceFunction()(context);
    bool any = false;
    for (int o = 0; o < node.output_size() && o < static_cast<int>(outputs.size()); ++o) {
      const onnx::TypeProto* type = context.getOutputType(o);
      if (type == nullptr || type->value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
      outputs[o] = FromTypeProto(type);
      any = true;
    }
    return any;
  } catch (const std::exception&) {
    return false;
  }
}

// --- Control flow -------------------------------------------------------------

namespace {

const onnx::GraphProto* Body(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return nullptr;
}

// The value either branch may produce: equal dims stay, different ones
// become the larger (an If's output is one branch's, so the max is an upper
// bound that sizes the arena safely).
SymValue JoinBranches(const SymValue& a, const SymValue& b) {
  if (a.kind != b.kind || a.kind == SymValue::Kind::kUnknown) {
    return UnknownValue("If branches disagree on the output type");
  }
  SymValue out;
  out.kind = a.kind;
  out.elem_type = a.elem_type != 0 ? a.elem_type : b.elem_type;
  if (a.kind == SymValue::Kind::kSequence) {
    out.shape = a.shape;
    out.reason = "sequence from an If";
    return out;
  }
  if (!a.shape.has_value() || !b.shape.has_value()) {
    out.reason = "If branch output of unknown rank";
    return out;
  }
  if (a.shape->size() != b.shape->size()) {
    // Different ranks: the branch with more elements sizes the output (an
    // upper bound, as for differing dims below).
    std::optional<int64_t> count_a = ElementCount(*a.shape).AsConstant();
    std::optional<int64_t> count_b = ElementCount(*b.shape).AsConstant();
    if (!count_a.has_value() || !count_b.has_value()) {
      out.reason = "If branches give different ranks";
      return out;
    }
    out.shape = *count_a >= *count_b ? a.shape : b.shape;
    return out;
  }
  out.shape.emplace();
  for (size_t i = 0; i < a.shape->size(); ++i) {
    const Expr& x = (*a.shape)[i];
    const Expr& y = (*b.shape)[i];
    out.shape->push_back(x == y ? x : Expr::Max(x, y));
  }
  if (a.ints.has_value() && b.ints.has_value() && a.ints->size() == b.ints->size()) {
    bool same = true;
    for (size_t i = 0; i < a.ints->size(); ++i) same = same && (*a.ints)[i] == (*b.ints)[i];
    if (same) out.ints = a.ints;
  }
  return out;
}

SymValue ScalarOf(int32_t elem_type) { return TensorOf(elem_type, {}); }

}  // namespace

bool Engine::InferIf(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* then_branch = Body(ctx.node, "then_branch");
  const onnx::GraphProto* else_branch = Body(ctx.node, "else_branch");
  if (then_branch == nullptr || else_branch == nullptr) return false;
  std::vector<SymValue> then_out = InferBody(*then_branch, &scope, {}, depth + 1);
  std::vector<SymValue> else_out = InferBody(*else_branch, &scope, {}, depth + 1);
  std::optional<bool> condition;
  if (const SymValue* cond = ctx.Input(0); cond != nullptr && cond->ints.has_value() && cond->ints->size() == 1) {
    if (std::optional<int64_t> c = (*cond->ints)[0].AsConstant()) condition = *c != 0;
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (o >= then_out.size() || o >= else_out.size()) break;
    if (condition.has_value()) {
      outputs[o] = *condition ? then_out[o] : else_out[o];
    } else {
      outputs[o] = JoinBranches(then_out[o], else_out[o]);
    }
  }
  return true;
}

// Loop(M, cond, v_initial...) -> (v_final..., scan_outputs...); body
// (iter, cond, v...) -> (cond, v..., scan_elements...).
bool Engine::InferLoop(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* body = Body(ctx.node, "body");
  if (body == nullptr) return false;
  const size_t carried = ctx.inputs.size() >= 2 ? ctx.inputs.size() - 2 : 0;
  std::vector<SymValue> body_inputs;
  body_inputs.push_back(ScalarOf(onnx::TensorProto::INT64));
  body_inputs.push_back(ScalarOf(onnx::TensorProto::BOOL));
  for (size_t i = 0; i < carried; ++i) {
    const SymValue* v = ctx.Input(2 + i);
    body_inputs.push_back(v != nullptr ? *v : UnknownValue("loop-carried value without an initial value"));
    body_inputs.back().ints.reset();  // Values change from one iteration to the next.
    body_inputs.back().floats.reset();
  }
  std::vector<SymValue> body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  // A carried value whose shape changes per iteration: infer the body again
  // with those dims unknown, so nothing inside claims the first iteration's size.
  bool changed = false;
  for (size_t i = 0; i < carried && 1 + i < body_out.size(); ++i) {
    SymValue& in = body_inputs[2 + i];
    const SymValue& out = body_out[1 + i];
    if (in.kind != SymValue::Kind::kTensor || !in.shape.has_value()) continue;
    if (!out.shape.has_value() || out.shape->size() != in.shape->size()) {
      in.shape.reset();
      in.reason = "loop-carried value changes rank across iterations";
      changed = true;
      continue;
    }
    for (size_t d = 0; d < in.shape->size(); ++d) {
      if ((*in.shape)[d] != (*out.shape)[d]) {
        (*in.shape)[d] = Expr::Unknown();
        in.reason = "loop-carried value changes shape across iterations";
        changed = true;
      }
    }
  }
  if (changed) body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  // The trip count: M's value when known; without M (a while loop) or when
  // M is computed at run time, a symbol of its own that --dim can bind.
  Expr trips = Expr::Unknown();
  if (const SymValue* m = ctx.Input(0); m != nullptr && m->ints.has_value() && m->ints->size() == 1) {
    trips = (*m->ints)[0];
  }
  const std::string loop_name =
      ctx.node.name().empty() ? (ctx.node.output_size() > 0 ? ctx.node.output(0) : "loop") : ctx.node.name();
  const std::string trip_symbol = absl::StrCat(loop_name, ".trip_count");
  const bool made_up = !trips.known();
  if (made_up) trips = MadeUpSymbol(trip_symbol);
  const std::string trip_reason =
      absl::StrCat("Loop '", loop_name, "': trip count not known before running (bind it with --dim ",
                   trip_symbol, "=N)");
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (o < carried) {
      outputs[o] = 1 + o < body_out.size() ? body_out[1 + o] : UnknownValue("Loop body has too few outputs");
      outputs[o].ints.reset();
      outputs[o].floats.reset();
      if (!outputs[o].HasFullShape() && (outputs[o].reason.empty() ||
                                             body_inputs[2 + o].reason.rfind("loop-carried value changes", 0) == 0)) {
        outputs[o].reason = "loop-carried value changes shape across iterations";
      }
      continue;
    }
    const size_t b = 1 + o;
    if (b >= body_out.size()) break;
    SymValue stacked = body_out[b];
    stacked.ints.reset();
    stacked.floats.reset();
    if (stacked.shape.has_value()) stacked.shape->insert(stacked.shape->begin(), trips);
    if (made_up && !trips.AsConstant().has_value()) stacked.reason = trip_reason;
    outputs[o] = std::move(stacked);
  }
  return true;
}

// Scan(initial states..., scan inputs...) -> (final states..., scan outputs...).
bool Engine::InferScan(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* body = Body(ctx.node, "body");
  if (body == nullptr || ctx.opset < 9) return false;  // Scan-8 has a sequence_lens input; ONNX handles it.
  const int64_t num_scan_inputs = ctx.Int("num_scan_inputs", 0);
  const int64_t num_inputs = static_cast<int64_t>(ctx.inputs.size());
  const int64_t num_states = num_inputs - num_scan_inputs;
  if (num_scan_inputs <= 0 || num_states < 0) return false;
  const std::vector<int64_t> input_axes =
      ctx.Ints("scan_input_axes").value_or(std::vector<int64_t>(num_scan_inputs, 0));
  std::vector<SymValue> body_inputs;
  Expr length = Expr::Unknown();
  for (int64_t i = 0; i < num_states; ++i) {
    const SymValue* v = ctx.Input(i);
    body_inputs.push_back(v != nullptr ? *v : UnknownValue("missing Scan state"));
    body_inputs.back().ints.reset();
    body_inputs.back().floats.reset();
  }
  for (int64_t i = 0; i < num_scan_inputs; ++i) {
    const SymValue* v = ctx.Input(num_states + i);
    SymValue slice = v != nullptr ? *v : UnknownValue("missing Scan input");
    slice.ints.reset();
    slice.floats.reset();
    if (slice.shape.has_value()) {
      const int64_t rank = static_cast<int64_t>(slice.shape->size());
      std::optional<int64_t> axis =
          NormalizeAxis(i < static_cast<int64_t>(input_axes.size()) ? input_axes[i] : 0, rank);
      if (axis.has_value()) {
        if (!length.known()) length = (*slice.shape)[*axis];
        slice.shape->erase(slice.shape->begin() + *axis);
      } else {
        slice.shape.reset();
      }
    }
    body_inputs.push_back(std::move(slice));
  }
  std::vector<SymValue> body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  const std::vector<int64_t> output_axes = ctx.Ints("scan_output_axes").value_or(std::vector<int64_t>{});
  for (size_t o = 0; o < outputs.size() && o < body_out.size(); ++o) {
    SymValue out = body_out[o];
    out.ints.reset();
    out.floats.reset();
    if (static_cast<int64_t>(o) >= num_states && out.shape.has_value()) {
      const size_t k = o - static_cast<size_t>(num_states);
      const int64_t rank = static_cast<int64_t>(out.shape->size()) + 1;
      std::optional<int64_t> axis = NormalizeAxis(k < output_axes.size() ? output_axes[k] : 0, rank);
      if (axis.has_value()) {
        out.shape->insert(out.shape->begin() + *axis, length);
      } else {
        out.shape.reset();
      }
    }
    outputs[o] = std::move(out);
  }
  return true;
}

namespace {

bool GraphNeedsOnnxFallback(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (default_domain && node.op_type() != "Constant" && node.op_type() != "If" && node.op_type() != "Loop" &&
        node.op_type() != "Scan" && FindStandardShapeFunction(node.op_type()) == nullptr) {
      return true;
    }
    if (node.domain() == "com.microsoft" && FindContribShapeFunction(node.op_type()) == nullptr) return true;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g() && GraphNeedsOnnxFallback(attribute.g())) return true;
      for (const onnx::GraphProto& body : attribute.graphs()) {
        if (GraphNeedsOnnxFallback(body)) return true;
      }
    }
  }
  return false;
}

}  // namespace

bool NeedsOnnxFallback(const onnx::ModelProto& model) { return GraphNeedsOnnxFallback(model.graph()); }

absl::StatusOr<ShapeTables> InferSymbolicShapes(const onnx::ModelProto& model, const TensorShapes& tensor_shapes,
                                                const SymbolValues& symbol_values, bool onnx_fallback) {
  ShapeTables tables;
  Engine engine(model, tensor_shapes, symbol_values, onnx_fallback, tables);
  engine.InferGraph(model.graph(), nullptr, nullptr, 0);
  engine.Finish();
  for (const auto& [name, value] : symbol_values) {
    if (!engine.used_symbol_values_.contains(name)) tables.unused_symbol_values.push_back(name);
  }
  for (const auto& [name, dims] : tensor_shapes) {
    if (!engine.used_tensor_shapes_.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tensor-shape ", name, ": no node output is named '", name, "'"));
    }
  }
  return tables;
}

// --- Input bindings ---------------------------------------------------------

std::optional<std::vector<int64_t>> ParseShapeText(const std::string& text) {
  if (text == "scalar") return std::vector<int64_t>{};
  std::vector<int64_t> dims;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text, absl::ByAnyChar("x,")))) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 0) return std::nullopt;
    dims.push_back(value);
  }
  return dims;
}

absl::Status ApplyInputBindings(const InputBindings& bindings, onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  absl::flat_hash_set<std::string> initializers;
  for (const auto& tensor : graph.initializer()) initializers.insert(tensor.name());
  for (const auto& [name, dims] : bindings.input_shapes) {
    onnx::ValueInfoProto* input = nullptr;
    std::vector<std::string> names;
    for (onnx::ValueInfoProto& candidate : *graph.mutable_input()) {
      if (initializers.contains(candidate.name())) continue;
      names.push_back(candidate.name());
      if (candidate.name() == name) input = &candidate;
    }
    if (input == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": no graph input named '", name,
                                                     "' (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (input->type().has_tensor_type() == false && input->type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": the input is not a tensor"));
    }
    onnx::TypeProto_Tensor* tensor = input->mutable_type()->mutable_tensor_type();
    if (tensor->has_shape() && tensor->shape().dim_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": the input has rank ",
                                                     tensor->shape().dim_size(), ", the shape given has rank ",
                                                     dims.size()));
    }
    if (tensor->has_shape()) {
      for (int d = 0; d < tensor->shape().dim_size(); ++d) {
        const auto& dim = tensor->shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != dims[d]) {
          return absl::InvalidArgumentError(absl::StrCat("--input-shape ", name, ": dim ", d, " is fixed at ",
                                                         dim.dim_value(), " in the model, not ", dims[d]));
        }
      }
    }
    onnx::TensorShapeProto* shape = tensor->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  if (bindings.dim_default.has_value()) {
    absl::flat_hash_set<std::string> defaulted;  // dim_params now bound: also in outputs and value_info.
    for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
      if (initializers.contains(input.name())) continue;
      if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
      for (auto& dim : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (dim.has_dim_value()) continue;
        if (dim.has_dim_param()) defaulted.insert(dim.dim_param());
        dim.set_dim_value(*bindings.dim_default);
      }
    }
    auto rebind = [&](onnx::ValueInfoProto& info) {
      if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
      for (auto& dim : *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
        if (dim.has_dim_param() && defaulted.contains(dim.dim_param())) dim.set_dim_value(*bindings.dim_default);
      }
    };
    for (onnx::ValueInfoProto& info : *graph.mutable_output()) rebind(info);
    for (onnx::ValueInfoProto& info : *graph.mutable_value_info()) rebind(info);
  }
  return absl::OkStatus();
}

}  // namespace footprint::symbolic
