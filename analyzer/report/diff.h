// Comparing two reports of the same model: what grew, what shrank, and
// whether any growth is past the gate's threshold.
//
// Usage:
//   absl::StatusOr<ReportFigures> old_figures = ReadReportFigures("old.json");
//   ReportDiff diff = DiffFigures(*old_figures, FiguresOf(analysis), GrowthThreshold{.percent = 5});
//   if (diff.exceeded) { /* exit 1 */ }
//
// The compared figures are weights, arena, lower bound, naive, peak (bytes)
// and the count of unsized tensors. A figure is flagged when it grew past the
// threshold:
// - PCT: growth * 100 / old > PCT; a figure that was 0 and grew is flagged;
// - SIZE: growth > SIZE for the byte figures; the unsized count is flagged on
//   any growth, since a newly unsized tensor means the byte figures stopped
//   counting something;
// - no threshold: nothing is flagged (a plain report of the changes).
// Shrinking never fails a gate.
//
// JSON (schema_version 1):
//   {"schema_version": 1, "old": PATH, "new": PATH, "old_model": PATH, "new_model": PATH,
//    "threshold": {"percent": 5} | {"bytes": N} | null,
//    "figures": [{"figure": "weights_bytes" ..., "old", "new", "delta", "delta_percent" (null when old is 0),
//                 "exceeded"}],
//    "exceeded": bool}
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_DIFF_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/memory/analysis_result.h"
#include "nlohmann/json.hpp"

namespace footprint {

// How much a figure may grow before a gate fails (parsed from the CLI's
// THRESHOLD, cli/size_flags.h).
struct GrowthThreshold {
  std::optional<double> percent;  // Set for "5%": growth relative to the old value.
  std::optional<int64_t> bytes;   // Set for "1MiB": absolute growth.
};

// "5%" or "1 MiB (1,048,576 bytes)".
std::string GrowthThresholdToString(const GrowthThreshold& threshold);

// The figures of one report: what a diff compares.
struct ReportFigures {
  std::string source;          // Where they were read from ("" for a fresh analysis).
  std::string model_path;      // model.path of the report.
  int64_t weights_bytes = 0;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int64_t naive_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t unsized_tensors = 0;
};

ReportFigures FiguresOf(const Analysis& analysis);

// From a parsed single-model JSON report. Errors (InvalidArgument) say what
// is wrong without naming the file: the caller does.
absl::StatusOr<ReportFigures> FiguresFromJson(const nlohmann::json& report);

// Reads and checks a JSON report file. Errors name neither the file: the
// caller prefixes it.
absl::StatusOr<ReportFigures> ReadReportFigures(const std::string& path);

struct FigureDelta {
  std::string key;                      // JSON key: "weights_bytes", ..., "unsized_tensors".
  std::string label;                    // "weights", "arena", "lower bound", "naive", "peak", "unsized tensors".
  bool is_bytes = true;                 // False for the unsized count.
  int64_t old_value = 0;
  int64_t new_value = 0;
  int64_t delta = 0;                    // new - old.
  std::optional<double> delta_percent;  // 100 * delta / old; nullopt when old is 0.
  bool exceeded = false;                // Grew past the threshold.
};

struct ReportDiff {
  ReportFigures old_figures;
  ReportFigures new_figures;
  std::optional<GrowthThreshold> threshold;  // nullopt: report only.
  std::vector<FigureDelta> figures;          // weights, arena, lower bound, naive, peak, unsized.
  bool exceeded = false;                     // Any figure exceeded.
};

ReportDiff DiffFigures(const ReportFigures& old_figures, const ReportFigures& new_figures,
                       const std::optional<GrowthThreshold>& threshold);

std::string RenderDiffText(const ReportDiff& diff);
std::string RenderDiffMarkdown(const ReportDiff& diff);
nlohmann::ordered_json DiffToJson(const ReportDiff& diff);

// "+1.50 MiB (+12.5%)", "-64 B (-0.1%)", "0", "+3 (new)" for a delta.
std::string DeltaToString(const FigureDelta& delta);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_DIFF_H_
