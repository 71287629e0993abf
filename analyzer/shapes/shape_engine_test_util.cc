// The shape engine tests' helpers (shape_engine_test_util.h).
#include "analyzer/shapes/shape_engine_test_util.h"

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::TensorType;

void SetGraph(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = graph;
}
void FloatInitializer(ModelBuilder& builder, const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto* t = builder.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kFloat);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}
void ScalarInt(ModelBuilder& builder, const std::string& name, int64_t value, int32_t type) {
  onnx::TensorProto* t = builder.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  if (type == kInt64) {
    t->add_int64_data(value);
  } else {
    t->add_int32_data(static_cast<int32_t>(value));
  }
}
onnx::ValueInfoProto Info(const std::string& name, int32_t type, const std::vector<footprint::testing::TestDim>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  *info.mutable_type() = TensorType(type, dims);
  return info;
}

Engine::Engine(const ModelBuilder& builder) : model_(builder.Build()) { tables_ = *InferSymbolicShapes(model_); }

const SymValue& Engine::Value(const std::string& name, const onnx::GraphProto* graph) const {
  const GraphShapes& shapes = tables_.graphs.at(graph == nullptr ? &model_.graph() : graph);
  const SymValue* value = shapes.Find(name);
  if (value == nullptr) {
    ADD_FAILURE() << "no value " << name;
    static const SymValue kMissing;
    return kMissing;
  }
  return *value;
}

std::string Engine::Shape(const std::string& name, const onnx::GraphProto* graph) const {
  const SymValue& v = Value(name, graph);
  if (!v.shape.has_value()) return "unranked";
  return absl::StrJoin(*v.shape, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
}

std::string Engine::Ints(const std::string& name) const {
  const SymValue& v = Value(name);
  if (!v.ints.has_value()) return "none";
  return absl::StrJoin(*v.ints, ",", [](std::string* out, const Expr& e) { out->append(e.ToString()); });
}

}  // namespace footprint::symbolic::engine_test
