#include "analyzer/loader/onnx_attributes.h"

namespace footprint {

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

onnx::AttributeProto* FindAttribute(onnx::NodeProto& node, std::string_view name) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->i();
}

float FloatAttribute(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? fallback : attribute->f();
}

std::string StringAttribute(const onnx::NodeProto& node, std::string_view name, std::string_view fallback) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute == nullptr ? std::string(fallback) : attribute->s();
}

std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr) return {};
  return {attribute->ints().begin(), attribute->ints().end()};
}

std::optional<int64_t> OptionalIntAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || !attribute->has_i()) return std::nullopt;
  return attribute->i();
}

std::optional<float> OptionalFloatAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || !attribute->has_f()) return std::nullopt;
  return attribute->f();
}

std::optional<std::string> OptionalStringAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr || !attribute->has_s()) return std::nullopt;
  return attribute->s();
}

std::optional<std::vector<int64_t>> OptionalIntsAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr) return std::nullopt;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

const onnx::TensorProto* TensorAttribute(const onnx::NodeProto& node, std::string_view name) {
  const onnx::AttributeProto* attribute = FindAttribute(node, name);
  return attribute != nullptr && attribute->has_t() ? &attribute->t() : nullptr;
}

std::vector<const onnx::GraphProto*> BodiesOf(const onnx::NodeProto& node) {
  std::vector<const onnx::GraphProto*> bodies;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) bodies.push_back(&attribute.g());
    for (const onnx::GraphProto& graph : attribute.graphs()) bodies.push_back(&graph);
  }
  return bodies;
}

}  // namespace footprint
