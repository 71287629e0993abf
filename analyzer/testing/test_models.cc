#include "analyzer/testing/test_models.h"

#include <string>
#include <vector>

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

ModelBuilder FpnAddModel(int levels) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 3, "height", "width"});
  std::vector<std::string> scales_out = {"c2"};
  std::string in = "x";
  for (int level = 0; level <= levels; ++level) {
    const std::string out = "c" + std::to_string(2 << level);
    builder.Initializer(out + "_w", onnx::TensorProto::FLOAT, {8, level == 0 ? 3 : 8, 3, 3});
    onnx::NodeProto& conv = builder.Node("Conv", {in, out + "_w"}, {out}, "conv_" + out);
    SetInts(conv, "kernel_shape", {3, 3});
    SetInts(conv, "pads", {1, 1, 1, 1});
    SetInts(conv, "strides", {2, 2});
    in = out;
  }
  onnx::TensorProto* scales = builder.graph().add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float scale : {1.0f, 1.0f, 2.0f, 2.0f}) scales->add_float_data(scale);
  std::string top = in;
  for (int level = levels - 1; level >= 0; --level) {
    const std::string stride = std::to_string(2 << level);
    const std::string up = "up" + stride;
    onnx::NodeProto& resize = builder.Node("Resize", {top, "", "scales"}, {up}, "upsample" + stride);
    onnx::AttributeProto* mode = resize.add_attribute();
    mode->set_name("mode");
    mode->set_type(onnx::AttributeProto::STRING);
    mode->set_s("nearest");
    top = "sum" + stride;
    builder.Add("Add", {"c" + stride, up}, {top}, level == 0 ? "fpn_add" : "fpn_add_" + stride);
  }
  builder.Add("Relu", {top}, {"y"}).Output("y");
  return builder;
}

}  // namespace footprint::testing
