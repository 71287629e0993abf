#include "analyzer/cli.h"

#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "analyzer/analysis.h"
#include "analyzer/model_loader.h"
#include "analyzer/output_file.h"
#include "analyzer/report.h"
#include "analyzer/symbolic/shape_engine.h"
#include "analyzer/symbolic/sweep.h"
#include "absl/strings/str_format.h"

namespace footprint {
namespace {

constexpr const char* kProgram = "onnx-footprint";
constexpr const char* kVersion = "0.1.0";

constexpr const char* kUsage = R"(onnx-footprint: how much memory an ONNX model needs, before you ship it.

Usage:
  onnx-footprint analyze MODEL.onnx [options]
  onnx-footprint --version | --help

Commands:
  analyze   Infer shapes, schedule, plan the activation arena and report the figures.

Run `onnx-footprint COMMAND --help` for a command's options.
Exit codes: 0 success, 1 over a budget or the device's capacity, 2 usage or input error.
)";

constexpr const char* kAnalyzeUsage = R"(Usage: onnx-footprint analyze MODEL.onnx [options]

Options:
  --dim NAME=VALUE     Bind a symbolic input dimension (repeatable), e.g. --dim batch=1, or a
                       Loop's unknown trip count, e.g. --dim loop_0.trip_count=16.
  --input-shape INPUT=DIMS  Give a whole input's shape (repeatable), e.g. --input-shape image=1x3x224x224;
                       also binds dims the model leaves unnamed.
  --dim-default N      Bind every input dim still unbound to N (after --dim and --input-shape).
                       Dims left unbound make sizes formulas in them (bytes_expr in JSON).
  --tensor-shape NAME=DIMS  Give the shape of a tensor no shape function can know (a decoded image,
                       NonZero's output), e.g. --tensor-shape bgr_data=480x640x3 (repeatable).
  --sweep NAME=V1,V2,...  Plan the model at each value of the dim NAME and list the figures per value.
  --baseline           The spec's baseline: the file's schedule, no aliasing, no in-place reuse.
                       (Today every run is the baseline; later modes will be on by default.)
  --format text|json   Report format (default text).
  --output FILE        Write the report to FILE instead of stdout (written whole or not at all).
  --time-limit SECONDS Planner budget beyond its heuristics (default 1; 0 = heuristics only).
  -h, --help           This help.

The figures follow the memory model: peak = weights + arena; lower bound = the busiest step's
live bytes; naive = one buffer per tensor; reuse savings = naive - arena.
)";

int UsageError(const std::string& message) {
  std::cerr << kProgram << ": " << message << " (see `onnx-footprint analyze --help`)\n";
  return kExitBadInput;
}

// Takes `--flag VALUE` or `--flag=VALUE` at args[i]; advances i past it.
std::optional<std::string> TakeValue(const std::vector<std::string>& args, size_t& i, const std::string& flag,
                                     std::string* error) {
  const std::string& word = args[i];
  if (word == flag) {
    if (i + 1 >= args.size()) {
      *error = absl::StrCat(flag, " needs a value");
      return std::nullopt;
    }
    i += 1;
    return args[i];
  }
  if (absl::StartsWith(word, absl::StrCat(flag, "="))) return word.substr(flag.size() + 1);
  return std::nullopt;
}

}  // namespace

int RunAnalyzeCommand(const std::vector<std::string>& args) {
  std::vector<std::string> models;
  AnalyzeOptions options;
  std::string format = "text";
  std::string output_path;
  std::optional<symbolic::SweepRequest> sweep;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    std::string error;
    if (word == "-h" || word == "--help") {
      std::cout << kAnalyzeUsage;
      return kExitOk;
    }
    if (word == "--baseline") {
      options.optimize_schedule = false;
      options.alias = false;
      options.inplace = false;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--dim", &error)) {
      const size_t equals = value->find('=');
      int64_t dim_value = 0;
      if (equals == std::string::npos || equals == 0 ||
          !absl::SimpleAtoi(value->substr(equals + 1), &dim_value) || dim_value < 0) {
        return UsageError(absl::StrCat("--dim expects NAME=VALUE with VALUE a non-negative integer, got '", *value,
                                       "'"));
      }
      options.dims[value->substr(0, equals)] = dim_value;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--input-shape", &error)) {
      const size_t equals = value->rfind('=');
      std::optional<std::vector<int64_t>> dims =
          equals == std::string::npos ? std::nullopt : symbolic::ParseShapeText(value->substr(equals + 1));
      if (equals == std::string::npos || equals == 0 || !dims.has_value()) {
        return UsageError(absl::StrCat("--input-shape expects INPUT=DIMS with DIMS like 1x3x224x224 (or 'scalar'), got '",
                                       *value, "'"));
      }
      options.input_shapes[value->substr(0, equals)] = *dims;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--tensor-shape", &error)) {
      const size_t equals = value->rfind('=');
      std::optional<std::vector<int64_t>> dims =
          equals == std::string::npos ? std::nullopt : symbolic::ParseShapeText(value->substr(equals + 1));
      if (equals == std::string::npos || equals == 0 || !dims.has_value()) {
        return UsageError(absl::StrCat("--tensor-shape expects NAME=DIMS with DIMS like 480x640x3, got '", *value,
                                       "'"));
      }
      options.tensor_shapes[value->substr(0, equals)] = *dims;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--dim-default", &error)) {
      int64_t dim_value = 0;
      if (!absl::SimpleAtoi(*value, &dim_value) || dim_value < 0) {
        return UsageError(absl::StrCat("--dim-default expects a non-negative integer, got '", *value, "'"));
      }
      options.dim_default = dim_value;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--sweep", &error)) {
      sweep = symbolic::ParseSweep(*value);
      if (!sweep.has_value()) {
        return UsageError(absl::StrCat("--sweep expects NAME=V1,V2,... with non-negative integers, got '", *value,
                                       "'"));
      }
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--format", &error)) {
      if (*value != "text" && *value != "json") {
        return UsageError(absl::StrCat("--format must be text or json, got '", *value, "'"));
      }
      format = *value;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--output", &error)) {
      output_path = *value;
      continue;
    }
    if (std::optional<std::string> value = TakeValue(args, i, "--time-limit", &error)) {
      double seconds = 0;
      if (!absl::SimpleAtod(*value, &seconds) || seconds < 0 || seconds > 86400) {
        return UsageError(absl::StrCat("--time-limit expects seconds between 0 and 86400, got '", *value, "'"));
      }
      options.planner_time_limit = absl::Seconds(seconds);
      continue;
    }
    if (!error.empty()) return UsageError(error);
    if (absl::StartsWith(word, "-") && word != "-") return UsageError(absl::StrCat("unknown option ", word));
    models.push_back(word);
  }
  if (models.empty()) return UsageError("analyze needs a MODEL.onnx");
  if (models.size() > 1) return UsageError("analyze takes one model");
  const std::string& path = models[0];

  absl::StatusOr<LoadedModel> loaded = LoadModel(path);
  if (!loaded.ok()) {
    std::cerr << kProgram << ": " << path << ": " << loaded.status().message() << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, options);
  if (!analysis.ok()) {
    std::cerr << kProgram << ": " << path << ": " << analysis.status().message() << "\n";
    return kExitBadInput;
  }
  std::string report;
  std::vector<symbolic::SweepPoint> points;
  if (sweep.has_value()) {
    absl::StatusOr<std::vector<symbolic::SweepPoint>> swept = symbolic::Sweep(*loaded, options, *sweep);
    if (!swept.ok()) {
      std::cerr << kProgram << ": " << path << ": --sweep " << sweep->dim << ": " << swept.status().message() << "\n";
      return kExitBadInput;
    }
    points = *std::move(swept);
  }
  if (format == "json") {
    nlohmann::ordered_json json = AnalysisToJson(*analysis);
    if (sweep.has_value()) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const symbolic::SweepPoint& point : points) {
        rows.push_back({{"value", point.value},
                        {"peak_bytes", point.memory.peak_bytes},
                        {"arena_bytes", point.memory.arena_bytes},
                        {"lower_bound_bytes", point.memory.lower_bound_bytes},
                        {"naive_bytes", point.memory.naive_bytes},
                        {"unsized_tensors", point.memory.unsized_tensors}});
      }
      json["sweep"] = {{"dim", sweep->dim}, {"points", std::move(rows)}};
    }
    report = json.dump(2) + "\n";
  } else {
    report = RenderText(*analysis);
    if (sweep.has_value()) {
      absl::StrAppend(&report, "\nSweep of ", sweep->dim, " (planned at each value)\n",
                      absl::StrFormat("  %12s %14s %14s %14s %14s %8s\n", sweep->dim, "peak", "arena", "lower bound",
                                      "naive", "unsized"));
      for (const symbolic::SweepPoint& point : points) {
        absl::StrAppend(&report, absl::StrFormat("  %12d %14d %14d %14d %14d %8d\n", point.value,
                                                 point.memory.peak_bytes, point.memory.arena_bytes,
                                                 point.memory.lower_bound_bytes, point.memory.naive_bytes,
                                                 point.memory.unsized_tensors));
      }
    }
  }
  if (output_path.empty()) {
    std::cout << report << std::flush;
  } else if (absl::Status status = WriteFileAtomically(output_path, report); !status.ok()) {
    std::cerr << kProgram << ": " << output_path << ": " << status.message() << "\n";
    return kExitBadInput;
  }
  return analysis->fits.has_value() && !*analysis->fits ? kExitNotWithinLimits : kExitOk;
}

int RunCli(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? kExitBadInput : kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << kProgram << " " << kVersion << "\n";
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "analyze") return RunAnalyzeCommand(rest);
  std::cerr << kProgram << ": unknown command '" << args[0] << "' (see `onnx-footprint --help`)\n";
  return kExitBadInput;
}

}  // namespace footprint
