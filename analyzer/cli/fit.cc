#include "analyzer/cli/fit.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/cli/fit_dim_search.h"
#include "analyzer/cli/fit_figures.h"
#include "analyzer/cli/fit_options.h"
#include "analyzer/cli/fit_patch.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/memory/dtype_what_if.h"
#include "devices/device_catalog.h"

namespace footprint {
namespace {

constexpr const char* kProgram = "onnx-footprint";

constexpr const char* kFitUsage = R"(Usage: onnx-footprint fit MODEL.onnx (--device NAME | --device-file FILE) [analyze's flags]
                          [--fit-dim NAME]... [--max-overhead PCT] [--stream-input] [--emit-model OUT.onnx]
                          [--format text|json|md] [--output FILE]

Says whether the model fits the device as given and what would make it fit, each option with
the figures the full analysis plans for it (with every flag of analyze given here):
  dim     the largest value of an input dim that fits (each --fit-dim NAME; without it, each
          input dim left unbound, or when none is and the model does not fit, each one bound
          by --dim), found by analyses of the model, never extrapolated: with
          `--dim NAME=VALUE` it fits, with VALUE + 1 it does not. Dims the model ties to it
          (total = past + sequence) move with it; other unbound input dims are set to 1.
  dtype   int8 and fp16 what-ifs of a float model: weights and activations of the ops with a
          quantized form at 1 or 2 bytes (int8: per-channel scales and zero points counted),
          Q/DQ at the graph's edges, the ops int8 runtimes keep in float counted in float.
  tiers   weights in the device's read-only tier (XIP) and what that leaves in RAM; with
          several RAM tiers, an order of them that fits when the given one does not.
  patch   the first high-resolution stage of a CNN run patch by patch (each output patch from
          its receptive field in the input, the overlaps recomputed), and a second segment
          where the peak stays (an upsampling head, a later stage), on the grids with the
          lowest arena within --max-overhead extra multiply-accumulates; the graph input is
          held whole. The figures are those of the rewritten model (docs/patching.md).
          With --runtime, also a segment where that runtime's own planner peaks when it
          lowers the runtime's run, and a note comparing its run patched and unpatched.
"Fits" means what analyze's exit code 0 means (the device's verdict and every --max-* budget).

Options:
  --fit-dim NAME       Search this input dim (repeatable).
  --max-overhead PCT   Extra MACs the patch option may cost, in % of the model's (default 20).
  --stream-input       Also the patch option with the graph input delivered patch by patch
                       (a camera that delivers rows): only the input patch is live.
  --emit-model FILE    Write the patch option's model to FILE (whole or not at all); exit 2
                       when there is no patch option.
  --format FORMAT      text (default), json (schema_version 1) or md.
  --output FILE        Write the report to FILE (whole or not at all).
  --device, --device-file, --dim, --input-shape, --dim-default, --input-value, --tensor-shape,
  --schedule, --alias, --inplace, --fold, --accumulate, --baseline, --runtime, --time-limit,
  --schedule-time-limit, --max-peak, --max-arena, --max-weights: as for analyze
                       (`onnx-footprint analyze --help`).
Exit codes: 0 the model fits as given or some option makes it fit; 1 no option does;
2 usage or input error.
)";

absl::Status UsageError(const std::string& message) { return absl::InvalidArgumentError(message); }

// Without a budget, every tier the model uses must say its capacity: there
// is nothing else to fit against.
absl::Status CheckCapacities(const AnalyzeOptions& options, const Budgets& budgets) {
  if (!budgets.empty()) return absl::OkStatus();
  for (const devices::Memory& memory : options.device_profile->memory()) {
    if ((memory.holds_activations() || memory.holds_weights()) && !memory.has_capacity_bytes()) {
      return UsageError(absl::StrCat("fit: device '", options.device_profile->name(), "' does not say the capacity of '",
                                     memory.name(), "': give a device with capacities or a budget (--max-peak SIZE)"));
    }
  }
  return absl::OkStatus();
}

// Each --fit-dim names an input dim whose input's shape the user left to the dims.
absl::Status CheckFitDims(const std::string& path, const InputDims& dims, const FitCommand& command,
                          const AnalyzeOptions& options) {
  for (const std::string& name : command.fit_dims) {
    auto input = dims.input_of.find(name);
    if (input == dims.input_of.end()) {
      return UsageError(absl::StrCat(path, ": --fit-dim ", name, ": the model has no input dim named '", name, "'",
                                     dims.names.empty() ? "" : absl::StrCat(" (its dims: ", absl::StrJoin(dims.names, ", "), ")")));
    }
    if (options.input_shapes.contains(input->second) || options.input_values.contains(input->second)) {
      return UsageError(absl::StrCat(path, ": --fit-dim ", name, ": input '", input->second,
                                     "' has its shape given by --input-shape or --input-value"));
    }
  }
  return absl::OkStatus();
}

// The dims of kind "dim": the ones asked for; else those left unbound (with
// --dim-default, none: the default binds them); else, when the model does
// not fit, the ones bound by --dim or the default (what to change).
std::vector<std::string> DimsToSearch(const FitCommand& command, const AnalyzeOptions& options, const InputDims& dims,
                                      FitReport& report) {
  if (!command.fit_dims.empty()) return command.fit_dims;
  std::vector<std::string> unbound, bound;
  for (const std::string& name : dims.names) {
    const std::string& input = dims.input_of.at(name);
    if (options.input_shapes.contains(input) || options.input_values.contains(input)) continue;
    (options.dims.contains(name) ? bound : unbound).push_back(name);
  }
  std::vector<std::string> searched;
  if (!options.dim_default.has_value()) searched = unbound;
  if (searched.empty() && report.fits != true) {
    for (const std::string& name : dims.names) {
      const bool by_default = options.dim_default.has_value() &&
                              std::find(unbound.begin(), unbound.end(), name) != unbound.end();
      if (by_default || std::find(bound.begin(), bound.end(), name) != bound.end()) searched.push_back(name);
    }
  }
  if (searched.empty()) report.notes.push_back("dim: every input dim is bound; name one with --fit-dim NAME");
  return searched;
}

void AddDimOptions(const LoadedModel& loaded, const AnalyzeOptions& options, const Budgets& budgets,
                   const InputDims& dims, const std::vector<std::string>& searched, const Analysis& given,
                   FitReport& report) {
  if (searched.empty()) return;
  const std::vector<symbolic::DimTie> ties = TiesOf(loaded.model, options);
  for (const std::string& name : searched) {
    absl::StatusOr<FitOption> option = SearchDim(loaded, options, budgets, dims, ties, name, given.memory);
    if (!option.ok()) {
      // A value the model cannot take (a convolution's window past the
      // image): no verdict for this dim, the others still stand.
      report.options.push_back(FitOption{.kind = "dim",
                                         .description = absl::StrCat(name, ": not searched (see reason)"),
                                         .dim = name,
                                         .reason = std::string(option.status().message())});
      continue;
    }
    report.options.push_back(*std::move(option));
  }
}

void AddDtypeOptions(const LoadedModel& loaded, const AnalyzeOptions& options, const Budgets& budgets,
                     const Analysis& given, FitReport& report) {
  for (WhatIfDtype dtype : {WhatIfDtype::kInt8, WhatIfDtype::kFp16}) {
    absl::StatusOr<FitOption> option = DtypeOption(loaded, given, options, budgets, dtype);
    if (option.ok()) {
      report.options.push_back(*std::move(option));
    } else {
      report.notes.push_back(absl::StrCat(WhatIfDtypeName(dtype), ": ", option.status().message()));
    }
  }
}

// The options by bytes saved (those whose figures are lower bounds last:
// what they save is not known), and the exit code: 0 when the model or any
// option fits.
void RankOptions(FitReport& report) {
  std::stable_sort(report.options.begin(), report.options.end(), [](const FitOption& a, const FitOption& b) {
    const bool a_known = a.planned && a.complete;
    const bool b_known = b.planned && b.complete;
    if (a_known != b_known) return a_known;
    return a.saved_bytes > b.saved_bytes;
  });
  bool any_fits = report.fits == true;
  for (const FitOption& option : report.options) any_fits = any_fits || option.fits == true;
  report.exit_code = any_fits ? kExitOk : kExitNotWithinLimits;
}

// Reads `path` with analyze's rules and errors.
absl::StatusOr<LoadedModel> Load(const ModelPath& model) {
  absl::StatusOr<LoadedModel> loaded =
      model.bytes.has_value() ? LoadModelFromBytes(*model.bytes, model.external_data_dir) : LoadModel(model.path);
  if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat(model.path, ": ", loaded.status().message()));
  loaded->path = model.path;
  return loaded;
}

int Fail(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n";
  return kExitBadInput;
}

// The flags fit passes on to analyze's parser: one model, and a device.
absl::StatusOr<AnalyzeCommand> ParseFitAnalyzeArgs(const std::vector<std::string>& rest, bool device_given) {
  absl::StatusOr<AnalyzeCommand> analyze = ParseAnalyzeArgs(rest);
  if (!analyze.ok()) {
    if (absl::StrContains(analyze.status().message(), "analyze needs a MODEL.onnx")) {
      return UsageError("fit needs a MODEL.onnx");
    }
    return analyze.status();
  }
  if (analyze->models.size() != 1) {
    return UsageError(absl::StrCat("fit takes one MODEL.onnx, got ", analyze->models.size()));
  }
  if (!device_given) return UsageError("fit needs --device NAME or --device-file FILE");
  return analyze;
}

}  // namespace

const char* FitUsage() { return kFitUsage; }

absl::StatusOr<FitCommand> ParseFitArgs(const std::vector<std::string>& args) {
  FitCommand command;
  std::vector<std::string> rest;
  bool device_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "-h" || word == "--help") {
      command.analyze.help = true;
      return command;
    }
    if (word == "--fit-dim" || absl::StartsWith(word, "--fit-dim=")) {
      std::string name;
      if (word == "--fit-dim") {
        if (i + 1 >= args.size()) return UsageError("--fit-dim needs a value");
        name = args[++i];
      } else {
        name = word.substr(std::string("--fit-dim=").size());
      }
      if (name.empty()) return UsageError("--fit-dim needs a dim name");
      if (std::find(command.fit_dims.begin(), command.fit_dims.end(), name) == command.fit_dims.end()) {
        command.fit_dims.push_back(name);  // Each dim once, however often named.
      }
      continue;
    }
    if (word == "--stream-input") {
      command.stream_input = true;
      continue;
    }
    if (word == "--max-overhead" || absl::StartsWith(word, "--max-overhead=") || word == "--emit-model" ||
        absl::StartsWith(word, "--emit-model=")) {
      const bool overhead = absl::StartsWith(word, "--max-overhead");
      const std::string flag = overhead ? "--max-overhead" : "--emit-model";
      std::string value;
      if (word == flag) {
        if (i + 1 >= args.size()) return UsageError(absl::StrCat(flag, " needs a value"));
        value = args[++i];
      } else {
        value = word.substr(flag.size() + 1);
      }
      if (!overhead) {
        if (value.empty()) return UsageError("--emit-model needs a file name");
        command.emit_model = value;
        continue;
      }
      double percent = 0;
      if (!absl::SimpleAtod(value, &percent) || !(percent >= 0) || percent > 1e6) {
        return UsageError(absl::StrCat("--max-overhead must be a percentage >= 0, got '", value, "'"));
      }
      command.max_overhead_percent = percent;
      continue;
    }
    for (const char* refused : {"--sweep", "--emit-plan", "--baseline-report", "--jobs"}) {
      if (word == refused || absl::StartsWith(word, absl::StrCat(refused, "="))) {
        return UsageError(absl::StrCat("fit does not take ", refused));
      }
    }
    if (word == "--device" || word == "--device-file" || absl::StartsWith(word, "--device=") ||
        absl::StartsWith(word, "--device-file=")) {
      device_given = true;
    }
    if ((word == "--format" && i + 1 < args.size()) || absl::StartsWith(word, "--format=")) {
      const std::string format = word == "--format" ? args[i + 1] : word.substr(std::string("--format=").size());
      if (format != "text" && format != "json" && format != "md") {
        return UsageError(absl::StrCat("--format must be text, json or md, got '", format, "'"));
      }
    }
    rest.push_back(word);
  }
  absl::StatusOr<AnalyzeCommand> analyze = ParseFitAnalyzeArgs(rest, device_given);
  if (!analyze.ok()) return analyze.status();
  command.analyze = *std::move(analyze);
  return command;
}

absl::StatusOr<FitReport> FitModel(const ModelPath& model, const FitCommand& command, patching::PatchSearch* patch) {
  absl::StatusOr<BatchRequest> request = MakeBatchRequest(command.analyze);
  if (!request.ok()) return request.status();
  const AnalyzeOptions& options = request->options;
  const Budgets& budgets = request->budgets;
  if (absl::Status capacities = CheckCapacities(options, budgets); !capacities.ok()) return capacities;
  std::error_code error;
  if (!model.bytes.has_value() && std::filesystem::is_directory(model.path, error)) {
    return UsageError(absl::StrCat(model.path, ": fit takes a model file, not a directory"));
  }
  absl::StatusOr<LoadedModel> loaded = Load(model);
  if (!loaded.ok()) return loaded.status();
  const InputDims dims = InputDimsOf(loaded->model);
  if (absl::Status fit_dims = CheckFitDims(model.path, dims, command, options); !fit_dims.ok()) return fit_dims;
  absl::StatusOr<Analysis> given = AnalyzeModel(*loaded, options);
  if (!given.ok()) return absl::Status(given.status().code(), absl::StrCat(model.path, ": ", given.status().message()));

  FitReport report{.model = model.path, .device = given->device.name};
  const Verdict verdict = VerdictOf(*given, budgets);
  report.fits = verdict.fits;
  report.fits_reason = verdict.reason;
  report.peak_bytes = given->memory.peak_bytes;
  report.arena_bytes = given->memory.arena_bytes;
  report.weights_bytes = ResidentWeights(given->memory);
  report.complete = given->memory.complete;
  report.unsized_tensors = given->memory.unsized_tensors;
  report.peak_parts = PeakParts(*given);
  report.tiers = FitTiersOf(*given);

  const std::vector<std::string> searched = DimsToSearch(command, options, dims, report);
  AddDimOptions(*loaded, options, budgets, dims, searched, *given, report);
  AddDtypeOptions(*loaded, options, budgets, *given, report);
  AddTierOptions(*given, options, budgets, verdict, report);
  absl::StatusOr<patching::PatchSearch> patched =
      AddPatchOption(*loaded, *given, options, budgets, command.max_overhead_percent, command.stream_input, report);
  if (!patched.ok()) return absl::Status(patched.status().code(), absl::StrCat(model.path, ": patch: ", patched.status().message()));
  if (patch != nullptr) *patch = *std::move(patched);
  RankOptions(report);
  return report;
}

int RunFitCommand(const std::vector<std::string>& args) {
  absl::StatusOr<FitCommand> command = ParseFitArgs(args);
  if (!command.ok()) {
    std::cerr << kProgram << ": " << command.status().message() << " (see `onnx-footprint fit --help`)\n";
    return kExitBadInput;
  }
  if (command->analyze.help) {
    std::cout << kFitUsage;
    return kExitOk;
  }
  const ModelPath model{.path = command->analyze.models[0]};
  patching::PatchSearch patch;
  absl::StatusOr<FitReport> report = FitModel(model, *command, &patch);
  if (!report.ok()) return Fail(std::string(report.status().message()));
  if (!command->emit_model.empty()) {
    if (!patch.plan.has_value()) {
      return Fail(absl::StrCat(command->emit_model, ": not written: ", model.path, " has no patch option (", patch.reason, ")"));
    }
    if (absl::Status written = EmitPatchedModel(model, *patch.plan, command->emit_model); !written.ok()) {
      return Fail(std::string(written.message()));
    }
  }
  const std::string& format = command->analyze.report.format;
  const std::string text = format == "json" ? RenderFitJson(*report)
                           : format == "md" ? RenderFitMarkdown(*report)
                                            : RenderFitText(*report);
  const std::string& output = command->analyze.report.output_path;
  if (output.empty()) {
    std::cout << text << std::flush;
  } else if (absl::Status status = WriteFileAtomically(output, text); !status.ok()) {
    return Fail(absl::StrCat(output, ": ", status.message()));
  }
  return report->exit_code;
}

}  // namespace footprint
