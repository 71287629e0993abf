// Builds small ONNX models in C++ for tests: no Python, no committed binaries.
//
//   onnx::ModelProto model = ModelBuilder()
//       .Input("x", onnx::TensorProto::FLOAT, {1, 16})
//       .Node("Relu", {"x"}, {"y"})
//       .Output("y")
//       .Build();
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_MODEL_BUILDER_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace footprint::testing {

using TestDim = std::variant<int64_t, std::string>;  // A value or a dim_param.

onnx::TypeProto TensorType(int32_t elem_type, const std::vector<TestDim>& dims);

// Adds an INT attribute to `node`.
void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value);
// Adds an INTS attribute to `node`.
void SetInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);

class ModelBuilder {
 public:
  ModelBuilder();
  ModelBuilder& Opset(const std::string& domain, int64_t version);
  ModelBuilder& Input(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims);
  // A graph output; its type is left to shape inference unless given.
  ModelBuilder& Output(const std::string& name);
  ModelBuilder& Output(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims);
  ModelBuilder& ValueInfo(const std::string& name, int32_t elem_type, const std::vector<TestDim>& dims);
  // An initializer with dims and type, and raw_data of the right length filled with zeros.
  ModelBuilder& Initializer(const std::string& name, int32_t elem_type, const std::vector<int64_t>& dims);
  // An int64 initializer with the given values (for shapes).
  ModelBuilder& Int64Initializer(const std::string& name, const std::vector<int64_t>& values);
  onnx::NodeProto& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");
  ModelBuilder& Add(const std::string& op_type, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& outputs, const std::string& name = "") {
    Node(op_type, inputs, outputs, name);
    return *this;
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto Build() const { return model_; }
  std::string Serialize() const;

 private:
  onnx::ModelProto model_;
};

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_MODEL_BUILDER_H_
