// ONNX Runtime's allocation planner, replayed over the analysis's schedule
// (runtime_buffers.h).
#include "analyzer/runtimes/onnxruntime/runtime_buffers.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/session_run.h"

namespace footprint::ort {

namespace {

// What the frame mallocs for each OrtValue of a node's output besides its
// buffer, measured (heap traces of ORT 1.30 runs, glibc usable sizes): the
// Tensor object (168 bytes) and its shared_ptr control block (40). Chains of
// 4, 32 and 128 Exps on 256 KiB tensors, all but two taking a freed buffer
// again, peak 791,072, 795,792 and 818,048 bytes: 169 to 232 bytes more a
// node; the fp16 tiny Llama holds 62 such Tensor objects at its peak.
constexpr int64_t kOrtValueObjectBytes = 168 + 40;

// The input whose buffer ORT's planner may give to output `slot` of `node`
// without a copy, and whether it must (a view) or may (in place); -1: none.
struct ReusableInput {
  ValueId input = -1;
  bool must = false;  // Alias(0, 0): the output is a view, whatever else reads the input.
  bool float32_only = false;  // MayInplace only in the float32 kernel's registration.
};

ReusableInput ReusableInputOf(const IrNode& node, size_t slot, const std::vector<ValueId>& writes_over) {
  if (slot != 0 || node.inputs.empty() || node.proto->input_size() == 0 || node.proto->input(0).empty()) {
    return {};
  }
  if (IsViewOp(*node.proto)) return {.input = node.inputs[0], .must = true};
  const ValueId output = node.outputs[0];
  if (output < static_cast<ValueId>(writes_over.size()) && writes_over[output] >= 0) {
    return {.input = writes_over[output]};  // The fused Conv's Sum input (MayInplace(3, 0)).
  }
  if (RunsInPlace(*node.proto)) return {.input = node.inputs[0]};
  // core/providers/cpu/math/softmax.cc registers the float32 Softmax and
  // LogSoftmax (every opset) with MayInplace(0, 0), the double ones without.
  // Measured: a one-block ViT-like encoder (vision_models.py) peaks with one
  // 1 x 6 x 577 x 577 score tensor, not two.
  if (IsDefaultDomain(*node.proto) && (node.proto->op_type() == "Softmax" || node.proto->op_type() == "LogSoftmax")) {
    return {.input = node.inputs[0], .float32_only = true};
  }
  return {};
}

// What a freed buffer must match to be reused: allocation_planner.cc's
// SameSize compares the element sizes, not the types (a freed float32 buffer
// takes an int32 tensor of its dims), and never reuses for or from strings.
// Measured: the dynamic-quantized copy of pytorch_super_resolution, whose
// ConvInteger int32 outputs take the float buffers of the layer before.
std::string ReuseKey(const std::string& shape_key) {
  const size_t bracket = shape_key.find('[');
  if (bracket == std::string::npos) return "";
  const std::string type = shape_key.substr(0, bracket);
  int bytes = 0;
  if (type == "bool" || type == "uint8" || type == "int8") bytes = 1;
  if (type == "float16" || type == "bfloat16" || type == "int16" || type == "uint16") bytes = 2;
  if (type == "float32" || type == "int32" || type == "uint32") bytes = 4;
  if (type == "float64" || type == "int64" || type == "uint64" || type == "complex64") bytes = 8;
  if (bytes == 0) return "";  // Strings and what we cannot size: no reuse.
  return std::to_string(bytes) + shape_key.substr(bracket);
}

// The shape key of value `id` as ORT holds it: a channels-last copy
// (passes/nhwc_layout.cc) has its channels last, so SameSize never matches it with
// an NCHW tensor of the same bytes. Measured: light_inception_v2's QDQ
// copy, whose first QLinearConv's NHWC input and output are not reused by
// the NCHW uint8 tensors of their dims.
std::string LayoutShapeKey(const GraphRewrite& rewrite, const std::vector<RuntimeValue>& values, ValueId id) {
  const std::string& key = values[id].shape_key;
  if (!HeldAs(rewrite, id).channels_last) return key;
  const size_t bracket = key.find('[');
  if (bracket == std::string::npos) return key;
  std::vector<std::string> dims;
  size_t at = bracket + 1;
  for (size_t comma = key.find(',', at); comma != std::string::npos; comma = key.find(',', at)) {
    dims.push_back(key.substr(at, comma - at));
    at = comma + 1;
  }
  if (dims.size() < 3) return key;
  std::rotate(dims.begin() + 1, dims.begin() + 2, dims.end());
  std::string permuted = key.substr(0, bracket + 1);
  for (const std::string& dim : dims) permuted += dim + ",";
  return permuted + "]";
}

// One OrtValue a run's frame makes for a node's output (execution_frame.cc:
// a Tensor object and its shared_ptr's control block, malloc'd apart from
// the buffer): from its step to `last`.
struct ValueRecord {
  int64_t first = 0;
  int64_t last = 0;
};

// ORT's allocation planner replayed over `order` (allocation_planner.cc):
// each output takes an input's buffer it may write over, else the most
// recently freed buffer of its reuse key, else a new buffer.
class PlannerReplay {
 public:
  PlannerReplay(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                const std::vector<RuntimeValue>& values)
      : graph_(graph),
        rewrite_(rewrite),
        order_(order),
        values_(values),
        steps_(static_cast<int64_t>(order.size())),
        shape_key_(graph.values.size()),
        reuse_key_(graph.values.size()),
        reads_(graph.values.size(), 0),
        buffer_of_(graph.values.size(), -1),
        uses_(graph.values.size(), 0),
        first_(graph.values.size(), 0),
        last_(graph.values.size(), steps_ - 1) {
    for (size_t id = 0; id < graph.values.size(); ++id) {
      shape_key_[id] = LayoutShapeKey(rewrite, values, static_cast<ValueId>(id));
      reuse_key_[id] = ReuseKey(shape_key_[id]);
    }
    for (const IrNode& node : graph.nodes) {
      for (ValueId input : node.inputs) ++reads_[input];
      for (ValueId input : node.implicit_inputs) ++reads_[input];
    }
  }

  std::vector<BufferSpan> Run(std::vector<ValueRecord>* records) {
    for (size_t id = 0; id < graph_.values.size(); ++id) {
      if (graph_.values[id].origin != ValueOrigin::kGraphInput || !InArena(static_cast<ValueId>(id))) continue;
      Own(static_cast<ValueId>(id), 0);
      uses_[id] = reads_[id] + 1;  // The caller's: an input is never freed.
    }
    for (int64_t step = 0; step < steps_; ++step) Step(graph_.nodes[order_[step]], step);
    std::vector<BufferSpan> spans;
    spans.reserve(owners_.size());
    for (ValueId owner : owners_) {
      spans.push_back({.owner = owner, .bytes = values_[owner].bytes, .first = first_[owner], .last = last_[owner]});
    }
    // The plan frees a buffer through the value that owns it
    // (allocation_planner.cc, GenerateDeallocationPlan frees Buffer(value)):
    // the OrtValue of a value written into another's buffer (a view, a write
    // over an input, a freed buffer taken again) stays in the frame to the
    // run's end; an owner's goes with its buffer.
    if (records != nullptr) {
      for (const auto& [value, step] : record_of_) {
        records->push_back({.first = step, .last = buffer_of_[value] == value ? last_[value] : steps_ - 1});
      }
    }
    return spans;
  }

 private:
  bool InArena(ValueId id) const { return id >= 0 && values_[id].bytes >= 0; }

  void Own(ValueId id, int64_t step) {
    buffer_of_[id] = id;
    first_[id] = step;
    last_[id] = steps_ - 1;
    owners_.push_back(id);
  }

  void Release(ValueId id, int64_t step) {
    const ValueId owner = id >= 0 ? buffer_of_[id] : -1;
    if (owner < 0 || --uses_[owner] != 0) return;
    last_[owner] = step;
    free_list_.push_back(owner);
  }

  // The buffer output `slot` of `node` takes over, or -1 for a new one.
  ValueId ReusedBuffer(const IrNode& node, size_t slot) {
    const ValueId output = node.outputs[slot];
    if (graph_.values[output].is_graph_output) return -1;
    const ReusableInput candidate = ReusableInputOf(node, slot, rewrite_.writes_over);
    if (InArena(candidate.input) && buffer_of_[candidate.input] >= 0) {
      const ValueId input_owner = buffer_of_[candidate.input];
      const bool same_shape = !shape_key_[output].empty() && shape_key_[output] == shape_key_[candidate.input];
      const bool type_allows = !candidate.float32_only || shape_key_[output].rfind("float32[", 0) == 0;
      if (candidate.must || (graph_.values[input_owner].origin == ValueOrigin::kNodeOutput &&
                             uses_[input_owner] == 1 && same_shape && type_allows)) {
        return input_owner;
      }
    }
    if (reuse_key_[output].empty()) return -1;
    for (auto it = free_list_.rbegin(); it != free_list_.rend(); ++it) {
      if (reuse_key_[*it] != reuse_key_[output]) continue;
      const ValueId owner = *it;
      free_list_.erase(std::next(it).base());
      last_[owner] = steps_ - 1;  // Allocated again until its new last use.
      return owner;
    }
    return -1;
  }

  // ORT's use counts, held per buffer (the value that first owned it): one
  // per read, one for the producing node (dropped after it runs), one for
  // the caller's hold on a graph output or input.
  void Step(const IrNode& node, int64_t step) {
    for (size_t slot = 0; slot < node.outputs.size(); ++slot) {
      const ValueId output = node.outputs[slot];
      if (!InArena(output)) continue;
      const IrValue& value = graph_.values[output];
      const int64_t output_uses = reads_[output] + 1 + (value.is_graph_output || HeldAs(rewrite_, output).live_to_end ? 1 : 0);
      const ValueId owner = ReusedBuffer(node, slot);
      if (owner < 0) {
        Own(output, step);
        uses_[output] = output_uses;
      } else {
        buffer_of_[output] = owner;
        uses_[owner] += output_uses;
      }
      record_of_.push_back({output, step});
    }
    for (ValueId input : node.inputs) Release(input, step);
    for (ValueId input : node.implicit_inputs) Release(input, step);
    for (ValueId output : node.outputs) {
      if (InArena(output)) Release(output, step);
    }
  }

  const IrGraph& graph_;
  const GraphRewrite& rewrite_;
  const std::vector<NodeId>& order_;
  const std::vector<RuntimeValue>& values_;
  const int64_t steps_;
  std::vector<std::string> shape_key_;
  std::vector<std::string> reuse_key_;
  std::vector<int64_t> reads_;                          // Reads of each value by the graph's nodes.
  std::vector<ValueId> buffer_of_;                      // The buffer (owner value) holding each value.
  std::vector<int64_t> uses_;                           // Per owner: the uses left of every value on it.
  std::vector<int64_t> first_, last_;                   // Per owner: its steps.
  std::vector<ValueId> owners_;                         // Every buffer, in allocation order.
  std::vector<ValueId> free_list_;                      // Freed buffers; the most recent at the back.
  std::vector<std::pair<ValueId, int64_t>> record_of_;  // Each node output the frame makes, and its step.
};

std::vector<BufferSpan> ReplayPlanner(const IrGraph& graph, const GraphRewrite& rewrite,
                                      const std::vector<NodeId>& order, const std::vector<RuntimeValue>& values,
                                      std::vector<ValueRecord>* records) {
  return PlannerReplay(graph, rewrite, order, values).Run(records);
}

}  // namespace

std::vector<BufferSpan> BufferSpans(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                                    const std::vector<RuntimeValue>& values) {
  return ReplayPlanner(graph, rewrite, order, values, nullptr);
}

namespace {

// The peak over `order` of the buffers and the step's extra, with each
// OrtValue's objects too when `with_objects`, and the values owning the
// buffers live at the first step at the peak.
PlannerPeak PeakOf(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                   const std::vector<RuntimeValue>& values, const std::vector<int64_t>& step_extra_of,
                   bool with_objects) {
  std::vector<ValueRecord> records;
  const std::vector<BufferSpan> spans = ReplayPlanner(graph, rewrite, order, values, &records);
  const int64_t steps = static_cast<int64_t>(order.size());
  // Live bytes per step: each buffer from its first tensor to its last use,
  // each OrtValue's objects while the frame holds them.
  std::vector<int64_t> delta(steps + 1, 0);
  for (const BufferSpan& span : spans) {
    delta[span.first] += span.bytes;
    delta[span.last + 1] -= span.bytes;
  }
  if (with_objects) {
    for (const ValueRecord& record : records) {
      delta[record.first] += kOrtValueObjectBytes;
      delta[record.last + 1] -= kOrtValueObjectBytes;
    }
  }
  PlannerPeak peak;
  int64_t live = 0;
  int64_t peak_step = -1;
  for (int64_t step = 0; step < steps; ++step) {
    live += delta[step];
    if (peak_step < 0 || live + step_extra_of[order[step]] > peak.bytes) {
      peak.bytes = live + step_extra_of[order[step]];
      peak_step = step;
    }
  }
  if (steps == 0) {
    for (const BufferSpan& span : spans) peak.bytes += span.bytes;  // Graph inputs only.
    return peak;
  }
  std::vector<BufferSpan> at_peak;
  for (const BufferSpan& span : spans) {
    if (span.first <= peak_step && peak_step <= span.last) at_peak.push_back(span);
  }
  std::stable_sort(at_peak.begin(), at_peak.end(),
                   [](const BufferSpan& a, const BufferSpan& b) { return a.bytes > b.bytes; });
  for (const BufferSpan& span : at_peak) peak.values.push_back(span.owner);
  return peak;
}

}  // namespace

PlannerPeak TensorPeak(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                       const std::vector<RuntimeValue>& values, const std::vector<int64_t>& step_extra_of) {
  return PeakOf(graph, rewrite, order, values, step_extra_of, /*with_objects=*/false);
}

int64_t FrameObjectsBytes(const IrGraph& graph, const GraphRewrite& rewrite, const std::vector<NodeId>& order,
                          const std::vector<RuntimeValue>& values, const std::vector<int64_t>& step_extra_of) {
  return PeakOf(graph, rewrite, order, values, step_extra_of, /*with_objects=*/true).bytes -
         PeakOf(graph, rewrite, order, values, step_extra_of, /*with_objects=*/false).bytes;
}

}  // namespace footprint::ort
