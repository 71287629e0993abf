// ORT's NoopElimination (noop_elimination.cc) on built models through the
// whole analysis. Each follows a probe noop_* of
// bench/ground_truth/probe_models.py, measured with ORT 1.30 (AVX-512): x
// [2, 8, 128, 128] float32 -> Neg -> a -> op(a, k) -> b -> Add(a, b) ->
// ReduceSum. With the op taken out, the run peaks at three tensors of 1 MiB
// (x, a, their sum: 3,148,072 bytes); with it, at four (4,196,912).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int64_t kMiB = 1 << 20;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

// A tensor "k" of `type` and `dims`, every element `value`.
onnx::TensorProto Filled(int32_t type, const std::vector<int64_t>& dims, double value) {
  onnx::TensorProto tensor;
  tensor.set_name("k");
  tensor.set_data_type(type);
  int64_t elements = 1;
  for (int64_t dim : dims) {
    tensor.add_dims(dim);
    elements *= dim;
  }
  auto append = [&](auto element) {
    for (int64_t i = 0; i < elements; ++i) {
      tensor.mutable_raw_data()->append(reinterpret_cast<const char*>(&element), sizeof(element));
    }
  };
  switch (type) {
    case onnx::TensorProto::DOUBLE:
      append(value);
      break;
    case onnx::TensorProto::INT64:
      append(static_cast<int64_t>(value));
      break;
    case onnx::TensorProto::UINT8:
      append(static_cast<uint8_t>(value));
      break;
    case onnx::TensorProto::FLOAT16:
      append(static_cast<uint16_t>(value == 1 ? 0x3c00 : 0));  // 0 or 1 only.
      break;
    default:
      append(static_cast<float>(value));
  }
  return tensor;
}

// What varies between the probes.
struct Probe {
  std::string op = "Add";
  double value = 0;
  bool constant_first = false;       // op(k, a).
  int32_t type = kFloat;
  std::vector<int64_t> dims;         // Of k.
  // "constant", "value_float", "value_int", "value_floats" (a Constant's), "overridable", "cast" (folded:
  // Cast(int64 k0)).
  std::string k_as = "initializer";
  bool b_is_output = false;          // b is a graph output too.
  bool on_graph_input = false;       // op(x, k): no node writes its other input.
};

ModelBuilder Build(const Probe& probe) {
  ModelBuilder builder;
  builder.Opset("", 14).Input("x", probe.type, {2, 8, 128, 128});
  const std::string a = probe.on_graph_input ? "x" : "a";
  if (!probe.on_graph_input) builder.Node("Neg", {"x"}, {"a"});
  onnx::TensorProto k = Filled(probe.type, probe.dims, probe.value);
  if (probe.k_as == "constant") {
    onnx::AttributeProto* value = builder.Node("Constant", {}, {"k"}).add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = k;
  } else if (probe.k_as.starts_with("value_")) {
    onnx::AttributeProto* value = builder.Node("Constant", {}, {"k"}).add_attribute();
    value->set_name(probe.k_as);
    if (probe.k_as == "value_float") {
      value->set_type(onnx::AttributeProto::FLOAT);
      value->set_f(static_cast<float>(probe.value));
    } else if (probe.k_as == "value_int") {
      value->set_type(onnx::AttributeProto::INT);
      value->set_i(static_cast<int64_t>(probe.value));
    } else {
      value->set_type(onnx::AttributeProto::FLOATS);
      value->add_floats(static_cast<float>(probe.value));
    }
  } else if (probe.k_as == "cast") {
    k = Filled(onnx::TensorProto::INT64, probe.dims, probe.value);
    k.set_name("k0");
    *builder.graph().add_initializer() = k;
    testing::SetInt(builder.Node("Cast", {"k0"}, {"k"}), "to", probe.type);
  } else {
    *builder.graph().add_initializer() = k;
    if (probe.k_as == "overridable") builder.Input("k", probe.type, {probe.dims.begin(), probe.dims.end()});
  }
  builder.Node(probe.op, probe.constant_first ? std::vector<std::string>{"k", a} : std::vector<std::string>{a, "k"},
               {"b"});
  builder.Node("Add", {a, "b"}, {"m"});
  onnx::NodeProto& sum = builder.Node("ReduceSum", {"m"}, {"y"});
  testing::SetInt(sum, "keepdims", 0);
  builder.Output("y", probe.type, {});
  if (probe.b_is_output) builder.Output("b");
  return builder;
}

TEST(NoopEliminationTest, AddOfZeroAndMulByOneAreTakenOut) {
  constexpr int32_t kInt64 = onnx::TensorProto::INT64;
  for (const auto& [probe, why] : {
           std::pair{Probe{}, "x + 0"},
           std::pair{Probe{.constant_first = true}, "0 + x"},
           std::pair{Probe{.op = "Sub"}, "x - 0"},
           std::pair{Probe{.op = "Mul", .value = 1}, "x * 1"},
           std::pair{Probe{.op = "Mul", .value = 1, .constant_first = true}, "1 * x"},
           std::pair{Probe{.op = "Div", .value = 1}, "x / 1"},
           std::pair{Probe{.value = -0.0}, "x + -0"},
           std::pair{Probe{.dims = {1, 1, 1, 1}}, "a [1, 1, 1, 1] zero"},
           std::pair{Probe{.k_as = "constant"}, "a Constant's zero"},
           std::pair{Probe{.k_as = "value_float"}, "a Constant's value_float"},
           std::pair{Probe{.op = "Mul", .value = 1, .k_as = "value_floats"}, "a Constant's value_floats"},
           std::pair{Probe{.k_as = "cast"}, "a folded zero (Cast)"},
           std::pair{Probe{.op = "Mul", .value = 1, .type = onnx::TensorProto::DOUBLE}, "double"},
           std::pair{Probe{.type = onnx::TensorProto::FLOAT16}, "float16"},
       }) {
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(Build(probe), kOrt);
    ASSERT_TRUE(ort.ok()) << why << ": " << ort.status();
    EXPECT_FALSE(IsArenaTensor(*ort, "b")) << why;
    EXPECT_EQ(ort->modes.fused_nodes, 1) << why;
    if (probe.type == kFloat) {
      EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB) << why;  // x, a, m.
    }
  }
  // int64 (8 bytes an element): x, a, m of 2 MiB each.
  for (const Probe& probe :
       {Probe{.type = kInt64}, Probe{.op = "Mul", .value = 1, .type = kInt64, .k_as = "value_int"}}) {
    absl::StatusOr<Analysis> int64 = AnalyzeBuilt(Build(probe), kOrt);
    ASSERT_TRUE(int64.ok()) << probe.k_as << ": " << int64.status();
    EXPECT_EQ(int64->memory.runtime_tensor_bytes, 6 * kMiB) << probe.k_as;
  }
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(Build({}), {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "b"));  // Without --runtime the graph is the file's.
}

TEST(NoopEliminationTest, WhatORTsRuleLeaves) {
  for (const auto& [probe, why] : {
           std::pair{Probe{.op = "Sub", .constant_first = true}, "0 - x"},
           std::pair{Probe{.op = "Div", .value = 1, .constant_first = true}, "1 / x"},
           std::pair{Probe{.value = 0.5}, "x + 0.5"},
           std::pair{Probe{.op = "Mul"}, "x * 0"},
           std::pair{Probe{.dims = {2, 1, 1, 1}}, "two zeros"},
           std::pair{Probe{.dims = {0}}, "no element"},
           std::pair{Probe{.dims = {1, 1, 1, 1, 1}}, "a zero of higher rank"},
           std::pair{Probe{.type = onnx::TensorProto::UINT8}, "uint8"},
           std::pair{Probe{.k_as = "overridable"}, "an overridable zero"},
           std::pair{Probe{.b_is_output = true}, "its output a graph output"},
           std::pair{Probe{.on_graph_input = true}, "x + 0 on a graph input"},
       }) {
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(Build(probe), kOrt);
    ASSERT_TRUE(ort.ok()) << why << ": " << ort.status();
    EXPECT_TRUE(IsArenaTensor(*ort, "b")) << why;
    EXPECT_EQ(ort->modes.fused_nodes, 0) << why;
  }
}

}  // namespace
}  // namespace footprint
