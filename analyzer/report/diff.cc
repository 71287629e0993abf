#include "analyzer/report/diff.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/report/format.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

struct FigureField {
  const char* key;
  const char* label;
  bool is_bytes;
  int64_t ReportFigures::*member;
};

constexpr FigureField kFields[] = {
    {"weights_bytes", "weights", true, &ReportFigures::weights_bytes},
    {"arena_bytes", "arena", true, &ReportFigures::arena_bytes},
    {"lower_bound_bytes", "lower bound", true, &ReportFigures::lower_bound_bytes},
    {"naive_bytes", "naive", true, &ReportFigures::naive_bytes},
    {"peak_bytes", "peak", true, &ReportFigures::peak_bytes},
    {"unsized_tensors", "unsized tensors", false, &ReportFigures::unsized_tensors},
};

std::string SignedBytes(int64_t delta) {
  if (delta == 0) return "0";
  const std::string human = HumanBytes(delta < 0 ? -delta : delta);
  return absl::StrCat(delta < 0 ? "-" : "+", human);
}

std::string FigureValue(const FigureDelta& delta, int64_t value) {
  return delta.is_bytes ? HumanBytes(value) : absl::StrCat(value);
}

std::string ThresholdNote(const ReportDiff& diff) {
  if (!diff.threshold.has_value()) return "no threshold (report only)";
  return absl::StrCat("threshold +", GrowthThresholdToString(*diff.threshold));
}

}  // namespace

std::string GrowthThresholdToString(const GrowthThreshold& threshold) {
  if (threshold.percent.has_value()) return absl::StrFormat("%g%%", *threshold.percent);
  if (threshold.bytes.has_value()) return HumanAndExactBytes(*threshold.bytes);
  return "none";
}

ReportFigures FiguresOf(const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  return ReportFigures{.model_path = analysis.model.path,
                       .weights_bytes = memory.weights_bytes,
                       .arena_bytes = memory.arena_bytes,
                       .lower_bound_bytes = memory.lower_bound_bytes,
                       .naive_bytes = memory.naive_bytes,
                       .peak_bytes = memory.peak_bytes,
                       .unsized_tensors = memory.unsized_tensors};
}

absl::StatusOr<ReportFigures> FiguresFromJson(const nlohmann::json& report) {
  if (!report.is_object()) return absl::InvalidArgumentError("not an onnx-footprint report (not a JSON object)");
  if (report.contains("reports")) {
    return absl::InvalidArgumentError(
        "holds several models' reports; compare single-model reports (analyze one model per report)");
  }
  if (!report.contains("schema_version") || !report["schema_version"].is_number_integer()) {
    return absl::InvalidArgumentError("not an onnx-footprint report (no schema_version)");
  }
  if (report["schema_version"].get<int64_t>() != kJsonSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat("report has schema_version ", report["schema_version"].dump(),
                                                   ", this onnx-footprint reads schema_version ",
                                                   kJsonSchemaVersion));
  }
  if (!report.contains("memory") || !report["memory"].is_object()) {
    return absl::InvalidArgumentError("report has no \"memory\" object");
  }
  const nlohmann::json& memory = report["memory"];
  ReportFigures figures;
  for (const FigureField& field : kFields) {
    if (!memory.contains(field.key) || !memory[field.key].is_number_integer() ||
        memory[field.key].get<int64_t>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("report's memory.", field.key, " is missing or not a non-negative integer"));
    }
    figures.*field.member = memory[field.key].get<int64_t>();
  }
  if (report.contains("model") && report["model"].is_object() && report["model"].contains("path") &&
      report["model"]["path"].is_string()) {
    figures.model_path = report["model"]["path"].get<std::string>();
  }
  return figures;
}

absl::StatusOr<ReportFigures> ReadReportFigures(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError("cannot read the report (no such file or not readable)");
  std::stringstream buffer;
  buffer << file.rdbuf();
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON (at byte ", error.byte, ")"));
  }
  absl::StatusOr<ReportFigures> figures = FiguresFromJson(report);
  if (figures.ok()) figures->source = path;
  return figures;
}

ReportDiff DiffFigures(const ReportFigures& old_figures, const ReportFigures& new_figures,
                       const std::optional<GrowthThreshold>& threshold) {
  ReportDiff diff{.old_figures = old_figures, .new_figures = new_figures, .threshold = threshold};
  for (const FigureField& field : kFields) {
    FigureDelta delta{.key = field.key, .label = field.label, .is_bytes = field.is_bytes};
    delta.old_value = old_figures.*field.member;
    delta.new_value = new_figures.*field.member;
    delta.delta = delta.new_value - delta.old_value;
    if (delta.old_value != 0) {
      delta.delta_percent = 100.0 * static_cast<double>(delta.delta) / static_cast<double>(delta.old_value);
    }
    if (threshold.has_value() && delta.delta > 0) {
      if (threshold->percent.has_value()) {
        delta.exceeded = !delta.delta_percent.has_value() || *delta.delta_percent > *threshold->percent;
      } else if (threshold->bytes.has_value()) {
        delta.exceeded = !field.is_bytes || delta.delta > *threshold->bytes;
      }
    }
    diff.exceeded = diff.exceeded || delta.exceeded;
    diff.figures.push_back(delta);
  }
  return diff;
}

std::string DeltaToString(const FigureDelta& delta) {
  if (delta.delta == 0) return "0";
  std::string text = delta.is_bytes ? SignedBytes(delta.delta) : absl::StrFormat("%+d", delta.delta);
  if (delta.delta_percent.has_value()) {
    absl::StrAppend(&text, absl::StrFormat(" (%+.1f%%)", *delta.delta_percent));
  } else {
    absl::StrAppend(&text, " (was 0)");
  }
  return text;
}

std::string RenderDiffText(const ReportDiff& diff) {
  std::string out = absl::StrCat("onnx-footprint diff: ", diff.old_figures.source, " -> ", diff.new_figures.source,
                                 "\n");
  if (diff.old_figures.model_path != diff.new_figures.model_path) {
    absl::StrAppend(&out, "  models: ", diff.old_figures.model_path, " -> ", diff.new_figures.model_path, "\n");
  } else {
    absl::StrAppend(&out, "  model: ", diff.new_figures.model_path, "\n");
  }
  absl::StrAppend(&out, "  ", ThresholdNote(diff), "\n\n");
  absl::StrAppend(&out, absl::StrFormat("  %-16s %12s %12s  %-24s %s\n", "figure", "old", "new", "change", ""));
  for (const FigureDelta& delta : diff.figures) {
    absl::StrAppend(&out, absl::StrFormat("  %-16s %12s %12s  %-24s %s\n", delta.label,
                                          FigureValue(delta, delta.old_value), FigureValue(delta, delta.new_value),
                                          DeltaToString(delta), delta.exceeded ? "EXCEEDS THRESHOLD" : ""));
  }
  absl::StrAppend(&out, "\n", diff.exceeded ? "FAIL: growth past the threshold" : "OK", "\n");
  return out;
}

std::string RenderDiffMarkdown(const ReportDiff& diff) {
  std::string out = "| figure | old | new | change | |\n|---|---:|---:|---:|---|\n";
  for (const FigureDelta& delta : diff.figures) {
    absl::StrAppend(&out, "| ", delta.label, " | ", FigureValue(delta, delta.old_value), " | ",
                    FigureValue(delta, delta.new_value), " | ", DeltaToString(delta), " | ",
                    delta.exceeded ? "❌ past threshold" : (delta.delta < 0 ? "↓" : ""), " |\n");
  }
  absl::StrAppend(&out, "\n", ThresholdNote(diff), ": ",
                  diff.exceeded ? "**❌ a figure grew past the threshold**" : "✅ within the threshold", "\n");
  return out;
}

nlohmann::ordered_json DiffToJson(const ReportDiff& diff) {
  Json json;
  json["schema_version"] = kJsonSchemaVersion;
  json["old"] = diff.old_figures.source;
  json["new"] = diff.new_figures.source;
  json["old_model"] = diff.old_figures.model_path;
  json["new_model"] = diff.new_figures.model_path;
  if (!diff.threshold.has_value()) {
    json["threshold"] = nullptr;
  } else if (diff.threshold->percent.has_value()) {
    json["threshold"] = {{"percent", *diff.threshold->percent}};
  } else {
    json["threshold"] = {{"bytes", diff.threshold->bytes.value_or(0)}};
  }
  Json figures = Json::array();
  for (const FigureDelta& delta : diff.figures) {
    figures.push_back({{"figure", delta.key},
                       {"old", delta.old_value},
                       {"new", delta.new_value},
                       {"delta", delta.delta},
                       {"delta_percent", delta.delta_percent.has_value() ? Json(*delta.delta_percent) : Json()},
                       {"exceeded", delta.exceeded}});
  }
  json["figures"] = std::move(figures);
  json["exceeded"] = diff.exceeded;
  return json;
}

}  // namespace footprint
