// Shared by the shape engine's tests: setters for the attributes and
// initializers of ModelBuilder graphs, and Engine, which runs
// InferSymbolicShapes on a built model and prints what it found. Shapes print
// as "batch,12" ("?" for an unknown dim, "unranked" for an unknown rank).
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_TEST_UTIL_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/shapes/shape_engine.h"
#include "analyzer/testing/model_builder.h"
#include "onnx/onnx_pb.h"

namespace footprint::symbolic::engine_test {

inline constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
inline constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
inline constexpr int32_t kInt64 = onnx::TensorProto::INT64;
inline constexpr int32_t kInt32 = onnx::TensorProto::INT32;
inline constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
inline constexpr int32_t kBool = onnx::TensorProto::BOOL;

using ::footprint::testing::SetInt;   // Adds an INT attribute to a node.
using ::footprint::testing::SetInts;  // Adds an INTS attribute to a node.
// Adds a GRAPH attribute (an If branch, a Loop or Scan body) to `node`.
void SetGraph(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& graph);
// Adds a 1-D float initializer holding `values`.
void FloatInitializer(::footprint::testing::ModelBuilder& builder, const std::string& name,
                      const std::vector<float>& values);
// Adds a scalar integer initializer of `type` (int64, else stored as int32).
void ScalarInt(::footprint::testing::ModelBuilder& builder, const std::string& name, int64_t value,
               int32_t type = kInt64);
// A tensor's value info (a body's input or output).
onnx::ValueInfoProto Info(const std::string& name, int32_t type, const std::vector<footprint::testing::TestDim>& dims);

// What the engine found in the model a ModelBuilder builds.
class Engine {
 public:
  explicit Engine(const ::footprint::testing::ModelBuilder& builder);
  // The value `name` of the main graph (or of the body `graph`); a test
  // failure and an unknown value when there is none.
  const SymValue& Value(const std::string& name, const onnx::GraphProto* graph = nullptr) const;
  // The value's dims, "batch,12", or "unranked".
  std::string Shape(const std::string& name, const onnx::GraphProto* graph = nullptr) const;
  // The value's known integer elements, "batch,12", or "none".
  std::string Ints(const std::string& name) const;
  const onnx::ModelProto& model() const { return model_; }

 private:
  onnx::ModelProto model_;  // The built model; the tables point into it.
  ShapeTables tables_;      // InferSymbolicShapes' findings.
};

}  // namespace footprint::symbolic::engine_test

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPE_ENGINE_TEST_UTIL_H_
