// ONNX's per-node shape functions, fed with our shapes and values: for the
// nodes that no shape function of ours sizes.
#include <algorithm>
#include <cctype>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/engine/engine.h"
#include "analyzer/shapes/engine/proto_values.h"
#include "analyzer/shapes/op_context.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace footprint::symbolic {
namespace {

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

// Every present input a tensor whose dims are all numbers, none of them a bound.
bool ExactInputs(const OpContext& ctx) {
  for (const SymValue* v : ctx.inputs) {
    if (v == nullptr) continue;
    if (v->kind != SymValue::Kind::kTensor || !v->HasConcreteShape() || v->max_over_branches || v->extent_bound) {
      return false;
    }
  }
  return true;
}

// "[ShapeInferenceError] First input tensor must have rank 3" -> "ONNX's
// check: first input tensor must have rank 3" (one line).
std::string OnnxCheckText(std::string text) {
  if (size_t end = text.find(']'); text.rfind('[', 0) == 0 && end != std::string::npos) text.erase(0, end + 1);
  text.erase(0, std::min(text.find_first_not_of(' '), text.size()));
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return absl::StrCat("ONNX's check: ", text);
}

}  // namespace

bool Engine::InferWithOnnx(const OpContext& ctx, std::vector<SymValue>& outputs) {
  if (!onnx_fallback_) return false;
  const onnx::NodeProto& node = ctx.node;
  const std::string domain = OpsetKey(node.domain());
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
  } catch (const onnx::InferenceError& error) {
    // With every input's shape exact, ONNX's check is the op's own: the
    // node cannot run with these shapes (an LSTM fed rank 5). Otherwise
    // (symbolic dims, unknown inputs) the check may be ONNX's limit, not the node's.
    if (!ExactInputs(ctx)) return false;
    for (SymValue& out : outputs) {
      out = UnknownValue(OnnxCheckText(error.what()));
      out.contradiction = true;
    }
    return !outputs.empty();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace footprint::symbolic
