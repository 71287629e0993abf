// Builds the problem of one graph: its view, weights and baseline schedule,
// the size of every arena value, the tensor records in schedule order and the
// planner problem (graph_stages.h).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/graph_stages.h"
#include "analyzer/memory/accumulate.h"
#include "analyzer/memory/modes.h"
#include "analyzer/memory/qdq.h"
#include "analyzer/memory/schedule.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"
#include "analyzer/shapes/sizing.h"
#include "analyzer/shapes/tensor_size.h"
#include "planner/problem.h"

namespace footprint {
namespace {

// No real model comes near: ONNX runtimes cap ranks far lower (ORT at 8 for
// many kernels), and a rank in the thousands is a damaged file.
constexpr size_t kMaxRank = 1024;

// The weights of one graph: initializers and Constant values.
absl::Status CollectWeights(const IrGraph& ir, const std::string& graph_label, std::vector<WeightRecord>& weights) {
  for (const IrValue& value : ir.values) {
    if (value.origin != ValueOrigin::kInitializer && value.origin != ValueOrigin::kConstant) continue;
    absl::StatusOr<SizedType> sized = value.origin == ValueOrigin::kInitializer
                                          ? SizeOfTensorProto(*value.initializer)
                                          : SizeOfConstantValue(*value.constant);
    if (!sized.ok()) {
      return absl::Status(sized.status().code(),
                          absl::StrCat("weight '", value.name, "': ", sized.status().message()));
    }
    weights.push_back(WeightRecord{
        .name = value.name,
        .dtype = DataTypeName(sized->data_type),
        .shape = sized->shape.value_or(std::vector<Dim>{}),
        .bytes = sized->bytes,
        .from_constant_node = value.origin == ValueOrigin::kConstant,
        .graph = graph_label,
    });
  }
  return absl::OkStatus();
}

// The engine's results for `graph` (nullptr: ONNX's types only).
absl::StatusOr<const symbolic::GraphShapes*> EngineShapes(const onnx::GraphProto& graph, const Context& context) {
  if (absl::Status status = context.await_shapes(); !status.ok()) return status;
  if (!context.shapes->has_value()) return nullptr;
  auto it = (*context.shapes)->graphs.find(&graph);
  return it == (*context.shapes)->graphs.end() ? nullptr : &it->second;
}

// A value's size by its name: the engine's, else its value_info's. Sets
// `record`'s bound and bytes_expr when given.
absl::StatusOr<SizedType> SizeOfNamedValue(const std::string& name, const symbolic::GraphShapes* engine_shapes,
                                           const TypeIndex& types, TensorRecord* record) {
  const symbolic::SymValue* engine_value = engine_shapes == nullptr ? nullptr : engine_shapes->Find(name);
  if (engine_value == nullptr) {
    auto type = types.find(name);
    return SizeOfType(type == types.end() ? nullptr : type->second);
  }
  if (record != nullptr && engine_value->max_over_branches) {
    record->bound = "max_over_branches";
  } else if (record != nullptr && engine_value->extent_bound) {
    record->bound = "slice_extent";
  }
  absl::StatusOr<symbolic::SymbolicSize> symbolic_size = symbolic::SizeOfSymValue(*engine_value);
  if (!symbolic_size.ok()) return symbolic_size.status();
  if (record != nullptr && !symbolic_size->sized.bytes.has_value() && symbolic_size->bytes.known()) {
    record->bytes_expr = symbolic_size->bytes.ToString();
  }
  return std::move(symbolic_size->sized);
}

// `sized` in a layout whose dim 1 is padded to whole blocks of `block`
// (HeldValue::channel_block); unchanged when that dim is not known.
void PadChannels(int64_t block, SizedType& sized) {
  if (block <= 1 || !sized.shape.has_value() || sized.shape->size() < 2) return;
  Dim& channels = (*sized.shape)[1];
  if (!channels.value.has_value() || *channels.value <= 0) return;
  const int64_t padded = (*channels.value + block - 1) / block * block;
  if (padded == *channels.value) return;
  if (sized.bytes.has_value()) sized.bytes = *sized.bytes / *channels.value * padded;
  channels = Dim{.value = padded};
}

// `sized` held as `data_type` instead (HeldValue::data_type): the
// bytes scale by the element widths; unchanged when either has no width.
void ConvertElementType(int32_t data_type, SizedType& sized) {
  const int from_bits = ElementBits(sized.data_type);
  const int to_bits = ElementBits(data_type);
  if (data_type == 0 || from_bits <= 0 || to_bits <= 0) return;
  if (sized.bytes.has_value()) sized.bytes = *sized.bytes / from_bits * to_bits;
  sized.data_type = data_type;
}

// The size of the arena value `id`: by its name, or, for a value a runtime
// profile added, by the value it stands for (a weight's from the model),
// in the runtime's layout and element type.
absl::StatusOr<SizedType> SizeOfArenaValue(const IrGraph& g, const GraphRewrite& rewrite, ValueId id,
                                           const symbolic::GraphShapes* engine_shapes, const TypeIndex& types,
                                           TensorRecord* record) {
  int32_t data_type = 0;
  ValueId base = id;
  while (true) {  // Follows sized_as to a value of the model; the first runtime type on the way holds.
    if (data_type == 0) data_type = HeldAs(rewrite, base).data_type;
    if (HeldAs(rewrite, base).sized_as < 0) break;
    base = HeldAs(rewrite, base).sized_as;
  }
  const IrValue& value = g.values[base];
  absl::StatusOr<SizedType> sized = value.origin == ValueOrigin::kInitializer ? SizeOfTensorProto(*value.initializer)
                                    : value.origin == ValueOrigin::kConstant  ? SizeOfConstantValue(*value.constant)
                                                                              : SizeOfNamedValue(value.name, engine_shapes, types, record);
  if (!sized.ok()) return sized;
  PadChannels(HeldAs(rewrite, id).channel_block, *sized);
  ConvertElementType(data_type, *sized);
  return sized;
}

}  // namespace

absl::StatusOr<ShapeLookup> MakeShapeLookup(const onnx::GraphProto& graph, const Context& context) {
  absl::StatusOr<const symbolic::GraphShapes*> engine_shapes = EngineShapes(graph, context);
  if (!engine_shapes.ok()) return engine_shapes.status();
  auto types = std::make_shared<const TypeIndex>(IndexTypes(graph));
  return ShapeLookup([engine = *engine_shapes, types](const std::string& name) -> std::optional<ValueShape> {
    absl::StatusOr<SizedType> sized = SizeOfNamedValue(name, engine, *types, nullptr);
    if (!sized.ok() || !sized->shape.has_value()) return std::nullopt;
    ValueShape shape{.data_type = sized->data_type};
    for (const Dim& dim : *sized->shape) shape.dims.push_back(dim.value);
    return shape;
  });
}

absl::Status LoadGraph(const onnx::GraphProto& graph, const absl::flat_hash_set<std::string>& outer_names,
                       const absl::flat_hash_set<std::string>& outer_constants,
                       const std::string& graph_label, bool fold, bool accumulate, bool qdq,
                       const RuntimeModel* runtime, const onnx::GraphProto* file_graph, const ShapeLookup& shape_of, int64_t ir_version,
                       int64_t opset, GraphResult& result) {
  absl::StatusOr<IrGraph> ir = BuildIrGraph(graph, outer_names);
  if (!ir.ok()) return WithPrefix(ir.status(), graph_label);
  result.ir = *std::move(ir);
  // Before folding, so that a weight's DequantizeLinear goes with its group
  // instead of becoming a float folded weight.
  if (qdq && runtime == nullptr) result.qdq = FuseQdqGroups(result.ir);
  if (fold) {
    std::vector<bool> constant_outer;
    if (!outer_constants.empty()) {
      constant_outer.resize(result.ir.values.size());
      for (size_t id = 0; id < result.ir.values.size(); ++id) {
        const IrValue& value = result.ir.values[id];
        constant_outer[id] = value.origin == ValueOrigin::kOuterScope && outer_constants.contains(value.name);
      }
    }
    result.folded =
        FoldConstants(result.ir,
                      runtime != nullptr ? runtime->NonConstantWeights(ir_version, result.ir) : std::vector<bool>{},
                      constant_outer);
  }
  if (runtime != nullptr) {
    result.rewrite = runtime->RewriteGraph(
        {.ir_version = ir_version, .opset = opset, .shape_of = shape_of, .file_graph = file_graph}, result.ir);
    if (!result.rewrite.refused.empty()) {
      return WithPrefix(absl::FailedPreconditionError(result.rewrite.refused), graph_label);
    }
  } else if (accumulate && MayAccumulate(result.ir)) {
    result.accumulated = AccumulateResidualAdds(shape_of, result.ir);
    result.rewrite.writes_over = result.accumulated.writes_over;  // The in-place mode reads them there.
  }
  absl::StatusOr<BaselineSchedule> schedule = MakeBaselineSchedule(result.ir);
  if (!schedule.ok()) return WithPrefix(schedule.status(), graph_label);
  result.schedule = *std::move(schedule);
  if (absl::Status status = CollectWeights(result.ir, graph_label, result.weights); !status.ok()) {
    return WithPrefix(status, graph_label);
  }
  return absl::OkStatus();
}

namespace {

// The folded values, sized after the arena values (from `first_folded` on in
// `sized`), leave the arena for the graph's folded weights.
void MoveFoldedToWeights(const std::vector<ValueId>& sized, size_t first_folded, const std::string& graph_label,
                         GraphSizes& sizes) {
  for (size_t i = first_folded; i < sized.size(); ++i) {
    const ValueId id = sized[i];
    TensorRecord& record = sizes.records[sizes.record_of[id]];
    sizes.folded_weights.push_back(WeightRecord{
        .name = record.name,
        .dtype = record.dtype,
        .shape = record.shape.value_or(std::vector<Dim>{}),
        .bytes = record.bytes,
        .folded = true,
        .graph = graph_label,
    });
    sizes.record_of[id] = -1;
    sizes.aligned_of[id] = 0;
    sizes.sized_bytes[id] = -1;
    sizes.facts[id] = ValueFacts{};
  }
  sizes.records.resize(first_folded);
}

}  // namespace

absl::StatusOr<GraphSizes> SizeArenaValues(const onnx::GraphProto& graph, const GraphResult& result,
                                           const std::string& graph_label, const Context& context) {
  const int64_t alignment = context.options.device.alignment_bytes;
  const IrGraph& g = result.ir;
  const TypeIndex types = IndexTypes(graph);
  const int value_count = static_cast<int>(g.values.size());
  std::vector<ValueId> arena_values;
  for (ValueId id = 0; id < value_count; ++id) {
    if (g.values[id].origin == ValueOrigin::kGraphInput) arena_values.push_back(id);
  }
  for (NodeId node_id : result.schedule.order) {
    for (ValueId id : g.nodes[node_id].outputs) arena_values.push_back(id);
  }
  const size_t arena_value_count = arena_values.size();
  // Folded values are sized as arena values would be, then become weights
  // (but those a runtime profile computes at every run again: node outputs).
  for (ValueId id : result.folded.folded_values) {
    if (g.values[id].origin == ValueOrigin::kFolded) arena_values.push_back(id);
  }
  // What needs no shape first (the engine may still be running), then sizes.
  GraphSizes sizes;
  std::vector<TensorRecord>& records = sizes.records;
  records.reserve(arena_values.size());
  sizes.record_of.assign(value_count, -1);
  for (ValueId id : arena_values) {
    const IrValue& value = g.values[id];
    sizes.record_of[id] = static_cast<int32_t>(records.size());
    records.push_back(TensorRecord{
        .name = value.name,
        .role = value.is_graph_output                       ? TensorRole::kGraphOutput
                : value.origin == ValueOrigin::kGraphInput ? TensorRole::kGraphInput
                                                           : TensorRole::kActivation,
        .producer = value.producer >= 0 ? g.nodes[value.producer].display_name : "",
    });
  }
  absl::StatusOr<const symbolic::GraphShapes*> engine_shapes = EngineShapes(graph, context);
  if (!engine_shapes.ok()) return engine_shapes.status();
  sizes.aligned_of.assign(value_count, 0);
  sizes.sized_bytes.assign(value_count, -1);
  sizes.facts.resize(value_count);
  for (ValueId id : arena_values) {
    const IrValue& value = g.values[id];
    TensorRecord& record = records[sizes.record_of[id]];
    absl::StatusOr<SizedType> sized = SizeOfArenaValue(g, result.rewrite, id, *engine_shapes, types, &record);
    if (!sized.ok()) {
      return absl::Status(sized.status().code(), absl::StrCat(ErrorPrefix(graph_label), "tensor '", value.name,
                                                              "': ", sized.status().message()));
    }
    if (sized->shape.has_value() && sized->shape->size() > kMaxRank) {
      return absl::InvalidArgumentError(absl::StrCat(ErrorPrefix(graph_label), "tensor '", value.name, "' has rank ",
                                                     sized->shape->size(), ", more than the limit of ", kMaxRank));
    }
    record.dtype = DataTypeName(sized->data_type);
    record.shape = std::move(sized->shape);
    record.bytes = sized->bytes;
    record.unsized_reason = std::move(sized->unsized_reason);
    if (record.bytes.has_value()) {
      absl::StatusOr<int64_t> aligned = AlignUp(*record.bytes, alignment);
      if (!aligned.ok()) {
        return absl::OutOfRangeError(
            absl::StrCat(ErrorPrefix(graph_label), "tensor '", value.name, "': ", aligned.status().message()));
      }
      record.aligned_bytes = *aligned;
    }
    sizes.aligned_of[id] = record.aligned_bytes;
    if (record.bytes.has_value()) sizes.sized_bytes[id] = record.aligned_bytes;
    sizes.facts[id] = ValueFacts{.bytes = record.bytes, .dtype = record.dtype};
  }
  MoveFoldedToWeights(arena_values, arena_value_count, graph_label, sizes);
  return sizes;
}

void SizeKernelWorkspaces(const RuntimeModel* runtime, int64_t alignment, const GraphResult& result,
                          GraphSizes& sizes) {
  const IrGraph& g = result.ir;
  sizes.kernel_workspace_of.assign(g.nodes.size(), 0);
  std::vector<std::vector<int64_t>> kernel_blocks_of(g.nodes.size());
  if (runtime != nullptr) {
    absl::flat_hash_map<std::string, const WeightRecord*> weight_by_name;
    for (const WeightRecord& weight : result.weights) {
      if (weight.graph.empty()) weight_by_name.emplace(weight.name, &weight);
    }
    auto known = [](const std::vector<Dim>& shape, const std::string& dtype) -> std::optional<KnownTensor> {
      KnownTensor tensor{.dtype = dtype};
      for (const Dim& dim : shape) {
        if (!dim.value.has_value()) return std::nullopt;
        tensor.dims.push_back(*dim.value);
      }
      return tensor;
    };
    const TensorLookup tensor_of = [&](ValueId id) -> std::optional<KnownTensor> {
      if (sizes.record_of[id] >= 0) {
        const TensorRecord& record = sizes.records[sizes.record_of[id]];
        if (!record.shape.has_value()) return std::nullopt;
        return known(*record.shape, record.dtype);
      }
      auto it = weight_by_name.find(g.values[id].name);
      if (it == weight_by_name.end()) return std::nullopt;
      return known(it->second->shape, it->second->dtype);
    };
    for (size_t node = 0; node < g.nodes.size(); ++node) {
      kernel_blocks_of[node] = runtime->KernelScratch(g, result.rewrite, g.nodes[node], tensor_of);
      int64_t bytes = 0;
      for (int64_t block : kernel_blocks_of[node]) bytes += block;
      absl::StatusOr<int64_t> aligned = AlignUp(bytes, alignment);
      sizes.kernel_workspace_of[node] = aligned.ok() ? *aligned : bytes;
    }
  }
  sizes.step_extra_of.resize(g.nodes.size());
  sizes.step_blocks_of.assign(g.nodes.size(), {});
  for (size_t node = 0; node < g.nodes.size(); ++node) {
    sizes.step_extra_of[node] = sizes.workspace_of[node] + sizes.kernel_workspace_of[node];
    std::vector<int64_t>& blocks = sizes.step_blocks_of[node];
    if (sizes.workspace_of[node] > 0) blocks.push_back(sizes.workspace_of[node]);
    blocks.insert(blocks.end(), kernel_blocks_of[node].begin(), kernel_blocks_of[node].end());
  }
}

void ArrangeTensors(const std::vector<planner::Lifespan>& lifespans, const std::vector<planner::Step>& step_of,
                    const std::vector<Sharing>& sharing, GraphSizes& sizes, GraphResult& result) {
  const IrGraph& g = result.ir;
  ModesSummary& modes = result.modes;
  const int value_count = static_cast<int>(g.values.size());
  std::vector<int64_t> index_of_value(value_count, -1);
  result.tensors.reserve(sizes.records.size());
  for (ValueId id = 0; id < value_count; ++id) {
    if (g.values[id].origin != ValueOrigin::kGraphInput) continue;
    index_of_value[id] = static_cast<int64_t>(result.tensors.size());
    result.tensors.push_back(std::move(sizes.records[sizes.record_of[id]]));
  }
  for (NodeId node_id : result.order) {
    for (ValueId id : g.nodes[node_id].outputs) {
      index_of_value[id] = static_cast<int64_t>(result.tensors.size());
      result.tensors.push_back(std::move(sizes.records[sizes.record_of[id]]));
    }
  }
  for (ValueId id = 0; id < value_count; ++id) {
    if (index_of_value[id] < 0) continue;
    TensorRecord& record = result.tensors[index_of_value[id]];
    record.first_step = lifespans[id].first;
    record.last_step = lifespans[id].last;
    const Sharing& shared = sharing[id];
    if (shared.owner == id) continue;
    record.shares_with = g.values[shared.owner].name;
    record.shares_with_index = index_of_value[shared.owner];
    record.sharing = SharingKindName(shared.kind);
    (shared.kind == SharingKind::kAlias ? modes.alias : modes.inplace).tensors += 1;
  }
  for (NodeId node_id : result.order) {
    const IrNode& node = g.nodes[node_id];
    if (node.bodies.empty()) continue;
    result.tensors.push_back(TensorRecord{
        .name = absl::StrCat(node.display_name, "/body"),
        .role = TensorRole::kSubgraphWorkspace,
        .dtype = "",
        .shape = std::nullopt,
        .bytes = sizes.workspace_of[node_id],
        .aligned_bytes = sizes.workspace_of[node_id],  // A planned arena of aligned tensors is already aligned.
        .first_step = step_of[node_id],
        .last_step = step_of[node_id],
        .producer = node.display_name,
    });
  }
  for (NodeId node_id : result.order) {
    const int64_t bytes = sizes.kernel_workspace_of[node_id];
    if (bytes == 0) continue;
    const IrNode& node = g.nodes[node_id];
    result.tensors.push_back(TensorRecord{
        .name = absl::StrCat(node.display_name, "/workspace"),
        .role = TensorRole::kKernelWorkspace,
        .dtype = "",
        .shape = std::nullopt,
        .bytes = bytes,
        .aligned_bytes = bytes,  // Already aligned (SizeKernelWorkspaces).
        .first_step = step_of[node_id],
        .last_step = step_of[node_id],
        .producer = node.display_name,
    });
  }
}

std::vector<int64_t> BuildPlannerProblem(int64_t alignment, GraphResult& result) {
  std::vector<int64_t> buffer_of_tensor(result.tensors.size(), -1);
  for (size_t i = 0; i < result.tensors.size(); ++i) {
    const TensorRecord& tensor = result.tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index >= 0) continue;
    buffer_of_tensor[i] = static_cast<int64_t>(result.problem.buffers.size());
    result.problem.buffers.push_back(planner::Buffer{
        .id = tensor.name,
        .lifespan = {tensor.first_step, tensor.last_step},
        .size = tensor.aligned_bytes,
        .alignment = alignment,
    });
    result.tensor_of_buffer.push_back(i);
  }
  for (size_t i = 0; i < result.tensors.size(); ++i) {
    const TensorRecord& tensor = result.tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index < 0) continue;
    buffer_of_tensor[i] = buffer_of_tensor[tensor.shares_with_index];
    planner::Buffer& group = result.problem.buffers[buffer_of_tensor[i]];
    group.lifespan.first = std::min(group.lifespan.first, tensor.first_step);
    group.lifespan.last = std::max(group.lifespan.last, tensor.last_step);
    group.size = std::max(group.size, tensor.aligned_bytes);
  }
  return buffer_of_tensor;
}

}  // namespace footprint
