// Golden tests of the onnxruntime-cpu graph rewrite (RuntimeModel::RewriteGraph):
// one text file per case in testdata/rewrites/ holds an input model in ONNX's
// textual syntax beside the graph the rewrite leaves, for each target it names
// (testdata/rewrites/README.md has the format). The pipeline is the
// analysis's (memory/graph_stages.h LoadGraph): parse, ONNX's shape
// inference (value_info for the ShapeLookup), BuildIrGraph, constant folding
// with the runtime's NonConstantWeights, RewriteGraph; then a canonical
// printout (PrintRewrite) is compared with the case's expected block.
//
// FOOTPRINT_UPDATE_GOLDEN=1 rewrites the expected blocks in the source tree
// from what the code does now; FOOTPRINT_GOLDEN_CASE=NAME runs one case.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/memory/folding.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/pass.h"
#include "analyzer/runtimes/onnxruntime/targets.h"
#include "analyzer/runtimes/registry.h"
#include "analyzer/runtimes/runtime_model.h"
#include "analyzer/shapes/shapes.h"
#include "gtest/gtest.h"
#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

namespace footprint {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// The case files.

// One `== expected TARGET...` block: the targets it holds for, and the printout.
struct ExpectedBlock {
  std::vector<std::string> targets;
  std::string text;  // Lines joined with '\n', no trailing blank line.
};

struct GoldenCase {
  fs::path path;
  std::string prefix;                    // Everything before the first expected block, verbatim.
  std::vector<std::string> weights;      // `weights:` graph inputs made initializers (zero data).
  std::vector<std::string> overridable;  // `overridable:` the same, still listed as graph inputs.
  std::string input;                     // The `== input` section: ONNX's textual syntax.
  std::vector<ExpectedBlock> blocks;
};

constexpr absl::string_view kSectionMark = "== ";

std::string TrimTrailingBlankLines(const std::vector<std::string>& lines) {
  size_t end = lines.size();
  while (end > 0 && absl::StripTrailingAsciiWhitespace(lines[end - 1]).empty()) --end;
  std::vector<std::string> kept;
  for (size_t i = 0; i < end; ++i) kept.push_back(std::string(absl::StripTrailingAsciiWhitespace(lines[i])));
  return absl::StrJoin(kept, "\n");
}

std::vector<std::string> SplitNames(absl::string_view text) {
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(text, absl::ByAnyChar(" ,\t"), absl::SkipEmpty())) {
    names.emplace_back(name);
  }
  return names;
}

absl::StatusOr<GoldenCase> ReadCase(const fs::path& path) {
  std::ifstream file(path);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  GoldenCase golden{.path = path};
  enum class Section { kHeader, kInput, kExpected } section = Section::kHeader;
  std::vector<std::string> input_lines;
  std::vector<std::string> block_lines;
  bool saw_input = false;
  auto close_block = [&]() {
    if (section == Section::kExpected) golden.blocks.back().text = TrimTrailingBlankLines(block_lines);
    block_lines.clear();
  };
  std::string line;
  int line_number = 0;
  while (std::getline(file, line)) {
    ++line_number;
    if (absl::StartsWith(line, kSectionMark)) {
      const std::string title(absl::StripAsciiWhitespace(line.substr(kSectionMark.size())));
      if (title == "input") {
        if (section != Section::kHeader) {
          return absl::InvalidArgumentError(absl::StrCat(path.string(), ":", line_number, ": a second `== input`"));
        }
        section = Section::kInput;
        saw_input = true;
        golden.prefix += line + "\n";
        continue;
      }
      if (absl::StartsWith(title, "expected")) {
        if (!saw_input) {
          return absl::InvalidArgumentError(
              absl::StrCat(path.string(), ":", line_number, ": an expected block before `== input`"));
        }
        close_block();
        section = Section::kExpected;
        ExpectedBlock block{.targets = SplitNames(title.substr(std::string("expected").size()))};
        if (block.targets.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path.string(), ":", line_number, ": `== expected` names no target"));
        }
        golden.blocks.push_back(std::move(block));
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(path.string(), ":", line_number, ": unknown section '", title,
                                                     "' (input, expected TARGET...)"));
    }
    switch (section) {
      case Section::kHeader: {
        golden.prefix += line + "\n";
        const absl::string_view text = absl::StripAsciiWhitespace(line);
        if (text.empty() || absl::StartsWith(text, "#")) break;
        if (absl::StartsWith(text, "weights:")) {
          for (std::string& name : SplitNames(text.substr(8))) golden.weights.push_back(std::move(name));
        } else if (absl::StartsWith(text, "overridable:")) {
          for (std::string& name : SplitNames(text.substr(12))) golden.overridable.push_back(std::move(name));
        } else {
          return absl::InvalidArgumentError(absl::StrCat(path.string(), ":", line_number,
                                                         ": the header takes # comments, weights: and overridable:"));
        }
        break;
      }
      case Section::kInput:
        golden.prefix += line + "\n";
        input_lines.push_back(line);
        break;
      case Section::kExpected:
        block_lines.push_back(line);
        break;
    }
  }
  close_block();
  if (!saw_input) return absl::InvalidArgumentError(absl::StrCat(path.string(), ": no `== input` section"));
  if (golden.blocks.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": no `== expected TARGET` block"));
  }
  golden.input = absl::StrJoin(input_lines, "\n");
  return golden;
}

// The case file with `blocks` as its expected blocks.
std::string CaseText(const GoldenCase& golden, const std::vector<ExpectedBlock>& blocks) {
  std::vector<std::string> prefix_lines = absl::StrSplit(golden.prefix, '\n');
  std::string text = TrimTrailingBlankLines(prefix_lines) + "\n";
  for (const ExpectedBlock& block : blocks) {
    absl::StrAppend(&text, "\n", kSectionMark, "expected ", absl::StrJoin(block.targets, " "), "\n", block.text, "\n");
  }
  return text;
}

// ---------------------------------------------------------------------------
// The input model.

int64_t ElementCount(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) count *= dim;
  return count;
}

int ElementBytes(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: return 8;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16: return 2;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: return 1;
    default: return 0;
  }
}

// The elements a tensor written in the text holds (raw or typed).
int64_t StoredElements(const onnx::TensorProto& tensor) {
  if (tensor.has_raw_data()) {
    const int bytes = ElementBytes(tensor.data_type());
    return bytes == 0 ? -1 : static_cast<int64_t>(tensor.raw_data().size()) / bytes;
  }
  return tensor.float_data_size() + tensor.int32_data_size() + tensor.int64_data_size() + tensor.double_data_size() +
         tensor.uint64_data_size() + tensor.string_data_size();
}

// The directives of the header applied to the parsed model: each named graph
// input becomes an initializer of its declared type and dims, every byte
// zero; `weights:` ones leave the graph's inputs, `overridable:` ones stay.
absl::Status ApplyWeightDirectives(const GoldenCase& golden, onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  auto make = [&](const std::string& name, bool keep_input) -> absl::Status {
    for (int i = 0; i < graph.input_size(); ++i) {
      const onnx::ValueInfoProto& input = graph.input(i);
      if (input.name() != name) continue;
      if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
        return absl::InvalidArgumentError(absl::StrCat("weight '", name, "' has no tensor type with dims"));
      }
      onnx::TensorProto& tensor = *graph.add_initializer();
      tensor.set_name(name);
      tensor.set_data_type(input.type().tensor_type().elem_type());
      for (const onnx::TensorShapeProto::Dimension& dim : input.type().tensor_type().shape().dim()) {
        if (!dim.has_dim_value()) {
          return absl::InvalidArgumentError(absl::StrCat("weight '", name, "' has a symbolic dim"));
        }
        tensor.add_dims(dim.dim_value());
      }
      const int bytes = ElementBytes(tensor.data_type());
      if (bytes == 0) return absl::InvalidArgumentError(absl::StrCat("weight '", name, "': no element size"));
      tensor.set_raw_data(std::string(static_cast<size_t>(ElementCount(tensor) * bytes), '\0'));
      if (!keep_input) graph.mutable_input()->DeleteSubrange(i, 1);
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat("weight '", name, "' is not a graph input of the model"));
  };
  for (const std::string& name : golden.weights) {
    if (absl::Status status = make(name, /*keep_input=*/false); !status.ok()) return status;
  }
  for (const std::string& name : golden.overridable) {
    if (absl::Status status = make(name, /*keep_input=*/true); !status.ok()) return status;
  }
  // ONNX 1.12's parser takes a value list shorter than the dims without a
  // word; a malformed weight would test nothing real.
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (StoredElements(tensor) != ElementCount(tensor)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", tensor.name(), "' holds ", StoredElements(tensor), " values for ", ElementCount(tensor),
          " elements: write them all, or declare it as a graph input and name it on a `weights:` line"));
    }
  }
  return absl::OkStatus();
}

struct ParsedModel {
  onnx::ModelProto file;      // As written (the file's own value_info: RewriteInputs::file_graph).
  onnx::ModelProto inferred;  // After ONNX's shape inference.
  std::vector<std::string> inference_warnings;
};

absl::StatusOr<ParsedModel> ParseModel(const GoldenCase& golden) {
  ParsedModel parsed;
  const onnx::Status status = onnx::OnnxParser::Parse(parsed.file, golden.input.c_str());
  if (!status.IsOK()) return absl::InvalidArgumentError(absl::StrCat("the input: ", status.ErrorMessage()));
  if (absl::Status applied = ApplyWeightDirectives(golden, parsed.file); !applied.ok()) return applied;
  parsed.inferred = parsed.file;
  parsed.inference_warnings = RunOnnxShapeInference(parsed.inferred);
  return parsed;
}

// The analysis's ShapeLookup where ONNX's inference gave the shapes
// (graph_problem.cc, MakeShapeLookup without our engine): a value's
// value_info, input or output type.
ShapeLookup ValueInfoLookup(const onnx::GraphProto& graph) {
  auto types = std::make_shared<const TypeIndex>(IndexTypes(graph));
  return [types](const std::string& name) -> std::optional<ValueShape> {
    auto it = types->find(name);
    absl::StatusOr<SizedType> sized = SizeOfType(it == types->end() ? nullptr : it->second);
    if (!sized.ok() || !sized->shape.has_value()) return std::nullopt;
    ValueShape shape{.data_type = sized->data_type};
    for (const Dim& dim : *sized->shape) shape.dims.push_back(dim.value);
    return shape;
  };
}

// ---------------------------------------------------------------------------
// The runtime's annotations.

// How the runtime holds one value.
struct ValueLayout {
  ValueId sized_as = -1;          // Sized as that value (-1: by its own name).
  int64_t channel_block = 0;      // Channels padded to whole blocks of this (> 1).
  bool channels_last = false;     // Held (N, spatial..., C).
  int32_t data_type = 0;  // Held in this element type (0: the model's).
  std::string planner_shape;      // How the runtime's planner sees its dims ("": as sized).
  bool live_to_end = false;       // Held until the run ends.
};

struct RuntimeAnnotations {
  std::vector<ValueLayout> values;     // Indexed like graph.values.
  std::vector<bool> made_by_runtime;   // Indexed like graph.nodes: its proto is one the runtime made.
};

// What the rewrite says of each value beyond the graph (its side table,
// GraphRewrite::held, read through HeldAs) and which nodes run a proto it
// made (GraphRewrite::made_nodes).
RuntimeAnnotations ReadAnnotations(const GraphRewrite& rewrite, const IrGraph& graph) {
  RuntimeAnnotations annotations;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const HeldValue& held = HeldAs(rewrite, static_cast<ValueId>(id));
    ValueLayout layout{.sized_as = held.sized_as,
                       .channel_block = held.channel_block,
                       .channels_last = held.channels_last,
                       .data_type = held.data_type,
                       .live_to_end = held.live_to_end};
    switch (held.planner_shape) {
      case PlannerShape::kAsSized: break;
      case PlannerShape::kUnknown: layout.planner_shape = "unknown"; break;
      case PlannerShape::kFlattenedSpatial: layout.planner_shape = "flattened_spatial"; break;
    }
    annotations.values.push_back(std::move(layout));
  }
  absl::flat_hash_set<const onnx::NodeProto*> made;
  for (const std::shared_ptr<const onnx::NodeProto>& proto : rewrite.made_nodes) made.insert(proto.get());
  for (const IrNode& node : graph.nodes) annotations.made_by_runtime.push_back(made.contains(node.proto));
  return annotations;
}

// ---------------------------------------------------------------------------
// The printout.

std::string TypeName(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT: return "float";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "double";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    case 0: return "?";
    default: return absl::StrCat("type", data_type);
  }
}

std::string OriginName(ValueOrigin origin) {
  switch (origin) {
    case ValueOrigin::kGraphInput: return "graph input";
    case ValueOrigin::kInitializer: return "initializer";
    case ValueOrigin::kConstant: return "constant";
    case ValueOrigin::kNodeOutput: return "node output";
    case ValueOrigin::kOuterScope: return "outer scope";
    case ValueOrigin::kFolded: return "folded";
    case ValueOrigin::kFusedAway: return "fused away";
  }
  return "?";
}

std::string FormatFloat(float value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string FormatAttribute(const onnx::AttributeProto& attribute) {
  std::string value;
  switch (attribute.type()) {
    case onnx::AttributeProto::INT: value = absl::StrCat(attribute.i()); break;
    case onnx::AttributeProto::FLOAT: value = FormatFloat(attribute.f()); break;
    case onnx::AttributeProto::STRING: value = absl::StrCat("\"", attribute.s(), "\""); break;
    case onnx::AttributeProto::INTS: value = absl::StrCat("[", absl::StrJoin(attribute.ints(), ","), "]"); break;
    case onnx::AttributeProto::FLOATS: {
      std::vector<std::string> floats;
      for (float f : attribute.floats()) floats.push_back(FormatFloat(f));
      value = absl::StrCat("[", absl::StrJoin(floats, ","), "]");
      break;
    }
    case onnx::AttributeProto::STRINGS:
      value = absl::StrCat("[\"", absl::StrJoin(attribute.strings(), "\",\""), "\"]");
      break;
    case onnx::AttributeProto::TENSOR:
      value = absl::StrCat("<tensor ", TypeName(attribute.t().data_type()), "[",
                           absl::StrJoin(attribute.t().dims(), ","), "]>");
      break;
    case onnx::AttributeProto::GRAPH: value = absl::StrCat("<graph ", attribute.g().name(), ">"); break;
    default: value = "<...>"; break;
  }
  return absl::StrCat(attribute.name(), "=", value);
}

// `node`'s op as the printout names it: "Op" in the default domain, else "domain:Op".
std::string OpName(const onnx::NodeProto& node) {
  const std::string& domain = node.domain();
  if (domain.empty() || domain == "ai.onnx") return node.op_type();
  return absl::StrCat(domain, ":", node.op_type());
}

// The element type and dims a value has in the model: a weight's from its
// tensor, any other's from the ShapeLookup (nullopt: unknown).
std::optional<ValueShape> ModelShape(const IrValue& value, const ShapeLookup& shape_of) {
  auto of_tensor = [](const onnx::TensorProto& tensor) {
    ValueShape shape{.data_type = tensor.data_type()};
    for (int64_t dim : tensor.dims()) shape.dims.push_back(dim);
    return shape;
  };
  if (value.origin == ValueOrigin::kInitializer && value.initializer != nullptr) return of_tensor(*value.initializer);
  if (value.origin == ValueOrigin::kConstant && value.constant != nullptr) {
    for (const onnx::AttributeProto& attribute : value.constant->attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) return of_tensor(attribute.t());
    }
  }
  return shape_of(value.name);
}

std::string FormatShape(const std::optional<ValueShape>& shape) {
  if (!shape.has_value()) return "?";
  std::vector<std::string> dims;
  for (const std::optional<int64_t>& dim : shape->dims) dims.push_back(dim.has_value() ? absl::StrCat(*dim) : "?");
  return absl::StrCat(TypeName(shape->data_type), "[", absl::StrJoin(dims, ","), "]");
}

// How value `id` is held, from the annotations as the analysis sizes it
// (graph_problem.cc, SizeOfArenaValue): the dims of the model value it
// stands for (following sized_as), its channels padded to its own block,
// the first runtime element type on the way, channels-last dims permuted.
std::optional<ValueShape> HeldShape(const IrGraph& graph, const RuntimeAnnotations& annotations,
                                    const ShapeLookup& shape_of, ValueId id) {
  int32_t data_type = 0;
  ValueId base = id;
  for (int steps = 0; steps <= static_cast<int>(graph.values.size()); ++steps) {
    if (data_type == 0) data_type = annotations.values[base].data_type;
    if (annotations.values[base].sized_as < 0) break;
    base = annotations.values[base].sized_as;
  }
  std::optional<ValueShape> shape = ModelShape(graph.values[base], shape_of);
  if (!shape.has_value()) return shape;
  if (data_type != 0) shape->data_type = data_type;
  const ValueLayout& layout = annotations.values[id];
  if (layout.channel_block > 1 && shape->dims.size() >= 2 && shape->dims[1].has_value()) {
    const int64_t block = layout.channel_block;
    shape->dims[1] = (*shape->dims[1] + block - 1) / block * block;
  }
  if (layout.channels_last && shape->dims.size() >= 3) {
    std::optional<int64_t> channels = shape->dims[1];
    shape->dims.erase(shape->dims.begin() + 1);
    shape->dims.push_back(channels);
  }
  return shape;
}

std::string FormatLayout(const IrGraph& graph, const ValueLayout& layout) {
  std::vector<std::string> parts;
  if (layout.sized_as >= 0) parts.push_back(absl::StrCat("sized_as=", graph.values[layout.sized_as].name));
  if (layout.channel_block > 1) parts.push_back(absl::StrCat("channel_block=", layout.channel_block));
  if (layout.channels_last) parts.push_back("channels_last");
  if (layout.data_type != 0) {
    parts.push_back(absl::StrCat("data_type=", TypeName(layout.data_type)));
  }
  if (!layout.planner_shape.empty()) parts.push_back(absl::StrCat("planner_shape=", layout.planner_shape));
  if (layout.live_to_end) parts.push_back("live_to_end");
  return absl::StrJoin(parts, " ");
}

bool IsDefault(const ValueLayout& layout) {
  return layout.sized_as < 0 && layout.channel_block <= 1 && !layout.channels_last && layout.data_type == 0 &&
         layout.planner_shape.empty() && !layout.live_to_end;
}

// The graph before the rewrite, as far as the printout compares with it.
struct BeforeRewrite {
  size_t value_count = 0;
  std::vector<ValueOrigin> origins;      // Indexed like graph.values then.
  std::vector<std::string> folded;       // Values the analysis's folding computed at load.
  std::map<std::string, std::string> producer_of;  // Output name -> display name of its node then.
};

// What each pass of the table that changed something did, in order: the
// trace RunPasses gives (nodes before and after, values added, nodes made,
// and the counts it reports).
void PrintTrace(const std::vector<ort::PassRecord>& trace, std::vector<std::string>& lines) {
  lines.push_back("passes:");
  for (const ort::PassRecord& record : trace) {
    std::vector<std::string> did;
    if (record.nodes_after != record.nodes_before) {
      did.push_back(absl::StrCat("nodes ", record.nodes_before, " -> ", record.nodes_after));
    }
    if (record.values_added > 0) did.push_back(absl::StrCat(record.values_added, " values added"));
    if (record.nodes_made > 0) did.push_back(absl::StrCat(record.nodes_made, " nodes made"));
    if (record.change.fused_nodes > 0) did.push_back(absl::StrCat("fused ", record.change.fused_nodes));
    if (record.change.layout_nodes > 0) did.push_back(absl::StrCat("layout ", record.change.layout_nodes));
    if (record.change.reorder_nodes > 0) did.push_back(absl::StrCat("reorders ", record.change.reorder_nodes));
    if (did.empty()) continue;
    lines.push_back(absl::StrCat("  ", record.pass->name, ": ", absl::StrJoin(did, ", ")));
  }
}

std::string PrintRewrite(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<ort::PassRecord>& trace,
                         const BeforeRewrite& before, const ShapeLookup& shape_of,
                         const std::vector<std::string>& inference_warnings) {
  const RuntimeAnnotations annotations = ReadAnnotations(rewrite, graph);
  std::vector<std::string> lines;
  for (const std::string& warning : inference_warnings) lines.push_back(absl::StrCat("shape inference: ", warning));
  if (!rewrite.refused.empty()) lines.push_back(absl::StrCat("refused: ", rewrite.refused));
  if (!before.folded.empty()) lines.push_back(absl::StrCat("folded at load: ", absl::StrJoin(before.folded, ", ")));
  lines.push_back("nodes:");
  auto names = [&](const std::vector<ValueId>& ids) {
    std::vector<std::string> out;
    for (ValueId id : ids) out.push_back(graph.values[id].name);
    return absl::StrJoin(out, ", ");
  };
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    std::vector<std::string> attributes;
    for (const onnx::AttributeProto& attribute : node.proto->attribute()) {
      attributes.push_back(FormatAttribute(attribute));
    }
    std::string line = absl::StrCat("  ", names(node.outputs), " = ", OpName(*node.proto));
    if (!attributes.empty()) absl::StrAppend(&line, "<", absl::StrJoin(attributes, ", "), ">");
    absl::StrAppend(&line, "(", names(node.inputs), ")");
    if (!node.implicit_inputs.empty()) absl::StrAppend(&line, " implicit(", names(node.implicit_inputs), ")");
    // Where the node writes what another node of the graph before the
    // rewrite wrote: the nodes it took in (a fused activation, Q, ...).
    std::vector<std::string> took_in;
    for (ValueId output : node.outputs) {
      auto it = before.producer_of.find(graph.values[output].name);
      if (it != before.producer_of.end() && it->second != node.display_name &&
          std::find(took_in.begin(), took_in.end(), it->second) == took_in.end()) {
        took_in.push_back(it->second);
      }
    }
    absl::StrAppend(&line, "  # ", node.display_name);
    if (annotations.made_by_runtime[id]) absl::StrAppend(&line, ", made by the runtime");
    if (!took_in.empty()) absl::StrAppend(&line, ", writes the output of ", absl::StrJoin(took_in, ", "));
    lines.push_back(std::move(line));
  }
  // Each value the runtime added (+) or changed (~), and how it is held.
  std::vector<std::string> value_lines;
  std::vector<std::string> fused_away;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    const ValueLayout& layout = annotations.values[id];
    const bool added = id >= before.value_count;
    if (value.origin == ValueOrigin::kFusedAway) {
      fused_away.push_back(value.name);
      if (!added) continue;
    }
    const bool origin_changed = !added && value.origin != before.origins[id];
    const bool layout_changed =
        added ? !IsDefault(layout) : FormatLayout(graph, layout) != FormatLayout(graph, ValueLayout{});
    if (!added && !origin_changed && !layout_changed) continue;
    const std::optional<ValueShape> held = HeldShape(graph, annotations, shape_of, static_cast<ValueId>(id));
    std::string line = absl::StrCat("  ", added ? "+ " : "~ ", value.name, ": ");
    if (added) {
      absl::StrAppend(&line, OriginName(value.origin), ", ", FormatShape(held));
    } else {
      const std::string model = FormatShape(ModelShape(value, shape_of));
      const std::string now = FormatShape(held);
      absl::StrAppend(&line, model);
      if (now != model) absl::StrAppend(&line, " held ", now);
      if (origin_changed) {
        absl::StrAppend(&line, ", ", OriginName(before.origins[id]), " -> ", OriginName(value.origin));
      }
    }
    if (const std::string text = FormatLayout(graph, layout); !text.empty()) absl::StrAppend(&line, ", ", text);
    value_lines.push_back(std::move(line));
  }
  if (!value_lines.empty()) {
    lines.push_back("values:");
    for (std::string& line : value_lines) lines.push_back(std::move(line));
  }
  if (!fused_away.empty()) lines.push_back(absl::StrCat("fused away: ", absl::StrJoin(fused_away, ", ")));
  // The rewrite's list should name the same values.
  const std::set<std::string> listed(rewrite.fused_tensors.begin(), rewrite.fused_tensors.end());
  if (listed != std::set<std::string>(fused_away.begin(), fused_away.end())) {
    lines.push_back(absl::StrCat("fused_tensors (differs): ", absl::StrJoin(rewrite.fused_tensors, ", ")));
  }
  std::vector<std::string> writes_over;
  for (size_t id = 0; id < rewrite.writes_over.size(); ++id) {
    if (rewrite.writes_over[id] < 0) continue;
    writes_over.push_back(absl::StrCat(graph.values[id].name, " over ", graph.values[rewrite.writes_over[id]].name));
  }
  if (!writes_over.empty()) lines.push_back(absl::StrCat("writes_over: ", absl::StrJoin(writes_over, ", ")));
  std::vector<std::string> overridable;
  for (size_t id = 0; id < rewrite.overridable.size() && id < graph.values.size(); ++id) {
    if (rewrite.overridable[id]) overridable.push_back(graph.values[id].name);
  }
  if (!overridable.empty()) lines.push_back(absl::StrCat("overridable: ", absl::StrJoin(overridable, ", ")));
  lines.push_back(absl::StrCat("fused_nodes=", rewrite.fused_nodes, " layout_nodes=", rewrite.layout_nodes,
                               " reorder_nodes=", rewrite.reorder_nodes));
  PrintTrace(trace, lines);
  return absl::StrJoin(lines, "\n");
}

// ---------------------------------------------------------------------------
// One case under one target.

int64_t DefaultOpset(const onnx::ModelProto& model) {
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
  }
  return opset;
}

absl::StatusOr<std::string> RunCase(const ParsedModel& parsed, const std::string& target) {
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel(target);
  if (!runtime.ok()) return runtime.status();
  if (*runtime == nullptr) return absl::InvalidArgumentError("no runtime named");
  const onnx::ModelProto& model = parsed.inferred;
  absl::StatusOr<IrGraph> built = BuildIrGraph(model.graph(), {});
  if (!built.ok()) return built.status();
  IrGraph graph = *std::move(built);
  BeforeRewrite before;
  const FoldedGraph folded = FoldConstants(graph, (*runtime)->NonConstantWeights(model.ir_version(), graph));
  for (ValueId id : folded.folded_values) before.folded.push_back(graph.values[id].name);
  before.value_count = graph.values.size();
  for (const IrValue& value : graph.values) before.origins.push_back(value.origin);
  for (const IrNode& node : graph.nodes) {
    for (ValueId output : node.outputs) before.producer_of[graph.values[output].name] = node.display_name;
  }
  const ShapeLookup shape_of = ValueInfoLookup(model.graph());
  // The target's table run directly, for the trace of what each pass did
  // (RewriteGraph runs the same table without it).
  absl::StatusOr<RuntimeSpec> spec = ParseRuntimeSpec(target);
  if (!spec.ok()) return spec.status();
  const std::optional<ort::CpuIsa> isa =
      spec->options.empty() ? std::nullopt : ort::ParseCpuIsa(spec->options.front());
  if (!isa.has_value()) return absl::InvalidArgumentError(absl::StrCat("a case names its ISA: ", target));
  std::vector<ort::PassRecord> trace;
  const GraphRewrite rewrite = ort::RunPasses(
      ort::CpuTarget(*isa),
      {.ir_version = model.ir_version(), .opset = DefaultOpset(model), .shape_of = shape_of,
       .file_graph = &parsed.file.graph()},
      graph, &trace);
  return PrintRewrite(graph, rewrite, trace, before, shape_of, parsed.inference_warnings);
}

// ---------------------------------------------------------------------------
// Comparison and update.

// A line diff of `expected` and `actual` (longest common subsequence): every
// line, prefixed "-" (expected only), "+" (actual only) or " ".
std::string LineDiff(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> a = absl::StrSplit(expected, '\n');
  const std::vector<std::string> b = absl::StrSplit(actual, '\n');
  std::vector<std::vector<int>> common(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::string diff = "--- expected\n+++ actual\n";
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      absl::StrAppend(&diff, " ", a[i++], "\n");
      ++j;
    } else if (i < a.size() && (j == b.size() || common[i + 1][j] >= common[i][j + 1])) {
      absl::StrAppend(&diff, "-", a[i++], "\n");
    } else {
      absl::StrAppend(&diff, "+", b[j++], "\n");
    }
  }
  return diff;
}

bool UpdateRequested() {
  const char* update = std::getenv("FOOTPRINT_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

fs::path CasesDir() { return fs::path(FOOTPRINT_REWRITE_CASES_DIR); }

std::vector<fs::path> CasePaths() {
  std::vector<fs::path> paths;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(CasesDir(), error)) {
    if (entry.path().extension() == ".txt") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string TestName(const fs::path& path) {
  std::string name = path.stem().string();
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class RewriteGoldenTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(RewriteGoldenTest, MatchesExpected) {
  if (const char* only = std::getenv("FOOTPRINT_GOLDEN_CASE"); only != nullptr && TestName(GetParam()) != only) {
    GTEST_SKIP() << "FOOTPRINT_GOLDEN_CASE=" << only;
  }
  absl::StatusOr<GoldenCase> golden = ReadCase(GetParam());
  ASSERT_TRUE(golden.ok()) << golden.status();
  absl::StatusOr<ParsedModel> parsed = ParseModel(*golden);
  ASSERT_TRUE(parsed.ok()) << GetParam().string() << ": " << parsed.status();
  std::vector<ExpectedBlock> updated;
  bool changed = false;
  for (const ExpectedBlock& block : golden->blocks) {
    // Targets of one block whose printouts differ get blocks of their own on update.
    std::vector<ExpectedBlock> split;
    for (const std::string& target : block.targets) {
      absl::StatusOr<std::string> actual = RunCase(*parsed, target);
      ASSERT_TRUE(actual.ok()) << GetParam().string() << " [" << target << "]: " << actual.status();
      if (*actual != block.text) {
        changed = true;
        if (!UpdateRequested()) {
          ADD_FAILURE() << GetParam().string() << " [" << target << "]: the rewrite differs from the expected block\n"
                        << LineDiff(block.text, *actual)
                        << "(FOOTPRINT_UPDATE_GOLDEN=1 rewrites the expected blocks from what the code does now; "
                           "testdata/rewrites/README.md)";
        }
      }
      auto same = std::find_if(split.begin(), split.end(), [&](const ExpectedBlock& b) { return b.text == *actual; });
      if (same != split.end()) {
        same->targets.push_back(target);
      } else {
        split.push_back(ExpectedBlock{.targets = {target}, .text = *actual});
      }
    }
    for (ExpectedBlock& part : split) updated.push_back(std::move(part));
  }
  if (UpdateRequested() && changed) {
    std::ofstream out(GetParam(), std::ios::trunc);
    out << CaseText(*golden, updated);
    ASSERT_TRUE(out.good()) << "cannot write " << GetParam().string();
    std::cout << "[golden] rewrote " << GetParam().string() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, RewriteGoldenTest, ::testing::ValuesIn(CasePaths()),
                         [](const ::testing::TestParamInfo<fs::path>& info) { return TestName(info.param); });

TEST(RewriteGoldenCasesTest, TheFolderHasItsCases) {
  // A wrong path would otherwise pass with no case at all.
  EXPECT_GE(CasePaths().size(), 20u) << CasesDir().string();
}

}  // namespace
}  // namespace footprint
