// A node's attributes by name: the one place every stage looks them up.
//
// Usage:
//   const int64_t group = IntAttribute(node, "group", 1);
//   const std::vector<int64_t> pads = IntsAttribute(node, "pads");
//   if (const onnx::TensorProto* value = TensorAttribute(constant, "value")) ...
//   for (const onnx::GraphProto* body : BodiesOf(loop)) ...
//
// Two ways to read a value, for an attribute of the name that holds no value
// of the type asked (an "axis" given as a float, say):
// - `IntAttribute` and its kind return `fallback` only when the node has no
//   attribute of the name, and otherwise the field asked for, as protobuf
//   reads it (0, 0.0f, "" or an empty list when the attribute holds none);
// - `OptionalIntAttribute` and its kind return nullopt both when the node has
//   no attribute of the name and when the attribute holds no value of the type.
// A node with two attributes of one name is not ONNX (its checker refuses it,
// and so does ONNX Runtime); every lookup here reads the first.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_ATTRIBUTES_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/onnx_pb.h"

namespace footprint {

// `node`'s first attribute named `name`, nullptr when it has none.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name);
onnx::AttributeProto* FindAttribute(onnx::NodeProto& node, std::string_view name);

// The attribute's int, float or string; `fallback` when `node` has no
// attribute `name` (0, 0.0f or "" when it has one holding no value of the type).
int64_t IntAttribute(const onnx::NodeProto& node, std::string_view name, int64_t fallback);
float FloatAttribute(const onnx::NodeProto& node, std::string_view name, float fallback);
std::string StringAttribute(const onnx::NodeProto& node, std::string_view name, std::string_view fallback = "");
// The attribute's ints; empty when `node` has no attribute `name`.
std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, std::string_view name);

// The attribute's int, float or string; nullopt when `node` has no attribute
// `name` or it holds no value of the type.
std::optional<int64_t> OptionalIntAttribute(const onnx::NodeProto& node, std::string_view name);
std::optional<float> OptionalFloatAttribute(const onnx::NodeProto& node, std::string_view name);
std::optional<std::string> OptionalStringAttribute(const onnx::NodeProto& node, std::string_view name);
// The attribute's ints; nullopt when `node` has no attribute `name` (a list
// has no presence of its own: an attribute holding none reads as empty).
std::optional<std::vector<int64_t>> OptionalIntsAttribute(const onnx::NodeProto& node, std::string_view name);

// The attribute's tensor; nullptr when `node` has no attribute `name` or it
// holds no tensor (a Constant's "value", a ConstantOfShape's).
const onnx::TensorProto* TensorAttribute(const onnx::NodeProto& node, std::string_view name);

// The graphs `node`'s attributes hold (If's branches, Loop's and Scan's
// body, a custom op's graph lists), in the order of its attributes: each
// attribute's graph, then its list of graphs.
std::vector<const onnx::GraphProto*> BodiesOf(const onnx::NodeProto& node);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_ATTRIBUTES_H_
