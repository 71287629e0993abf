// The user's bindings of graph inputs (--input-shape, --dim-default), applied
// to the model before any inference (shape_engine.h).
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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
