// The user's bindings of graph inputs (--input-shape, --dim-default,
// --input-value), applied to the model before any inference (shape_engine.h).
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/shape_engine.h"

namespace footprint::symbolic {

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

namespace {

// "true"/"false" or an integer, as int64 (bool inputs take 0 and 1 only).
std::optional<int64_t> ParseIntegerValue(absl::string_view text, bool is_bool) {
  if (is_bool && (text == "true" || text == "True")) return 1;
  if (is_bool && (text == "false" || text == "False")) return 0;
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  if (is_bool && value != 0 && value != 1) return std::nullopt;
  return value;
}

}  // namespace

absl::StatusOr<InputValues> ParseInputValues(const std::map<std::string, std::string>& texts,
                                             const onnx::ModelProto& model) {
  InputValues values;
  if (texts.empty()) return values;
  absl::flat_hash_set<std::string> initializers;
  for (const auto& tensor : model.graph().initializer()) initializers.insert(tensor.name());
  for (const auto& [name, text] : texts) {
    const std::string flag = absl::StrCat("--input-value ", name, ": ");
    const onnx::ValueInfoProto* input = nullptr;
    std::vector<std::string> names;
    for (const onnx::ValueInfoProto& candidate : model.graph().input()) {
      if (initializers.contains(candidate.name())) continue;
      names.push_back(candidate.name());
      if (candidate.name() == name) input = &candidate;
    }
    if (input == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, "no graph input named '", name, "' (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (!input->type().has_tensor_type()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, "the input is not a tensor"));
    }
    const onnx::TypeProto_Tensor& tensor = input->type().tensor_type();
    const int32_t type = tensor.elem_type();
    const bool is_bool = type == onnx::TensorProto::BOOL;
    const bool is_float = IsFloatType(type);
    if (!is_bool && !is_float && !IsIntegerType(type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, "the input's element type is ", onnx::TensorProto::DataType_Name(type),
          "; --input-value takes integer, float or bool inputs"));
    }
    std::vector<std::string> parts = absl::StrSplit(text, ',');
    if (text.empty() || static_cast<int64_t>(parts.size()) > kMaxPropagatedElements) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, "expects 1 to ", kMaxPropagatedElements, " comma-separated values, got '", text, "'"));
    }
    const int rank = tensor.has_shape() ? tensor.shape().dim_size() : (parts.size() == 1 ? 0 : 1);
    if (rank > 1) {
      return absl::InvalidArgumentError(absl::StrCat(flag, "the input has rank ", rank,
                                                     "; --input-value takes a scalar or a 1-D input"));
    }
    if (rank == 0 && parts.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, "the input is a scalar, but ", parts.size(), " values were given"));
    }
    if (rank == 1 && tensor.has_shape() && tensor.shape().dim(0).has_dim_value() &&
        tensor.shape().dim(0).dim_value() != static_cast<int64_t>(parts.size())) {
      return absl::InvalidArgumentError(absl::StrCat(flag, "the input has ", tensor.shape().dim(0).dim_value(),
                                                     " elements, but ", parts.size(), " values were given"));
    }
    SymValue value;
    value.kind = SymValue::Kind::kTensor;
    value.elem_type = type;
    value.shape.emplace();
    if (rank == 1) value.shape->push_back(Expr(static_cast<int64_t>(parts.size())));
    for (const std::string& part : parts) {
      const absl::string_view trimmed = absl::StripAsciiWhitespace(part);
      if (is_float) {
        double f = 0;
        if (!absl::SimpleAtod(trimmed, &f)) {
          return absl::InvalidArgumentError(absl::StrCat(flag, "'", part, "' is not a number (the input is ",
                                                         onnx::TensorProto::DataType_Name(type), ")"));
        }
        if (!value.floats.has_value()) value.floats.emplace();
        value.floats->push_back(f);
        continue;
      }
      std::optional<int64_t> i = ParseIntegerValue(trimmed, is_bool);
      if (!i.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(flag, "'", part, "' is not ", is_bool ? "a bool (0, 1, true, false)" : "an integer",
                         " (the input is ", onnx::TensorProto::DataType_Name(type), ")"));
      }
      if (!value.ints.has_value()) value.ints.emplace();
      value.ints->push_back(Expr(*i));
    }
    values.emplace(name, std::move(value));
  }
  return values;
}

absl::Status ApplyInputBindings(const InputBindings& bindings, onnx::ModelProto& model) {
  absl::StatusOr<InputValues> values = ParseInputValues(bindings.input_values, model);
  if (!values.ok()) return values.status();
  for (const auto& [name, value] : *values) {
    // A value is also its input's shape; a --input-shape of that input must agree.
    std::vector<int64_t> dims = *value.ConcreteShape();
    if (auto given = bindings.input_shapes.find(name); given != bindings.input_shapes.end() && given->second != dims) {
      return absl::InvalidArgumentError(absl::StrCat("--input-value ", name, ": ", dims.empty() ? "a scalar" : absl::StrCat(dims[0], " values"),
                                                     ", but --input-shape ", name, " gives another shape"));
    }
    for (onnx::ValueInfoProto& input : *model.mutable_graph()->mutable_input()) {
      if (input.name() != name) continue;
      onnx::TensorShapeProto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    }
  }
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
