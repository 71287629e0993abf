#include "analyzer/cli/cli_reports.h"

#include <iostream>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzer/cli/cli.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/cli/size_flags.h"
#include "analyzer/plan/plan_file.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/html.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/markdown.h"

namespace footprint {
namespace {

constexpr const char* kProgram = "onnx-footprint";

constexpr const char* kDiffUsage = R"(Usage: onnx-footprint diff OLD.json NEW.json [options]

Compares two JSON reports (from `analyze --format json`) of the same model: weights, arena,
lower bound, naive, peak (bytes) and the number of unsized tensors.

Options:
  --max-increase PCT|SIZE  Exit 1 when a figure grew by more than this: a percentage of the old
                           value (5%) or a size (1MiB, 512KiB, 100MB, 4096). A figure that was 0
                           and grew is past any percentage; with a SIZE, any new unsized tensor is.
                           Without it, diff only reports. Shrinking never fails.
  --format text|md|json    Output format (default text).
  --output FILE            Write to FILE instead of stdout (written whole or not at all).
  -h, --help               This help.

Exit codes: 0 within the threshold, 1 a figure grew past it, 2 usage error or a report that is
missing, not JSON, or of another schema_version (the message names the file).
)";

int Fail(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n";
  return kExitBadInput;
}

int DiffUsageError(const std::string& message) {
  std::cerr << kProgram << ": " << message << " (see `onnx-footprint diff --help`)\n";
  return kExitBadInput;
}

// Writes what `produce` hands its sink to stdout or, with an output path, to
// that file (whole or not at all).
int EmitPieces(absl::FunctionRef<void(OutputSink)> produce, const std::string& output_path) {
  if (output_path.empty()) {
    produce([](std::string_view piece) { std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size())); });
    std::cout << std::flush;
    return kExitOk;
  }
  if (absl::Status status = WriteFileAtomically(output_path, produce); !status.ok()) {
    return Fail(absl::StrCat(output_path, ": ", status.message()));
  }
  return kExitOk;
}

int Emit(const std::string& text, const std::string& output_path) {
  return EmitPieces([&](OutputSink sink) { sink(text); }, output_path);
}

// One model's JSON report, or the several-model object, with its final
// newline. Streamed to the output as it is written: a big model's report is
// megabytes, and holding it whole first costs more than writing it. Names
// come from model files: invalid UTF-8 is replaced (json_writer.h).
int EmitJson(const std::vector<ModelReport>& reports, const std::string& output_path) {
  return EmitPieces(
      [&](OutputSink sink) {
        JsonWriter json(sink);
        if (reports.size() == 1) {
          WriteModelReportJson(reports[0], json);
        } else {
          WriteBatchJson(reports, json);
        }
        json.Flush();
        sink("\n");
      },
      output_path);
}

// `--flag VALUE` or `--flag=VALUE` at args[i]; advances i past it.
std::optional<std::string> TakeFlagValue(const std::vector<std::string>& args, size_t& i, const std::string& flag,
                                         std::string* error) {
  if (args[i] == flag) {
    if (i + 1 >= args.size()) {
      *error = absl::StrCat(flag, " needs a value");
      return std::nullopt;
    }
    return args[++i];
  }
  if (absl::StartsWith(args[i], absl::StrCat(flag, "="))) return args[i].substr(flag.size() + 1);
  return std::nullopt;
}

}  // namespace

bool IsReportFormat(const std::string& format) {
  return format == "text" || format == "json" || format == "md" || format == "html";
}

int AnalyzeAndReport(const std::vector<std::string>& model_arguments, const BatchRequest& batch,
                     const ReportRequest& request) {
  const std::vector<ModelPath> models = ExpandModelPaths(model_arguments);
  BatchRequest run = batch;
  if (!request.baseline_report_path.empty()) {
    if (models.size() != 1) {
      return Fail(absl::StrCat("--baseline-report compares one model, but ", models.size(),
                               " were given (use `onnx-footprint diff` per model)"));
    }
    absl::StatusOr<ReportFigures> baseline = ReadReportFigures(request.baseline_report_path);
    if (!baseline.ok()) return Fail(absl::StrCat(request.baseline_report_path, ": ", baseline.status().message()));
    run.baseline = *baseline;
  }
  if (!request.plan_path.empty() && models.size() != 1) {
    return Fail(absl::StrCat("--emit-plan writes the plan of one model, but ", models.size(), " were given"));
  }
  std::vector<std::string> run_errors;
  const std::vector<ModelReport> reports = AnalyzeModels(models, run, &run_errors);
  if (!run_errors.empty()) {
    // A binding that names nothing is a usage error of the whole run: no report.
    for (size_t i = 1; i < run_errors.size(); ++i) std::cerr << kProgram << ": " << run_errors[i] << "\n";
    return Fail(run_errors[0]);
  }
  const bool single = reports.size() == 1;
  if (single && !reports[0].analysis.has_value()) {
    return Fail(absl::StrCat(reports[0].path, ": ", reports[0].error));
  }

  // The plan is made before any output: a model it cannot be made for
  // writes neither the report nor the plan.
  std::string plan_text;
  if (!request.plan_path.empty()) {
    absl::StatusOr<std::string> text = PlanFileFor(*reports[0].analysis, request.plan_path);
    if (!text.ok()) return Fail(absl::StrCat(reports[0].path, ": ", text.status().message()));
    plan_text = *std::move(text);
  }

  int emitted = kExitOk;
  if (request.format == "json") {
    emitted = EmitJson(reports, request.output_path);
  } else if (request.format == "md") {
    emitted = Emit(RenderMarkdown(reports), request.output_path);
  } else if (request.format == "html") {
    emitted = Emit(RenderHtml(reports), request.output_path);
  } else {
    emitted = Emit(RenderBatchText(reports), request.output_path);
  }
  if (emitted != kExitOk) return emitted;
  if (!request.plan_path.empty()) {
    if (absl::Status status = WriteFileAtomically(request.plan_path, plan_text); !status.ok()) {
      return Fail(absl::StrCat(request.plan_path, ": ", status.message()));
    }
  }

  for (const ModelReport& report : reports) {
    if (!report.analysis.has_value()) {
      std::cerr << kProgram << ": " << report.path << ": " << report.error << "\n";
      continue;
    }
    for (const BudgetCheck& check : report.analysis->budgets) {
      if (!check.ok) std::cerr << kProgram << ": " << report.path << ": " << BudgetViolation(check) << "\n";
    }
    if (!report.analysis->budgets.empty() && !report.analysis->memory.complete) {
      std::cerr << kProgram << ": " << report.path << ": budgets checked against incomplete figures ("
                << report.analysis->memory.unsized_tensors << " unsized tensors): the true sizes may be larger\n";
    }
  }
  return WorstExitCode(reports);
}

int RunDiffCommand(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::optional<GrowthThreshold> threshold;
  std::string format = "text";
  std::string output_path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    std::string error;
    if (word == "-h" || word == "--help") {
      std::cout << kDiffUsage;
      return kExitOk;
    }
    if (std::optional<std::string> value = TakeFlagValue(args, i, "--max-increase", &error)) {
      absl::StatusOr<GrowthThreshold> parsed = ParseGrowthThreshold(*value);
      if (!parsed.ok()) return DiffUsageError(absl::StrCat("--max-increase: ", parsed.status().message()));
      threshold = *parsed;
      continue;
    }
    if (std::optional<std::string> value = TakeFlagValue(args, i, "--format", &error)) {
      if (*value != "text" && *value != "md" && *value != "json") {
        return DiffUsageError(absl::StrCat("--format must be text, md or json, got '", *value, "'"));
      }
      format = *value;
      continue;
    }
    if (std::optional<std::string> value = TakeFlagValue(args, i, "--output", &error)) {
      if (value->empty()) return DiffUsageError("--output needs a file name");
      output_path = *value;
      continue;
    }
    if (!error.empty()) return DiffUsageError(error);
    if (absl::StartsWith(word, "-") && word != "-") return DiffUsageError(absl::StrCat("unknown option ", word));
    files.push_back(word);
  }
  if (files.size() != 2) {
    return DiffUsageError(absl::StrCat("diff takes two reports, OLD.json NEW.json; got ", files.size()));
  }
  ReportFigures figures[2];
  for (int k = 0; k < 2; ++k) {
    absl::StatusOr<ReportFigures> read = ReadReportFigures(files[k]);
    if (!read.ok()) return Fail(absl::StrCat(files[k], ": ", read.status().message()));
    figures[k] = *read;
  }
  const ReportDiff diff = DiffFigures(figures[0], figures[1], threshold);
  std::string text;
  if (format == "json") {
    text = DiffToJson(diff).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  } else if (format == "md") {
    text = absl::StrCat("### onnx-footprint diff: `", MarkdownCode(figures[1].model_path), "`\n\n",
                        RenderDiffMarkdown(diff));
  } else {
    text = RenderDiffText(diff);
  }
  if (int status = Emit(text, output_path); status != kExitOk) return status;
  for (const FigureDelta& delta : diff.figures) {
    if (delta.exceeded) {
      std::cerr << kProgram << ": " << files[1] << ": " << delta.label << " grew " << DeltaToString(delta) << ", past --max-increase "
                << GrowthThresholdToString(*threshold) << "\n";
    }
  }
  return diff.exceeded ? kExitNotWithinLimits : kExitOk;
}

}  // namespace footprint
