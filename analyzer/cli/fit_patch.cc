#include "analyzer/cli/fit_patch.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/cli/fit_figures.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/patching/rewrite.h"
#include "onnx/onnx_pb.h"

namespace footprint {
namespace {

// "33.8M" for people; the exact counts are in JSON.
std::string ShortCount(int64_t count) {
  if (count >= 1000000000) return absl::StrFormat("%.2fG", count / 1e9);
  if (count >= 1000000) return absl::StrFormat("%.1fM", count / 1e6);
  if (count >= 1000) return absl::StrFormat("%.1fk", count / 1e3);
  return absl::StrCat(count);
}

// Where the patched model peaks, in one line: inside a patch (a finer grid or
// more --max-overhead lowers it), at the assembly of a segment's output (a
// cut elsewhere would), or at a node no segment holds (patching stops there).
std::string PeakNote(const LoadedModel& original, const patching::PatchPlan& plan, const std::string& label) {
  const std::vector<int64_t>& live = plan.analysis.live_bytes_per_step;
  if (live.empty() || live.size() != plan.analysis.schedule.size()) return "";
  const size_t step = std::max_element(live.begin(), live.end()) - live.begin();
  const std::string& name = plan.analysis.schedule[step];
  const onnx::GraphProto& written = plan.model.model->graph();
  const onnx::NodeProto* peak = nullptr;
  for (int i = 0; i < written.node_size() && peak == nullptr; ++i) {
    const onnx::NodeProto& node = written.node(i);
    if ((node.name().empty() ? absl::StrCat(node.op_type(), "_", i) : node.name()) == name) peak = &node;
  }
  if (peak == nullptr || peak->output_size() == 0) return "";
  const std::string prefix = absl::StrCat(label, ": the patched arena peaks (", live[step], " bytes live) ");
  for (const patching::SegmentChoice& segment : plan.segments) {
    if (peak->output(0) == segment.output) {
      return absl::StrCat(prefix, "at the Concat assembling '", segment.output, "' (its pieces and itself)");
    }
  }
  absl::flat_hash_set<int> patched;
  for (const patching::PlannedSegment& planned : plan.planned) patched.insert(planned.segment.nodes.begin(), planned.segment.nodes.end());
  const onnx::GraphProto& graph = original.model->graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    if (patched.contains(i) || graph.node(i).output_size() == 0 || graph.node(i).output(0) != peak->output(0)) continue;
    return absl::StrCat(prefix, "at node '", name, "' (", peak->op_type(), "), outside every patch segment");
  }
  return absl::StrCat(prefix, "inside a patch ('", name, "')");
}

// Under --runtime: what that runtime's run holds with the patched model and
// without it, and the value its planner peaks at. Its planner can peak where
// our arena does not (ORT keeps a freed buffer for a later tensor of the
// same shape), so the user sees whether the written model helps there.
std::string RuntimeNote(const patching::PatchPlan& plan, const Analysis& given, const std::string& label) {
  const MemoryFigures& patched = plan.analysis.memory;
  if (given.options.runtime.empty() || patched.runtime_tensor_bytes <= 0) return "";
  const int64_t run = RuntimeRunBytes(patched);
  const int64_t unpatched = RuntimeRunBytes(given.memory);
  std::string note = absl::StrCat(label, ": ", given.options.runtime, "'s run holds ", run, " bytes patched, ",
                                  unpatched, " unpatched (", run < unpatched ? "lower" : "not lower", ")");
  if (!patched.runtime_peak_values.empty()) {
    absl::StrAppend(&note, "; its largest buffer at its peak is '", patched.runtime_peak_values.front(), "'");
  }
  return note;
}

}  // namespace

namespace {

// One patch option (or the note saying why there is none) into `report`.
absl::StatusOr<patching::PatchSearch> AddOne(const LoadedModel& loaded, const Analysis& given,
                                             const AnalyzeOptions& options, const Budgets& budgets,
                                             double max_overhead_percent, bool stream_input, FitReport& report) {
  const std::string label = stream_input ? "patch (input streamed)" : "patch";
  absl::StatusOr<patching::PatchSearch> found = patching::PlanPatches(
      loaded, options, given, {.max_overhead_percent = max_overhead_percent, .stream_input = stream_input});
  if (!found.ok()) return found.status();
  if (!found->plan.has_value()) {
    report.notes.push_back(absl::StrCat(label, ": ", found->reason));
    return found;
  }
  const patching::PatchPlan& plan = *found->plan;
  FitOption option{.kind = "patch"};
  SetFigures(plan.analysis.memory, given.memory, option);
  const Verdict verdict = VerdictOf(plan.analysis, budgets);
  option.fits = verdict.fits;
  std::vector<std::string> parts;
  for (const patching::SegmentChoice& segment : plan.segments) {
    option.segments.push_back({.first_node = segment.first_node,
                               .last_node = segment.last_node,
                               .input = segment.input,
                               .other_inputs = segment.other_inputs,
                               .output = segment.output,
                               .nodes = segment.nodes,
                               .rows = segment.rows,
                               .cols = segment.cols,
                               .macs_before = segment.macs_before,
                               .macs_after = segment.macs_after,
                               .output_in_pieces = segment.output_in_pieces});
    const std::string reading =
        segment.other_inputs.empty() ? "" : absl::StrCat(" reading ", segment.input, ", ", absl::StrJoin(segment.other_inputs, ", "));
    parts.push_back(absl::StrCat(segment.first_node, " .. ", segment.last_node, " (", segment.nodes, " nodes", reading, ") in ",
                                 segment.rows, "x", segment.cols, " patches, MACs ", ShortCount(segment.macs_before),
                                 " -> ", ShortCount(segment.macs_after),
                                 segment.output_in_pieces ? ", its output kept in pieces" : ""));
  }
  option.model_macs = plan.model_macs;
  option.extra_macs = plan.extra_macs;
  option.extra_macs_percent = plan.extra_macs_percent;
  option.stream_input = stream_input;
  option.description = absl::StrCat(label, ": ", absl::StrJoin(parts, "; "),
                                    absl::StrFormat(" (+%.2f%% of the model's MACs)", plan.extra_macs_percent));
  option.change = stream_input ? "a runtime fed the input patch by patch (not written by --emit-model)"
                               : "--emit-model OUT.onnx writes the patched model";
  report.options.push_back(std::move(option));
  if (std::string note = PeakNote(loaded, plan, label); !note.empty()) report.notes.push_back(std::move(note));
  if (std::string note = RuntimeNote(plan, given, label); !note.empty()) report.notes.push_back(std::move(note));
  return found;
}

}  // namespace

absl::StatusOr<patching::PatchSearch> AddPatchOption(const LoadedModel& loaded, const Analysis& given,
                                                     const AnalyzeOptions& options, const Budgets& budgets,
                                                     double max_overhead_percent, bool stream_input,
                                                     FitReport& report) {
  absl::StatusOr<patching::PatchSearch> whole =
      AddOne(loaded, given, options, budgets, max_overhead_percent, /*stream_input=*/false, report);
  if (!whole.ok() || !stream_input) return whole;
  absl::StatusOr<patching::PatchSearch> streamed =
      AddOne(loaded, given, options, budgets, max_overhead_percent, /*stream_input=*/true, report);
  if (!streamed.ok()) return streamed.status();
  return whole;
}

absl::Status EmitPatchedModel(const ModelPath& model, const patching::PatchPlan& plan, const std::string& out) {
  std::string bytes;
  if (model.bytes.has_value()) {
    bytes = *model.bytes;
  } else {
    std::ifstream in(model.path, std::ios::binary);
    std::ostringstream read;
    read << in.rdbuf();
    if (!in) return absl::InvalidArgumentError(absl::StrCat(model.path, ": cannot be read again to write the patched model"));
    bytes = std::move(read).str();
  }
  onnx::ModelProto full;
  if (!full.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(model.path, ": cannot be parsed whole to write the patched model"));
  }
  for (const onnx::TensorProto& tensor : full.graph().initializer()) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      return absl::InvalidArgumentError(absl::StrCat(model.path, ": --emit-model does not rewrite models with external data ('",
                                                     tensor.name(), "')"));
    }
  }
  absl::StatusOr<onnx::ModelProto> patched = patching::RewriteFullModel(full, plan);
  if (!patched.ok()) return absl::InvalidArgumentError(absl::StrCat(model.path, ": ", patched.status().message()));
  if (absl::Status checked = patching::CheckModel(*patched); !checked.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(model.path, ": ", checked.message()));
  }
  std::string serialized;
  if (!patched->SerializeToString(&serialized)) {
    return absl::InvalidArgumentError(absl::StrCat(out, ": the patched model is too large to serialize"));
  }
  if (absl::Status written = WriteFileAtomically(out, serialized); !written.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(out, ": ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace footprint
