// Reports of an analysis: text for people, JSON for machines.
//
// JSON contract (schema_version 1): snake_case keys, byte counts as integers.
//   {"schema_version": 1,
//    "model": {"path", "ir_version", "opsets", "nodes", "producer"},
//    "device": {"name", "alignment_bytes"},
//    "options": {"schedule", "alias", "inplace", "dims", "input_shapes"?, "dim_default"?, "tensor_shapes"?,
//                "input_values"? ({"sr": "16000"}, as given)},
//    "memory": {"weights_bytes", "arena_bytes", "lower_bound_bytes", "naive_bytes",
//               "reuse_savings_bytes", "reuse_savings_percent", "peak_bytes",
//               "unsized_tensors", "complete", "tiers": [...],
//               "baseline": {"lower_bound_bytes"},   // given order, no alias, no in-place
//               with dims left unbound also "symbols", "naive_expr", "lower_bound_expr",
//               "peak_lower_bound_expr", "peak_upper_bound_expr" (formulas, null when too large;
//               naive and upper bound null when a tensor has neither size nor formula),
//               "tensors_without_formula"},
//    "plan": {"algorithm", "proven_optimal", "seconds"},
//    "modes": {"schedule": {"name": "given" | "optimized", "algorithm", "proven_optimal",
//                           "lower_bound_bytes", "saved_bytes", "seconds"},
//              "alias":   {"enabled", "tensors", "lower_bound_bytes", "saved_bytes"},
//              "inplace": {"enabled", "tensors", "lower_bound_bytes", "saved_bytes"}},
//      Each mode's lower_bound_bytes is with it and the modes before it (schedule, then alias,
//      then in-place); saved_bytes is the drop from the previous one (from the baseline for the
//      schedule). "memory" figures are those of every enabled mode together.
//    "tensors": [{"name", "role", "dtype", "shape", "bytes", "aligned_bytes",
//                 "first_step", "last_step", "offset", "producer", "tier", "tier_offset",
//                 "shares_with": null | "owner tensor name", "sharing": null | "alias" | "inplace",
//                 "unsized_reason"?,
//                 "bytes_expr"? (the size as a formula in unbound dims, e.g. "6291456*batch*seq"),
//                 "bound"? ("max_over_branches": an If output whose condition is not known and whose
//                          branches differ, sized as the larger branch's; "slice_extent": a Slice
//                          inside an undecided If's branch whose ends are not known, sized at its
//                          input's extent; either or a tensor computed from one)}],
//      A tensor that shares bytes sits at its owner's offset; the group (owner and members)
//      may overlap itself in time, nothing else overlaps it (modes.h).
//    "weights": [{"name", "dtype", "shape", "bytes", "source", "graph"?}],
//    "schedule": ["node name", ...] (the order used), "schedule_is_file_order": bool,
//    "live_bytes_per_step": [...], "fits": true | false | null, "warnings": [...],
//    "if_branches"? (models with an If): [{"node", "branch": "then" | "else" | "undecided",
//               "decided_by": null | "--input-value sr=...", "bound_branch"?, "ruled_out"?}]
//               (bodies' Ifs too, as first met),
//    "sweep"? (with --sweep): {"dim", "points": [{"value", "peak_bytes", "arena_bytes",
//               "lower_bound_bytes", "naive_bytes", "unsized_tensors"}]},
//    "budgets": [{"figure": "peak" | "arena" | "weights", "limit_bytes", "actual_bytes", "ok"}],
//    "baseline"?: a diff object (diff.h), only with --baseline-report}
// Keys may be added within a schema_version; none is removed or changes meaning.
// Several models at once: {"schema_version": 1, "reports": [report | {"model": {"path"}, "error"}]},
// in the order the models were given (model_report.h).
// Unknown values are null (never 0): an unsized tensor has "bytes": null and
// "offset": null; an unknown dim is null in "shape" and a symbolic one a string.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_REPORT_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_REPORT_H_

#include <string>

#include "analyzer/memory/analysis_result.h"
#include "analyzer/report/json_writer.h"
#include "nlohmann/json.hpp"

namespace footprint {

inline constexpr int kJsonSchemaVersion = 1;

// The JSON report's members, in order, into the object `json` has open: the
// one place that decides them. A caller may add members after them (the
// "baseline" diff, model_report.cc) before closing the object.
void WriteAnalysisJsonMembers(const Analysis& analysis, JsonWriter& json);
// The JSON report as text, ending in a newline.
std::string RenderJson(const Analysis& analysis);
// The same report as a DOM, for callers that look values up (parsed from RenderJson).
nlohmann::ordered_json AnalysisToJson(const Analysis& analysis);
std::string RenderText(const Analysis& analysis);

// "schedule -1.2 MiB, alias -64 B, in-place off": the lower-bound drop of each
// mode in the order they apply, for the one-line reports (md, html).
std::string DescribeModeSavings(const ModesSummary& modes);

// The --runtime profile as the reports name it: "onnxruntime-cpu:avx512"
// (its ISA, named or the host's, always shown); "" without --runtime.
std::string RuntimeLabel(const Analysis& analysis);

// What makes peak_bytes under --runtime, as every format says it: "at
// session creation (NCHWc filters): runtime load peak; <configuration>" or
// "during the first run: runtime weights + runtime reserved; <configuration>".
std::string RuntimePeakNote(const Analysis& analysis);

// The note of the runtime load peak figure: where creation peaks, and
// whether that is the peak.
std::string RuntimeLoadPeakNote(const Analysis& analysis);

// The `count` sized tensors with the most aligned bytes, largest first (ties: list order).
std::vector<const TensorRecord*> LargestTensors(const Analysis& analysis, size_t count);

// The unbound input dims, for the reports' first lines: "batch (input axis 0),
// height (input axis 2)"; "" when every dim is bound.
std::string DescribeUnboundDims(const Analysis& analysis);
// Flags that bind them, ready to paste: "--dim batch=1 --dim height=240",
// "--dim-default 1", "--sweep batch=1,2,4,8".
std::vector<std::string> BindingExamples(const Analysis& analysis);

// Arena tensors sized as bounds: an undecided If's output taken from its
// larger branch, or a tensor computed from one ("bound" set).
int64_t BoundTensorCount(const Analysis& analysis);

// True when every weight has a byte size (the weights figure is exact).
bool WeightsKnown(const Analysis& analysis);

// (naive - arena) / naive in percent, 0 when naive is 0.
double ReuseSavingsPercent(const MemoryFigures& memory);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_REPORT_H_
