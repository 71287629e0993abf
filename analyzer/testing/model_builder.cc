#include "analyzer/testing/model_builder.h"

namespace footprint::testing {

onnx::TypeProto TensorType(int32_t elem_type, const std::vector<TestDim>& dims) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = type.mutable_tensor_type()->mutable_shape();
  for (const TestDim& dim : dims) {
    if (std::holds_alternative<int64_t>(dim)) {
      shape->add_dim()->set_dim_value(std::get<int64_t>(dim));
    } else {
      shape->add_dim()->set_dim_param(std::get<std::string>(dim));
    }
  }
  return type;
}

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

ModelBuilder::ModelBuilder() {
  model_.set_ir_version(8);
  model_.set_producer_name("footprint-tests");
  onnx::OperatorSetIdProto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  model_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::Opset(const std::string& domain, int64_t version) {
  for (onnx::OperatorSetIdProto& opset : *model_.mutable_opset_import()) {
    if (opset.domain() == domain) {
      opset.set_version(version);
      return *this;
    }
  }
  onnx::OperatorSetIdProto* opset = model_.add_opset_import();
  opset->set_domain(domain);
  opset->set_version(version);
  return *this;
}

ModelBuilder& ModelBuilder::Input(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims) {
  onnx::ValueInfoProto* input = graph().add_input();
  input->set_name(name);
  *input->mutable_type() = TensorType(elem_type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name) {
  graph().add_output()->set_name(name);
  return *this;
}

ModelBuilder& ModelBuilder::Output(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims) {
  onnx::ValueInfoProto* output = graph().add_output();
  output->set_name(name);
  *output->mutable_type() = TensorType(elem_type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::ValueInfo(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims) {
  onnx::ValueInfoProto* info = graph().add_value_info();
  info->set_name(name);
  *info->mutable_type() = TensorType(elem_type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::Initializer(const std::string& name, int32_t elem_type,
                                        const std::vector<int64_t>& dims) {
  onnx::TensorProto* tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(elem_type);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor->add_dims(dim);
    count *= dim;
  }
  int bits = 32;
  switch (elem_type) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE:
      bits = 64;
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      bits = 16;
      break;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      bits = 8;
      break;
    default:
      break;
  }
  tensor->set_raw_data(std::string(static_cast<size_t>((count * bits + 7) / 8), '\0'));
  return *this;
}

ModelBuilder& ModelBuilder::Int64Initializer(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor->add_int64_data(value);
  return *this;
}

onnx::NodeProto& ModelBuilder::Node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto* node = graph().add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return *node;
}

std::string ModelBuilder::Serialize() const {
  std::string bytes;
  model_.SerializeToString(&bytes);
  return bytes;
}

}  // namespace footprint::testing
