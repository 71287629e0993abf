#include "analyzer/shapes/shapes.h"

#include <exception>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/loader/isolated_call.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/tensor_size.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace footprint {
namespace {

bool IsConstantNodeProto(const onnx::NodeProto& node) {
  return node.op_type() == "Constant" && IsDefaultDomain(node);
}

void BindInShape(const DimBindings& dims, onnx::TypeProto& type, absl::flat_hash_set<std::string>* used) {
  onnx::TypeProto* tensor_holder = &type;
  while (true) {
    if (tensor_holder->has_sequence_type()) {
      tensor_holder = tensor_holder->mutable_sequence_type()->mutable_elem_type();
    } else if (tensor_holder->has_optional_type()) {
      tensor_holder = tensor_holder->mutable_optional_type()->mutable_elem_type();
    } else {
      break;
    }
  }
  if (!tensor_holder->has_tensor_type() || !tensor_holder->tensor_type().has_shape()) return;
  for (onnx::TensorShapeProto_Dimension& dim : *tensor_holder->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
    if (!dim.has_dim_param()) continue;
    auto it = dims.find(dim.dim_param());
    if (it == dims.end()) continue;
    if (used != nullptr) used->insert(it->first);
    dim.set_dim_value(it->second);  // Clears dim_param (oneof).
  }
}

absl::StatusOr<SizedType> SizeOfTensorShape(int32_t data_type, const std::vector<Dim>& dims) {
  SizedType sized{.data_type = data_type, .shape = dims};
  const std::optional<int> bits = BitsPerElement(data_type);
  if (!bits.has_value()) {
    sized.unsized_reason = data_type == kDataTypeString ? "string tensor" : "unknown element type";
    return sized;
  }
  std::vector<int64_t> values;
  values.reserve(dims.size());
  for (const Dim& dim : dims) {
    if (!dim.value.has_value()) {
      sized.unsized_reason = dim.symbol.empty() ? "unknown dimension"
                                                : absl::StrCat("symbolic dimension '", dim.symbol, "' not bound");
      return sized;
    }
    values.push_back(*dim.value);
  }
  absl::StatusOr<int64_t> bytes = TensorByteSize(values, *bits);
  if (!bytes.ok()) return bytes.status();
  sized.bytes = *bytes;
  return sized;
}

}  // namespace

absl::Status BindDims(const DimBindings& dims, onnx::ModelProto& model) {
  if (dims.empty()) return absl::OkStatus();
  onnx::GraphProto& graph = *model.mutable_graph();
  absl::flat_hash_set<std::string> used;
  absl::flat_hash_set<std::string> known;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    const onnx::TypeProto& type = input.type();
    if (type.has_tensor_type() && type.tensor_type().has_shape()) {
      for (const auto& dim : type.tensor_type().shape().dim()) {
        if (dim.has_dim_param()) known.insert(dim.dim_param());
      }
    }
  }
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) BindInShape(dims, *input.mutable_type(), &used);
  for (onnx::ValueInfoProto& output : *graph.mutable_output()) BindInShape(dims, *output.mutable_type(), nullptr);
  for (onnx::ValueInfoProto& info : *graph.mutable_value_info()) BindInShape(dims, *info.mutable_type(), nullptr);
  for (const auto& [name, value] : dims) {
    if (used.contains(name)) continue;
    std::vector<std::string> names(known.begin(), known.end());
    std::sort(names.begin(), names.end());
    return absl::InvalidArgumentError(absl::StrCat(
        "--dim ", name, ": no graph input has a dimension named '", name, "'",
        names.empty() ? std::string(" (the inputs have no named dimensions)")
                      : absl::StrCat(" (named dimensions: ", absl::StrJoin(names, ", "), ")")));
  }
  return absl::OkStatus();
}

namespace {

constexpr const char* kSkippedDomain = "onnx_footprint.skipped";

void InferOrWarn(onnx::ModelProto& model, bool data_propagation, std::vector<std::string>& warnings) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, data_propagation);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& error) {
    // ONNX's messages already name the node and op ("(op_type:Reshape, node name: r1)").
    std::string message = error.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    warnings.push_back(absl::StrCat("ONNX shape inference: ", message));
  }
}

bool HasNodeWithoutSchema(const onnx::GraphProto& graph, const std::map<std::string, int>& opsets) {
  for (const onnx::NodeProto& node : graph.node()) {
    auto opset = opsets.find(OpsetKey(node.domain()));
    if (opset == opsets.end() ||
        onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, node.domain()) == nullptr) {
      return true;
    }
    for (const onnx::GraphProto* body : BodiesOf(node)) {
      if (HasNodeWithoutSchema(*body, opsets)) return true;
    }
  }
  return false;
}

// ONNX 1.12's data propagation dereferences the input type of Shape and Size
// without checking it exists, and crashes when the input comes from an op it
// cannot infer (a custom op, say). `inferred` is a copy of `model` after
// inference without data propagation; every Shape/Size node whose input has
// no type there is moved to a domain ONNX does not know, so that inference
// passes over it, and recorded in `skipped` so that the caller puts it back.
void SkipUnsafeShapeNodes(onnx::GraphProto& graph, const onnx::GraphProto& inferred,
                          absl::flat_hash_set<std::string> typed_outside,
                          std::vector<std::pair<onnx::NodeProto*, std::string>>& skipped) {
  absl::flat_hash_set<std::string>& typed = typed_outside;
  for (const auto& info : inferred.value_info()) {
    if (info.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) typed.insert(info.name());
  }
  for (const auto& info : inferred.input()) typed.insert(info.name());
  for (const auto& info : inferred.output()) {
    if (info.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) typed.insert(info.name());
  }
  for (const auto& tensor : inferred.initializer()) typed.insert(tensor.name());
  for (const auto& node : inferred.node()) {
    if (IsConstantNodeProto(node)) {
      for (const auto& output : node.output()) typed.insert(output);
    }
  }
  const int count = std::min(graph.node_size(), inferred.node_size());
  for (int index = 0; index < count; ++index) {
    onnx::NodeProto& node = *graph.mutable_node(index);
    const onnx::NodeProto& inferred_node = inferred.node(index);
    const bool default_domain = IsDefaultDomain(node);
    if (default_domain && (node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size() > 0 &&
        !typed.contains(node.input(0))) {
      skipped.emplace_back(&node, node.domain());
      node.set_domain(kSkippedDomain);
    }
    for (int a = 0; a < node.attribute_size() && a < inferred_node.attribute_size(); ++a) {
      onnx::AttributeProto& attribute = *node.mutable_attribute(a);
      const onnx::AttributeProto& inferred_attribute = inferred_node.attribute(a);
      if (attribute.has_g() && inferred_attribute.has_g()) {
        SkipUnsafeShapeNodes(*attribute.mutable_g(), inferred_attribute.g(), typed, skipped);
      }
      for (int b = 0; b < attribute.graphs_size() && b < inferred_attribute.graphs_size(); ++b) {
        SkipUnsafeShapeNodes(*attribute.mutable_graphs(b), inferred_attribute.graphs(b), typed, skipped);
      }
    }
  }
}

}  // namespace

namespace {

std::vector<std::string> RunOnnxShapeInferenceInProcess(onnx::ModelProto& model) {
  std::vector<std::string> warnings;
  std::map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    opsets[OpsetKey(opset.domain())] = static_cast<int>(opset.version());
  }
  std::vector<std::pair<onnx::NodeProto*, std::string>> skipped;
  if (HasNodeWithoutSchema(model.graph(), opsets)) {
    onnx::ModelProto inferred = model;
    std::vector<std::string> ignored;
    InferOrWarn(inferred, /*data_propagation=*/false, ignored);
    SkipUnsafeShapeNodes(*model.mutable_graph(), inferred.graph(), {}, skipped);
  }
  if (!skipped.empty()) {
    // Declared, so that ONNX passes over the skipped nodes as it does over any custom op.
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain(kSkippedDomain);
    opset->set_version(1);
  }
  InferOrWarn(model, /*data_propagation=*/true, warnings);
  if (!skipped.empty()) model.mutable_opset_import()->RemoveLast();
  for (auto& [node, domain] : skipped) node->set_domain(domain);
  if (!skipped.empty()) {
    warnings.push_back(absl::StrCat(skipped.size(), " Shape/Size node(s) read tensors of unknown type (first: '",
                                    skipped.front().first->name(), "'); their outputs stay unsized"));
  }
  return warnings;
}

}  // namespace

std::vector<std::string> RunOnnxShapeInference(onnx::ModelProto& model) {
  // The child sends back: the warnings, one per line, a NUL, then the model.
  absl::StatusOr<std::string> result = RunIsolated(
      [&model]() {
        onnx::ModelProto inferred = model;
        std::string bytes = absl::StrJoin(RunOnnxShapeInferenceInProcess(inferred), "\n");
        bytes.push_back('\0');
        inferred.AppendToString(&bytes);
        return bytes;
      },
      kOnnxInferenceDeadline);
  if (!result.ok()) {
    return {absl::StrCat("ONNX's shape inference ", result.status().message(),
                         " on this model; only the shapes stored in the file are used")};
  }
  const size_t separator = result->find('\0');
  onnx::ModelProto inferred;
  if (separator == std::string::npos ||
      !inferred.ParseFromArray(result->data() + separator + 1, static_cast<int>(result->size() - separator - 1))) {
    return {"ONNX's shape inference returned an unreadable model; only the shapes stored in the file are used"};
  }
  model = std::move(inferred);
  std::vector<std::string> warnings;
  if (separator > 0) warnings = absl::StrSplit(result->substr(0, separator), '\n');
  return warnings;
}

void PrepareOnnxSchemas() { (void)onnx::OpSchemaRegistry::Schema("Relu", 14, ""); }

TypeIndex IndexTypes(const onnx::GraphProto& graph) {
  TypeIndex index;
  for (const auto& info : graph.value_info()) index[info.name()] = &info.type();
  for (const auto& info : graph.output()) index[info.name()] = &info.type();
  for (const auto& info : graph.input()) index[info.name()] = &info.type();
  return index;
}

absl::StatusOr<SizedType> SizeOfType(const onnx::TypeProto* type) {
  SizedType sized;
  if (type == nullptr) {
    sized.unsized_reason = "no type or shape inferred";
    return sized;
  }
  switch (type->value_case()) {
    case onnx::TypeProto::kTensorType:
      break;
    case onnx::TypeProto::kSequenceType:
      sized.unsized_reason = "sequence";
      return sized;
    case onnx::TypeProto::kMapType:
      sized.unsized_reason = "map";
      return sized;
    case onnx::TypeProto::kOptionalType:
      sized.unsized_reason = "optional";
      return sized;
    case onnx::TypeProto::kSparseTensorType:
      sized.unsized_reason = "sparse tensor";
      return sized;
    default:
      sized.unsized_reason = "no type inferred";
      return sized;
  }
  const onnx::TypeProto_Tensor& tensor = type->tensor_type();
  if (!tensor.has_shape()) {
    sized.data_type = tensor.elem_type();
    sized.unsized_reason = "rank unknown";
    return sized;
  }
  std::vector<Dim> dims;
  dims.reserve(tensor.shape().dim_size());
  for (const auto& dim : tensor.shape().dim()) {
    Dim d;
    if (dim.has_dim_value()) d.value = dim.dim_value();
    if (dim.has_dim_param()) d.symbol = dim.dim_param();
    dims.push_back(std::move(d));
  }
  return SizeOfTensorShape(tensor.elem_type(), dims);
}

absl::StatusOr<SizedType> SizeOfTensorProto(const onnx::TensorProto& tensor) {
  std::vector<Dim> dims;
  dims.reserve(tensor.dims_size());
  for (int64_t dim : tensor.dims()) dims.push_back(Dim{.value = dim});
  return SizeOfTensorShape(tensor.data_type(), dims);
}

absl::StatusOr<SizedType> SizeOfConstantValue(const onnx::NodeProto& constant) {
  for (const onnx::AttributeProto& attribute : constant.attribute()) {
    const std::string& name = attribute.name();
    if (name == "value") return SizeOfTensorProto(attribute.t());
    if (name == "value_float") return SizeOfTensorShape(onnx::TensorProto::FLOAT, {});
    if (name == "value_int") return SizeOfTensorShape(onnx::TensorProto::INT64, {});
    if (name == "value_floats") {
      return SizeOfTensorShape(onnx::TensorProto::FLOAT, {Dim{.value = attribute.floats_size()}});
    }
    if (name == "value_ints") {
      return SizeOfTensorShape(onnx::TensorProto::INT64, {Dim{.value = attribute.ints_size()}});
    }
    if (name == "value_string") return SizeOfTensorShape(kDataTypeString, {});
    if (name == "value_strings") {
      return SizeOfTensorShape(kDataTypeString, {Dim{.value = attribute.strings_size()}});
    }
    if (name == "sparse_value") {
      // Stored sparse, used dense: the dense shape is what the runtime holds.
      const onnx::SparseTensorProto& sparse = attribute.sparse_tensor();
      std::vector<Dim> dims;
      for (int64_t dim : sparse.dims()) dims.push_back(Dim{.value = dim});
      return SizeOfTensorShape(sparse.values().data_type(), dims);
    }
  }
  SizedType sized;
  sized.unsized_reason = "Constant node without a value attribute";
  return sized;
}

std::string ShapeToString(const std::optional<std::vector<Dim>>& shape) {
  if (!shape.has_value()) return "?";
  if (shape->empty()) return "scalar";
  return absl::StrJoin(*shape, "x", [](std::string* out, const Dim& dim) {
    if (dim.value.has_value()) {
      absl::StrAppend(out, *dim.value);
    } else {
      // A formula dim in parentheses, so that "x" still separates dims: 2x(past+seq)x8.
      const bool formula = dim.symbol.find_first_of("+-*(") != std::string::npos;
      absl::StrAppend(out, dim.symbol.empty() ? "?" : formula ? absl::StrCat("(", dim.symbol, ")") : dim.symbol);
    }
  });
}

}  // namespace footprint
