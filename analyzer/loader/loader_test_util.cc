#include "analyzer/loader/loader_test_util.h"

#include <stdlib.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/scratch_dir.h"

namespace footprint {

std::string MakeTempDir() {
  std::string pattern = footprint::testing::ScratchDir() + "/loader_test_XXXXXX";
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return pattern;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

onnx::TensorProto FloatTensor(const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  int64_t elements = 1;
  for (int64_t dim : dims) {
    tensor.add_dims(dim);
    elements *= dim;
  }
  std::string raw(static_cast<size_t>(elements) * 4, '\0');
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>(i * 7);
  tensor.set_raw_data(raw);
  return tensor;
}

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor.add_int64_data(value);
  return tensor;
}

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& op, std::vector<std::string> inputs,
                         std::vector<std::string> outputs) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + outputs[0]);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

void AddConstant(onnx::GraphProto& graph, const std::string& output, onnx::TensorProto value) {
  onnx::AttributeProto* attribute = AddNode(graph, "Constant", {}, {output})->add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  *attribute->mutable_t() = std::move(value);
}

onnx::ModelProto SmallModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("small");
  onnx::ValueInfoProto* x = graph.add_input();
  x->set_name("X");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(64);
  graph.add_output()->set_name("Y");
  *graph.add_initializer() = FloatTensor("W", {64, 64});  // 16 KiB: dropped by default.
  *graph.add_initializer() = Int64Tensor("shape", {8, 8});  // Small: kept for shape inference.
  AddNode(graph, "MatMul", {"X", "W"}, {"xw"});
  AddNode(graph, "Reshape", {"xw", "shape"}, {"r"});
  onnx::TensorProto bias = FloatTensor("", {8, 8, 32});  // 8 KiB, unnamed like most Constants.
  AddConstant(graph, "bias", bias);
  AddNode(graph, "Add", {"r", "bias"}, {"Y"});
  return model;
}

const StoredTensor* FindTensor(const LoadedModel& loaded, const std::string& name) {
  for (const StoredTensor& tensor : loaded.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

onnx::ModelProto NestedIfModel(int depth, bool both_branches) {
  onnx::GraphProto inner;
  inner.set_name("innermost");
  AddConstant(inner, "deep_value", FloatTensor("", {128, 128}));
  inner.add_output()->set_name("deep_value");
  for (int level = 0; level < depth; ++level) {
    onnx::GraphProto outer;
    outer.set_name(absl::StrCat("level", level));
    onnx::NodeProto* node = AddNode(outer, "If", {"cond"}, {absl::StrCat("out", level)});
    onnx::AttributeProto* then_branch = node->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = inner;
    if (both_branches) {
      onnx::AttributeProto* else_branch = node->add_attribute();
      else_branch->set_name("else_branch");
      else_branch->set_type(onnx::AttributeProto::GRAPH);
      *else_branch->mutable_g() = inner;
    }
    outer.add_output()->set_name(absl::StrCat("out", level));
    inner = std::move(outer);
  }
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  *model.mutable_graph() = std::move(inner);
  return model;
}

onnx::ModelProto Externalize(const onnx::ModelProto& model, const std::string& dir, const std::string& file,
                             const std::string& location) {
  onnx::ModelProto external = model;
  std::string data;
  for (onnx::TensorProto& tensor : *external.mutable_graph()->mutable_initializer()) {
    if (!tensor.has_raw_data()) continue;
    auto add = [&](const std::string& key, const std::string& value) {
      onnx::StringStringEntryProto* entry = tensor.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(data.size()));
    add("length", std::to_string(tensor.raw_data().size()));
    data += tensor.raw_data();
    tensor.clear_raw_data();
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  }
  if (!file.empty()) WriteFile(dir + "/" + file, data);
  return external;
}

}  // namespace footprint
