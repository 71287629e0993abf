#include "analyzer/memory/dtype_what_if.h"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/memory/quantization.h"

namespace footprint {
namespace {

constexpr const char* kFloat32 = "float32";

// `tensor` at `data_type`, its values zeros (kept only when small, as the
// loader keeps them: the values are never read for sizes).
void SetLowType(onnx::TensorProto& tensor, int32_t data_type) {
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) elements *= std::max<int64_t>(dim, 0);
  tensor.set_data_type(data_type);
  tensor.clear_raw_data();
  tensor.clear_float_data();
  tensor.clear_int32_data();
  tensor.clear_external_data();
  tensor.clear_data_location();
  const int64_t element_bytes =
      data_type == onnx::TensorProto::INT8 ? 1 : (data_type == onnx::TensorProto::INT32 ? 4 : 2);
  const int64_t bytes = elements * element_bytes;
  if (bytes <= 4096) tensor.set_raw_data(std::string(static_cast<size_t>(bytes), '\0'));
}

// fp16 runtimes run every default-domain op in fp16 (converters block only
// ops of other domains); int8 ones only the ops of quantization.h.
// Shape and Size read no element: they take any dtype as it is.
QuantizedForm FormFor(WhatIfDtype dtype, const onnx::NodeProto& node) {
  if (node.op_type() == "Shape" || node.op_type() == "Size") return QuantizedForm::kDataMovement;
  const QuantizedForm form = QuantizedFormOf(node.domain(), node.op_type());
  if (dtype == WhatIfDtype::kInt8 || form == QuantizedForm::kDataMovement) return form;
  const bool default_domain = IsDefaultDomain(node);
  return default_domain ? QuantizedForm::kQuantized : QuantizedForm::kFloat;
}

// The weight inputs stored at the new dtype with `node`: for fp16 every
// input but the float parameters that stay float32 by the standard
// (Resize's roi and scales, Upsample's scales).
std::vector<QuantizedWeight> WeightsFor(WhatIfDtype dtype, const onnx::NodeProto& node) {
  if (dtype == WhatIfDtype::kInt8) return QuantizedWeightsOf(node);
  std::vector<QuantizedWeight> slots;
  if (FormFor(dtype, node) != QuantizedForm::kQuantized) return slots;
  for (int i = 0; i < node.input_size(); ++i) {
    if ((node.op_type() == "Resize" && (i == 1 || i == 2)) || (node.op_type() == "Upsample" && i == 1)) continue;
    slots.push_back({.input = i});
  }
  return slots;
}

// What a value holds at this point of the rewrite.
enum class Form { kOther, kFloat, kLow };

struct Rewriter {
  WhatIfDtype dtype;
  onnx::GraphProto* graph = nullptr;
  absl::flat_hash_set<std::string> names;               // Every name in use: new names avoid them.
  absl::flat_hash_map<std::string, std::string> dtype_of;  // From the given analysis.
  absl::flat_hash_set<std::string> low;                 // Values that hold the low-precision dtype.
  absl::flat_hash_map<std::string, std::string> low_copy;    // Float value -> its quantized copy.
  absl::flat_hash_map<std::string, std::string> float_copy;  // Low value -> its dequantized copy.
  absl::flat_hash_set<std::string> converted;           // Weights stored at the new dtype.
  absl::flat_hash_set<std::string> int32_biases;        // Converted weights stored int32 (int8 only).
  absl::flat_hash_set<std::string> initializers;
  absl::flat_hash_set<std::string> weights;             // Every weight of the main graph, folded ones too.
  absl::flat_hash_set<std::string> constant_outputs;    // Outputs of Constant and ConstantOfShape nodes.
  absl::flat_hash_set<std::string> graph_outputs;
  std::vector<onnx::NodeProto> nodes;                   // The new node list.
  DtypeWhatIf* result = nullptr;
  int64_t low_activations = 0;                          // For the activations' scales (int8).

  int32_t LowType() const {
    return dtype == WhatIfDtype::kInt8 ? onnx::TensorProto::INT8 : onnx::TensorProto::FLOAT16;
  }

  // The type a converted weight is stored at: int32 for a bias of int8.
  int32_t StoredType(const std::string& weight) const {
    return int32_biases.contains(weight) ? onnx::TensorProto::INT32 : LowType();
  }

  // A Constant's or ConstantOfShape's value at its stored type.
  void ConvertConstant(onnx::NodeProto& node) {
    const int32_t type = StoredType(node.output(0));
    if (onnx::AttributeProto* value = FindAttribute(node, "value"); value != nullptr && value->has_t()) {
      SetLowType(*value->mutable_t(), type);
      return;
    }
    if (node.op_type() == "ConstantOfShape") {  // No value: a float 0.
      onnx::AttributeProto* value = node.add_attribute();
      value->set_name("value");
      value->set_type(onnx::AttributeProto::TENSOR);
      value->mutable_t()->add_dims(1);
      SetLowType(*value->mutable_t(), type);
    }
  }

  std::string FreshName(const std::string& base) {
    std::string name = base;
    while (names.contains(name)) name += "_";
    names.insert(name);
    return name;
  }

  Form FormOf(const std::string& value) const {
    if (low.contains(value)) return Form::kLow;
    auto it = dtype_of.find(value);
    return it != dtype_of.end() && it->second == kFloat32 ? Form::kFloat : Form::kOther;
  }

  // A node converting `from` to `to`: QuantizeLinear/DequantizeLinear for
  // int8 (one shared scalar scale and zero point), a Cast for fp16.
  void AddBoundary(const std::string& from, const std::string& to, bool to_low) {
    onnx::NodeProto node;
    node.set_name(to);
    node.add_input(from);
    node.add_output(to);
    if (dtype == WhatIfDtype::kInt8) {
      node.set_domain("com.microsoft");
      node.set_op_type(to_low ? "QuantizeLinear" : "DequantizeLinear");
      node.add_input("fit_int8.scale");
      node.add_input("fit_int8.zero_point");
    } else {
      node.set_op_type("Cast");
      onnx::AttributeProto* to_type = node.add_attribute();
      to_type->set_name("to");
      to_type->set_type(onnx::AttributeProto::INT);
      to_type->set_i(to_low ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT);
    }
    nodes.push_back(std::move(node));
    ++result->boundary_nodes;
  }

  std::string LowCopyOf(const std::string& value) {
    auto it = low_copy.find(value);
    if (it != low_copy.end()) return it->second;
    const std::string copy = FreshName(absl::StrCat(value, "/fit_", WhatIfDtypeName(dtype)));
    AddBoundary(value, copy, true);
    low.insert(copy);
    ++low_activations;
    low_copy.emplace(value, copy);
    return copy;
  }

  std::string FloatCopyOf(const std::string& value) {
    auto it = float_copy.find(value);
    if (it != float_copy.end()) return it->second;
    const std::string copy = FreshName(absl::StrCat(value, "/fit_float"));
    AddBoundary(value, copy, false);
    float_copy.emplace(value, copy);
    return copy;
  }

  // The outputs of `node` that hold the low dtype from now on. A graph
  // output stays float: the node writes a low copy and a DequantizeLinear
  // (or Cast) after it writes the output, at the graph's edge.
  void MarkLowOutputs(onnx::NodeProto& node, const std::vector<int>& outputs) {
    std::vector<std::pair<std::string, std::string>> at_edge;  // (low copy, graph output).
    for (int k : outputs) {
      const std::string name = node.output(k);
      if (name.empty() || FormOf(name) != Form::kFloat) continue;  // Indices, shapes, masks keep their type.
      if (graph_outputs.contains(name)) {
        const std::string copy = FreshName(absl::StrCat(name, "/fit_", WhatIfDtypeName(dtype)));
        node.set_output(k, copy);
        at_edge.emplace_back(copy, name);
        low.insert(copy);
      } else {
        low.insert(name);
      }
      ++low_activations;
    }
    nodes.push_back(node);
    for (const auto& [copy, name] : at_edge) AddBoundary(copy, name, false);
  }

  absl::Status Run(const onnx::GraphProto& source, const Analysis& given) {
    for (const TensorRecord& tensor : given.tensors) dtype_of.emplace(tensor.name, tensor.dtype);
    for (const WeightRecord& weight : given.weights) {
      if (!weight.graph.empty()) continue;
      dtype_of.emplace(weight.name, weight.dtype);
      weights.insert(weight.name);
    }
    for (const onnx::TensorProto& initializer : source.initializer()) {
      initializers.insert(initializer.name());
      names.insert(initializer.name());
      if (initializer.data_type() == onnx::TensorProto::FLOAT) dtype_of.emplace(initializer.name(), kFloat32);
    }
    for (const onnx::ValueInfoProto& value : source.input()) names.insert(value.name());
    for (const onnx::ValueInfoProto& value : source.output()) graph_outputs.insert(value.name());
    for (const onnx::NodeProto& node : source.node()) {
      for (const std::string& output : node.output()) names.insert(output);
      names.insert(node.name());
      const bool default_domain = IsDefaultDomain(node);
      if (default_domain && (node.op_type() == "Constant" || node.op_type() == "ConstantOfShape") &&
          node.output_size() == 1 && weights.contains(node.output(0))) {
        constant_outputs.insert(node.output(0));
      }
    }
    for (const std::string& name : initializers) weights.insert(name);
    // A weight converts when every reader quantizes it with itself, or
    // moves it (Reshape, Transpose...) to readers that all do: int8 tools
    // fold such moves into the stored weight.
    absl::flat_hash_map<std::string, std::vector<std::pair<const onnx::NodeProto*, int>>> readers;
    for (const onnx::NodeProto& node : source.node()) {
      for (int i = 0; i < node.input_size(); ++i) readers[node.input(i)].emplace_back(&node, i);
    }
    absl::flat_hash_map<std::string, bool> quantizes;  // Memo of QuantizesWithReaders.
    // Only the inputs QuantizedWeightsOf names count.
    std::function<bool(const std::string&, int)> quantizes_with_readers = [&](const std::string& value, int depth) {
      if (depth > 64 || graph_outputs.contains(value)) return false;
      auto memo = quantizes.find(value);
      if (memo != quantizes.end()) return memo->second;
      auto it = readers.find(value);
      bool all = it != readers.end();
      if (all) {
        for (const auto& [node, input] : it->second) {
          const QuantizedForm form = FormFor(dtype, *node);
          bool ok = false;
          if (form == QuantizedForm::kQuantized) {
            for (const QuantizedWeight& slot : WeightsFor(dtype, *node)) ok = ok || slot.input == input;
          } else if (form == QuantizedForm::kDataMovement && input == 0) {
            ok = true;
            for (const std::string& output : node->output()) {
              ok = ok && quantizes_with_readers(output, depth + 1);
            }
          }
          if (!ok) {
            all = false;
            break;
          }
        }
      }
      quantizes.emplace(value, all);
      return all;
    };
    for (const auto* sources : {&initializers, &constant_outputs}) {
      for (const std::string& name : *sources) {
        if (FormOf(name) == Form::kFloat && quantizes_with_readers(name, 0)) {
          converted.insert(name);
          low.insert(name);
        }
      }
    }
    // int8 stores the biases of Conv, ConvTranspose and Gemm in int32, the
    // accumulator's type (ORT's quantize_static, TFLite's converter).
    for (const onnx::NodeProto& node : source.node()) {
      if (dtype != WhatIfDtype::kInt8) break;
      for (const QuantizedWeight& slot : WeightsFor(dtype, node)) {
        if (slot.bias && slot.input < node.input_size() && converted.contains(node.input(slot.input))) {
          int32_biases.insert(node.input(slot.input));
        }
      }
    }

    for (const onnx::NodeProto& original : source.node()) {
      onnx::NodeProto node = original;
      if (node.output_size() == 1 && constant_outputs.contains(node.output(0))) {
        if (converted.contains(node.output(0))) ConvertConstant(node);
        nodes.push_back(std::move(node));
        continue;
      }
      const QuantizedForm form = FormFor(dtype, node);
      if (form == QuantizedForm::kQuantized) {
        bool reads_numbers = false;  // A float or low-precision input: the op computes on them.
        for (int i = 0; i < node.input_size(); ++i) {
          const std::string& input = node.input(i);
          if (input.empty()) continue;
          if (converted.contains(input)) {
            reads_numbers = true;
            continue;
          }
          const Form input_form = FormOf(input);
          if (input_form == Form::kFloat) {
            if (weights.contains(input)) continue;  // A float weight another op also reads, or a folded one.
            node.set_input(i, LowCopyOf(input));
            reads_numbers = true;
          } else if (input_form == Form::kLow) {
            reads_numbers = true;
          }
        }
        if (!reads_numbers) {
          nodes.push_back(std::move(node));
          continue;
        }
        ++result->quantized_nodes;
        MarkLowOutputs(node, {0});
        continue;
      }
      if (form == QuantizedForm::kDataMovement && node.input_size() > 0 && FormOf(node.input(0)) == Form::kLow) {
        std::vector<int> outputs;
        for (int k = 0; k < node.output_size(); ++k) outputs.push_back(k);
        MarkLowOutputs(node, outputs);
        continue;
      }
      // Computed in float: low-precision inputs are dequantized first.
      bool touches_float = false;
      for (int i = 0; i < node.input_size(); ++i) {
        const Form input_form = FormOf(node.input(i));
        if (input_form == Form::kLow) node.set_input(i, FloatCopyOf(node.input(i)));
        touches_float = touches_float || input_form != Form::kOther;
      }
      bool folded = node.output_size() > 0;  // Every output a weight: evaluated at load, never run.
      for (const std::string& output : node.output()) {
        touches_float = touches_float || FormOf(output) == Form::kFloat;
        folded = folded && weights.contains(output);
      }
      if (touches_float && !folded && form == QuantizedForm::kFloat) {
        ++result->float_ops[node.op_type()];
      }
      nodes.push_back(std::move(node));
    }
    return absl::OkStatus();
  }
};

onnx::TensorProto ScalarOrVector(const std::string& name, int32_t data_type, int64_t length) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(data_type);
  if (length >= 0) tensor.add_dims(length);
  return tensor;
}

}  // namespace

const char* WhatIfDtypeName(WhatIfDtype dtype) { return dtype == WhatIfDtype::kInt8 ? "int8" : "fp16"; }

absl::StatusOr<DtypeWhatIf> MakeDtypeWhatIf(const LoadedModel& loaded, const Analysis& given, WhatIfDtype dtype) {
  DtypeWhatIf result;
  onnx::ModelProto model = loaded.model.get();
  onnx::GraphProto& graph = *model.mutable_graph();
  Rewriter rewriter{.dtype = dtype, .graph = &graph, .result = &result};
  if (absl::Status status = rewriter.Run(graph, given); !status.ok()) return status;
  if (result.quantized_nodes == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no float32 tensor is read by an op with a quantized form: nothing to convert to ",
                     WhatIfDtypeName(dtype)));
  }
  graph.clear_node();
  for (onnx::NodeProto& node : rewriter.nodes) *graph.add_node() = std::move(node);
  // Weights: their dims and new type (the values are never read).
  std::vector<onnx::TensorProto> scales;
  absl::flat_hash_map<std::string, int> axis_by_weight;
  for (const onnx::NodeProto& node : loaded.model->graph().node()) {
    for (const QuantizedWeight& slot : WeightsFor(dtype, node)) {
      if (slot.input >= node.input_size() || !rewriter.converted.contains(node.input(slot.input))) continue;
      axis_by_weight.emplace(node.input(slot.input), slot.channel_axis);
    }
  }
  for (onnx::TensorProto& initializer : *graph.mutable_initializer()) {
    if (rewriter.converted.contains(initializer.name())) SetLowType(initializer, rewriter.StoredType(initializer.name()));
  }
  // int8: the scales and zero points of each converted weight, per output
  // channel where its quantized reader has channels, else one of each; a
  // bias has a scale and an int32 zero point per element, as quantize_static
  // writes them (input scale x the weight's per-channel scales).
  std::map<std::string, std::vector<int64_t>> dims_of;
  for (const WeightRecord& weight : given.weights) {
    if (!weight.graph.empty() || !rewriter.converted.contains(weight.name)) continue;
    std::vector<int64_t>& dims = dims_of[weight.name];
    for (const Dim& dim : weight.shape) dims.push_back(dim.value.value_or(1));
  }
  result.converted_weights = static_cast<int64_t>(dims_of.size());
  for (const auto& [name, dims] : dims_of) {
    if (dtype != WhatIfDtype::kInt8) break;
    int axis = axis_by_weight.contains(name) ? axis_by_weight[name] : QuantizedWeight::kPerTensor;
    const int rank = static_cast<int>(dims.size());
    if (axis == QuantizedWeight::kLastAxis) axis = rank == 2 ? 1 : QuantizedWeight::kPerTensor;
    if (rank < 2) axis = QuantizedWeight::kPerTensor;
    int64_t channels = axis >= 0 && axis < rank ? dims[axis] : -1;
    const bool bias = rewriter.int32_biases.contains(name);
    if (bias) channels = rank == 1 ? dims[0] : -1;
    scales.push_back(ScalarOrVector(rewriter.FreshName(name + "/fit_scale"), onnx::TensorProto::FLOAT, channels));
    scales.push_back(ScalarOrVector(rewriter.FreshName(name + "/fit_zero_point"),
                                    bias ? onnx::TensorProto::INT32 : onnx::TensorProto::INT8, channels));
  }
  for (onnx::TensorProto& scale : scales) *graph.add_initializer() = std::move(scale);
  if (dtype == WhatIfDtype::kInt8) {
    *graph.add_initializer() = ScalarOrVector("fit_int8.scale", onnx::TensorProto::FLOAT, -1);
    *graph.add_initializer() = ScalarOrVector("fit_int8.zero_point", onnx::TensorProto::INT8, -1);
    *graph.add_initializer() =
        ScalarOrVector("fit_int8.activation_scales", onnx::TensorProto::FLOAT, rewriter.low_activations);
    *graph.add_initializer() =
        ScalarOrVector("fit_int8.activation_zero_points", onnx::TensorProto::INT8, rewriter.low_activations);
    bool has_microsoft = false;
    for (const onnx::OperatorSetIdProto& opset : model.opset_import()) has_microsoft |= opset.domain() == "com.microsoft";
    if (!has_microsoft) {
      onnx::OperatorSetIdProto* opset = model.add_opset_import();
      opset->set_domain("com.microsoft");
      opset->set_version(1);
    }
  }
  // The graph's declared types of intermediate values would contradict the
  // new dtypes: the engine infers them again.
  graph.clear_value_info();
  result.model.model = std::move(model);
  result.model.path = loaded.path;
  result.model.warnings = loaded.warnings;
  return result;
}

}  // namespace footprint
