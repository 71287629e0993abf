// ORT's PadFusion (core/optimizer/pad_fusion.cc, a level-1 rewrite rule): a
// constant-mode Pad of zeros on the spatial dims, read only by a Conv or a
// MaxPool with explicit padding, is taken into that node's pads. The padded
// tensor never exists: TensorFlow exports (SSD, EfficientDet, MobileNets)
// write such a Pad before every stride-2 Conv ("SAME" padding). Measured (ORT
// 1.30, AVX-512): an SSD-shaped detector's five Pads are gone from ORT's
// optimized model, their Convs' pads asymmetric ([0, 0, 1, 1]).
//
// The conditions, as ORT checks them: Pad with at most three inputs (no
// axes), one reader and not a graph output; its pads and constant value
// constant weights (not overridable), the value zero, the pads zero on N and
// C and none negative; the reader a Conv or a MaxPool with one output and no
// auto_pad. ORT 1.30 takes every opset (probes at 13 and 21 to 24, Conv and
// MaxPool; an older snapshot of the rule listed Pad's versions up to 19).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// The int64 values of a constant tensor held in the model (pads are a few
// bytes, which the loader keeps); nullopt for any other.
std::optional<std::vector<int64_t>> Int64Values(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::INT64 || tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (tensor.int64_data_size() > 0) return std::vector<int64_t>(tensor.int64_data().begin(), tensor.int64_data().end());
  const std::string& raw = tensor.raw_data();
  if (raw.size() % sizeof(int64_t) != 0) return std::nullopt;
  std::vector<int64_t> values(raw.size() / sizeof(int64_t));
  if (!raw.empty()) std::memcpy(values.data(), raw.data(), raw.size());  // Little-endian, as ONNX stores it.
  return values;
}

// True when every element of a constant tensor is zero (ORT compares its
// bytes); false when its data is not in the model (external, or left out
// by the loader).
bool AllZero(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return false;
  const std::string& raw = tensor.raw_data();
  if (!raw.empty()) return std::all_of(raw.begin(), raw.end(), [](char byte) { return byte == 0; });
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) elements *= dim;
  const int stored = tensor.float_data_size() + tensor.int32_data_size() + tensor.int64_data_size() +
                     tensor.double_data_size();
  if (elements > 0 && stored == 0) return false;
  auto zero = [](auto value) { return value == 0; };
  return std::all_of(tensor.float_data().begin(), tensor.float_data().end(), zero) &&
         std::all_of(tensor.int32_data().begin(), tensor.int32_data().end(), zero) &&
         std::all_of(tensor.int64_data().begin(), tensor.int64_data().end(), zero) &&
         std::all_of(tensor.double_data().begin(), tensor.double_data().end(), zero);
}

// The Pad's pads when ORT's rule takes the Pad into `reader`, else nullopt.
std::optional<std::vector<int64_t>> FusablePads(int64_t opset, const GraphRewrite& rewrite, const IrGraph& graph,
                                                const IrNode& pad, const IrNode& reader) {
  const onnx::NodeProto& proto = *pad.proto;
  if (proto.input_size() > 3 || pad.outputs.size() != 1) return std::nullopt;
  const onnx::AttributeProto* mode = FindAttribute(proto, "mode");
  if (mode != nullptr && mode->s() != "constant") return std::nullopt;
  std::optional<std::vector<int64_t>> pads;
  if (opset >= 11) {
    // Pads and the constant value are inputs; both must be constant weights.
    for (int input = 1; input < proto.input_size(); ++input) {
      const std::optional<ValueId> id = ValueNamed(graph, proto.input(input));
      if (!id.has_value() || !IsConstantWeight(graph, rewrite, *id) || ConstantTensor(graph, *id) == nullptr) {
        return std::nullopt;
      }
      const onnx::TensorProto& tensor = *ConstantTensor(graph, *id);
      if (input == 1) pads = Int64Values(tensor);
      if (input == 2 && !AllZero(tensor)) return std::nullopt;
    }
  } else {
    const onnx::AttributeProto* value = FindAttribute(proto, "value");
    if (value != nullptr && value->f() != 0.0f) return std::nullopt;
    const onnx::AttributeProto* attribute = FindAttribute(proto, "pads");
    if (attribute != nullptr) pads = std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
  }
  if (!pads.has_value() || pads->size() < 4 || pads->size() % 2 != 0) return std::nullopt;
  const size_t rank = pads->size() / 2;
  if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) return std::nullopt;
  if (std::any_of(pads->begin(), pads->end(), [](int64_t value) { return value < 0; })) return std::nullopt;
  // The reader: Conv or MaxPool reading the padded tensor as its input 0,
  // one output, explicit pads.
  const onnx::NodeProto& next = *reader.proto;
  if (!IsDefaultDomain(next) || (next.op_type() != "Conv" && next.op_type() != "MaxPool") ||
      next.output_size() != 1 || next.input_size() == 0 || next.input(0) != proto.output(0)) {
    return std::nullopt;
  }
  const onnx::AttributeProto* auto_pad = FindAttribute(next, "auto_pad");
  if (auto_pad != nullptr && auto_pad->s() != "NOTSET") return std::nullopt;
  const onnx::AttributeProto* own = FindAttribute(next, "pads");
  if (own != nullptr && own->ints_size() != static_cast<int>(2 * (rank - 2))) return std::nullopt;
  return pads;
}

// Removes each such Pad (its output kFusedAway); its reader reads the Pad's
// input, with the pads added to its own (a new proto). Before opset 11, the
// pads and value are Pad's attributes.
PassChange FusePads(IrGraph& graph, PassContext& context) {
  const int64_t opset = context.model.opset;
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& pad = graph.nodes[id];
    if (!IsDefaultDomain(*pad.proto) || pad.proto->op_type() != "Pad" || pad.inputs.empty() || pad.outputs.size() != 1) {
      continue;
    }
    const IrValue& padded = graph.values[pad.outputs[0]];
    if (padded.is_graph_output || padded.consumers.size() != 1 || removed[padded.consumers[0]]) continue;
    IrNode& reader = graph.nodes[padded.consumers[0]];
    const std::optional<std::vector<int64_t>> pads = FusablePads(opset, context.rewrite, graph, pad, reader);
    if (!pads.has_value()) continue;
    const size_t rank = pads->size() / 2;
    std::vector<int64_t> merged(2 * (rank - 2), 0);
    if (const onnx::AttributeProto* own = FindAttribute(*reader.proto, "pads"); own != nullptr) {
      merged.assign(own->ints().begin(), own->ints().end());
    }
    for (size_t axis = 2; axis < rank; ++axis) {
      merged[axis - 2] += (*pads)[axis];
      merged[axis - 2 + rank - 2] += (*pads)[axis + rank];
    }
    auto proto = std::make_shared<onnx::NodeProto>(*reader.proto);
    proto->set_input(0, pad.proto->input(0));
    SetIntsAttribute(*proto, "pads", merged);
    UseRuntimeProto(context.rewrite, reader, std::move(proto));
    reader.inputs[0] = pad.inputs[0];
    MarkFusedAway(graph, context.rewrite, pad.outputs[0]);
    removed[id] = true;
    ++change.fused_nodes;
  }
  if (change.fused_nodes == 0) return change;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
  return change;
}

}  // namespace

const Pass kPadFusion = {
    .name = "PadFusion", .stage = OrtStage::kLevel1, .source = "core/optimizer/pad_fusion.cc", .apply = &FusePads};

}  // namespace footprint::ort
