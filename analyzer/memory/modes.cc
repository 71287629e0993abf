#include "analyzer/memory/modes.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "planner/validator.h"

#include "analyzer/loader/onnx_domain.h"
#include "analyzer/loader/onnx_ops.h"

namespace footprint {
namespace {

// Ops whose inputs may be broadcast (variadic Sum, Max, Min, Mean too): only
// an input as large as the output can be written over (the byte-size check
// sees to that).
bool IsBinaryElementwise(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Mod" || op == "And" ||
         op == "Or" || op == "Xor" || op == "Sum" || op == "Max" || op == "Min" || op == "Mean";
}

}  // namespace

const char* SharingKindName(SharingKind kind) {
  switch (kind) {
    case SharingKind::kOwner:
      return "";
    case SharingKind::kAlias:
      return "alias";
    case SharingKind::kInPlace:
      return "inplace";
  }
  return "";
}

bool IsElementwiseOp(const onnx::NodeProto& node) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      // Activations.
      "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu", "Celu", "Gelu",
      "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Clip",
      // Unary math.
      "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Ceil", "Floor", "Round", "Sign", "Erf", "Not", "Sin",
      "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
      // Binary and variadic arithmetic and logic, with a same-shape input.
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Sum", "Max", "Min", "Mean",
      // Per-element in X at inference (Dropout: its single output is X or X scaled).
      "Dropout"};
  // BatchNormalization is elementwise in X at inference (per-channel constants) only.
  return IsDefaultDomain(node) && (kOps->contains(node.op_type()) || IsInferenceBatchNorm(node));
}

scheduler::DataflowGraph ToDataflowGraph(const IrGraph& graph, const GraphRewrite& rewrite,
                                         const std::vector<int64_t>& aligned_bytes,
                                         const std::vector<int64_t>& extra_bytes) {
  scheduler::DataflowGraph dataflow;
  dataflow.values.resize(graph.values.size());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    const bool in_arena = value.origin == ValueOrigin::kGraphInput || value.origin == ValueOrigin::kNodeOutput;
    dataflow.values[id].bytes = in_arena ? aligned_bytes[id] : 0;
    dataflow.values[id].is_graph_output =
        in_arena && (value.is_graph_output || HeldAs(rewrite, static_cast<ValueId>(id)).live_to_end);
  }
  dataflow.nodes.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const IrNode& node = graph.nodes[n];
    scheduler::Node& out = dataflow.nodes[n];
    out.inputs = node.inputs;
    out.inputs.insert(out.inputs.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    out.outputs = node.outputs;
    out.extra_bytes = extra_bytes[n];
    out.name = node.display_name;
  }
  scheduler::ConnectValues(dataflow);
  return dataflow;
}

std::vector<Sharing> PlanSharing(const IrGraph& graph, const std::vector<NodeId>& order,
                                 const std::vector<planner::Lifespan>& lifespans,
                                 const std::vector<ValueFacts>& facts, const SharingOptions& options) {
  std::vector<Sharing> sharing(graph.values.size());
  for (size_t id = 0; id < sharing.size(); ++id) sharing[id].owner = static_cast<ValueId>(id);
  if (!options.alias && !options.inplace) return sharing;
  std::vector<bool> handed_over(graph.values.size(), false);  // Its bytes already went to another value.
  for (size_t step = 0; step < order.size(); ++step) {
    const IrNode& node = graph.nodes[order[step]];
    SharingKind kind = SharingKind::kOwner;
    std::vector<ValueId> candidates;  // Inputs whose bytes the output may take, preferred first.
    if (options.alias && IsViewOp(*node.proto)) {
      kind = SharingKind::kAlias;
      if (!node.inputs.empty() && node.proto->input_size() > 0 && !node.proto->input(0).empty()) {
        candidates.push_back(node.inputs[0]);  // The data input; the others are shapes or axes.
      }
    } else if (options.inplace && options.runtime_writes_over != nullptr && node.outputs.size() == 1 &&
               (*options.runtime_writes_over)[node.outputs[0]] >= 0) {
      kind = SharingKind::kInPlace;  // A fused kernel that sums into its residual input (RuntimeModel::RewriteGraph).
      const ValueId residual = (*options.runtime_writes_over)[node.outputs[0]];
      // Never over an input the kernel also reads as data (y = x + Conv(x)).
      if (std::count(node.inputs.begin(), node.inputs.end(), residual) == 1) candidates.push_back(residual);
    } else if (options.inplace && IsElementwiseOp(*node.proto) &&
               (options.runtime == nullptr || options.runtime->RunsInPlace(*node.proto))) {
      kind = SharingKind::kInPlace;
      if (IsBinaryElementwise(node.proto->op_type())) {
        candidates = node.inputs;
      } else if (!node.inputs.empty() && node.proto->input_size() > 0 && !node.proto->input(0).empty()) {
        // Clip's bounds, PRelu's slope, BatchNormalization's statistics and
        // Dropout's ratio are never written over.
        candidates.push_back(node.inputs[0]);
      }
    }
    if (candidates.empty() || node.outputs.size() != 1) continue;
    const ValueId output = node.outputs[0];
    const ValueFacts& out_facts = facts[output];
    if (!out_facts.bytes.has_value() || *out_facts.bytes == 0) continue;
    for (ValueId input : candidates) {
      const IrValue& value = graph.values[input];
      const ValueFacts& in_facts = facts[input];
      if (value.origin != ValueOrigin::kNodeOutput || value.is_graph_output || handed_over[input]) continue;
      if (lifespans[input].last != static_cast<planner::Step>(step)) continue;  // Read later: must survive.
      if (in_facts.bytes != out_facts.bytes) continue;
      if (kind == SharingKind::kInPlace && in_facts.dtype != out_facts.dtype) continue;
      handed_over[input] = true;
      sharing[output] = Sharing{.owner = sharing[input].owner, .kind = kind};
      break;
    }
  }
  return sharing;
}

absl::Status ValidateSharedBytes(const std::vector<TensorRecord>& tensors) {
  planner::Problem groups;
  planner::Solution offsets;
  std::vector<int64_t> group_of(tensors.size(), -1);
  // Owners first, so that every member finds its group.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRecord& tensor = tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index >= 0) continue;
    if (!tensor.offset.has_value()) return absl::InternalError(absl::StrCat("tensor '", tensor.name, "' has no offset"));
    group_of[i] = static_cast<int64_t>(groups.buffers.size());
    groups.buffers.push_back(planner::Buffer{
        .id = tensor.name, .lifespan = {tensor.first_step, tensor.last_step}, .size = tensor.aligned_bytes});
    offsets.offsets.push_back(*tensor.offset);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRecord& tensor = tensors[i];
    if (!tensor.bytes.has_value() || tensor.shares_with_index < 0) continue;
    const int64_t owner = tensor.shares_with_index;
    if (owner >= static_cast<int64_t>(tensors.size()) || group_of[owner] < 0) {
      return absl::InternalError(
          absl::StrCat("tensor '", tensor.name, "' shares the bytes of a tensor that does not own bytes"));
    }
    if (tensors[owner].name != tensor.shares_with) {
      return absl::InternalError(absl::StrCat("tensor '", tensor.name, "' names '", tensor.shares_with,
                                              "' but shares the bytes of '", tensors[owner].name, "'"));
    }
    if (tensor.offset != tensors[owner].offset) {
      return absl::InternalError(absl::StrCat("tensor '", tensor.name, "' shares the bytes of '", tensor.shares_with,
                                              "' but is not at its offset"));
    }
    planner::Buffer& group = groups.buffers[group_of[owner]];
    group.lifespan.first = std::min(group.lifespan.first, tensor.first_step);
    group.lifespan.last = std::max(group.lifespan.last, tensor.last_step);
    group.size = std::max(group.size, tensor.aligned_bytes);
  }
  if (absl::Status status = planner::ValidateSolution(groups, offsets); !status.ok()) {
    return absl::InternalError(absl::StrCat("invalid plan of shared bytes: ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace footprint
