#include "analyzer/testing/test_models.h"

namespace footprint::testing {

std::string AddReluModel(int64_t width) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, width})
      .Initializer("w", onnx::TensorProto::FLOAT, {width})
      .Add("Add", {"x", "w"}, {"a<b>&\"c\""}, "add")
      .Add("Relu", {"a<b>&\"c\""}, {"y"}, "relu")
      .Output("y");
  return builder.Serialize();
}

std::string UnboundBatchModel() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), 8}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  return builder.Serialize();
}

ModelBuilder MatMulChain(const std::string& op1, const std::vector<std::string>& op1_extra, const std::string& op2,
                         const std::vector<std::string>& op2_extra) {
  constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16})
      .Initializer("w0", kFloat, {16, 64})
      .Initializer("w1", kFloat, {64, 16})
      .Int64Initializer("shape", {1, 64});
  std::vector<std::string> in1 = {"a"};
  in1.insert(in1.end(), op1_extra.begin(), op1_extra.end());
  std::vector<std::string> in2 = {"b"};
  in2.insert(in2.end(), op2_extra.begin(), op2_extra.end());
  builder.Add("MatMul", {"x", "w0"}, {"a"}, "mm0")
      .Add(op1, in1, {"b"}, "op1")
      .Add(op2, in2, {"c"}, "op2")
      .Add("MatMul", {"c", "w1"}, {"y"}, "mm1")
      .Output("y");
  return builder;
}

}  // namespace footprint::testing
