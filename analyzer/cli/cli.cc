#include "analyzer/cli/cli.h"

#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "analyzer/cli/cli_reports.h"
#include "analyzer/cli/fit.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/cli/progress.h"
#include "analyzer/cli/replay_command.h"
#include "analyzer/cli/size_flags.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/runtimes/registry.h"
#include "analyzer/memory/sweep.h"
#include "analyzer/report/report.h"
#include "analyzer/shapes/shape_engine.h"
#include "devices/device_catalog.h"
#include "devices/devices_command.h"
#include "planner/plan_command.h"

namespace footprint {
namespace {

constexpr const char* kProgram = "onnx-footprint";
constexpr const char* kVersion = "0.1.0";

constexpr const char* kUsage = R"(onnx-footprint: how much memory an ONNX model needs, before you ship it.

Usage:
  onnx-footprint analyze MODEL.onnx|DIR... [options]
  onnx-footprint fit MODEL.onnx (--device NAME | --device-file FILE) [analyze's options] [--fit-dim NAME]...
  onnx-footprint devices [--format text|json]
  onnx-footprint plan FILE.csv [--time-limit SECONDS] [--output FILE]
  onnx-footprint diff OLD.json NEW.json [--max-increase PCT|SIZE] [--format text|md|json] [--output FILE]
  onnx-footprint replay PLAN.json [--model FILE]
  onnx-footprint --version | --help

Commands:
  analyze   Infer shapes, schedule, plan the activation arena and report the figures.
  fit       Say whether the model fits a device and what would make it fit: a dim's largest value,
            int8 or fp16, weights in flash, another order of the RAM tiers; each with its figures.
  devices   List the built-in hardware profiles and their memory tiers.
  plan      Solve an offset-assignment problem in MiniMalloc's CSV (id,lower,upper,size[,alignment][,offset]).
  diff      Compare two JSON reports of a model; fail when a figure grew past a threshold.
  replay    Walk a plan from `analyze --emit-plan` against real memory; fail if a live tensor is overwritten.

Run `onnx-footprint COMMAND --help` for a command's options.
Exit codes: 0 success, 1 over a budget or the device's capacity (for fit: no option fits;
for diff, growth past the threshold), 2 usage or input error.
)";

constexpr const char* kAnalyzeUsage = R"(Usage: onnx-footprint analyze MODEL.onnx|DIR... [options]

A DIR stands for every *.onnx file below it (recursively, sorted). With several models, each
is analyzed on its own, a summary table ends the report, and a model that fails prints its
one-line error while the others are still reported. Each model takes the --dim bindings that
name its inputs' dims; a --dim that no model names is an error.

Options:
  --dim NAME=VALUE     Bind a symbolic input dimension (repeatable), e.g. --dim batch=1; an unnamed
                       input dim is <input>_dim<k>, e.g. --dim input_ids_dim1=128; a Loop's unknown
                       trip count is <node>.trip_count, e.g. --dim loop_0.trip_count=16.
  --input-shape INPUT=DIMS  Give a whole input's shape (repeatable), e.g. --input-shape image=1x3x224x224;
                       also binds dims the model leaves unnamed.
  --dim-default N      Bind every input dim still unbound to N (after --dim and --input-shape).
                       Dims left unbound make sizes formulas in them (bytes_expr in JSON).
  --input-value INPUT=V  The value of a scalar or small 1-D integer, float or bool input (repeatable),
                       e.g. --input-value sr=16000, --input-value use_cache_branch=1, --input-value ids=1,2,3;
                       it propagates like a constant (Ifs it decides take one branch) and sets the input's shape.
  --tensor-shape NAME=DIMS  Give the shape of a tensor no shape function can know (a decoded image,
                       NonZero's output), e.g. --tensor-shape bgr_data=480x640x3 (repeatable).
  --sweep NAME=V1,V2,...  Plan the model at each value of the dim NAME and list the figures per value.
  --schedule given|optimized
                       The node order (default optimized): the file's own, or the order with the
                       lowest lower bound the schedule optimizer finds (never above the file's).
  --schedule-time-limit SECONDS
                       Schedule optimizer budget beyond its greedy passes (default 0.3; 0 = greedy).
  --alias, --no-alias  Reshape, Flatten, Squeeze, Unsqueeze and Identity outputs share their input's
                       bytes when the input dies there (default on).
  --inplace, --no-inplace
                       An elementwise op writes over a same-size input that dies at its step, where
                       the device profile allows it (default on).
  --fold, --no-fold    Constant folding: a deterministic node whose inputs are all weights is
                       evaluated at load, as runtimes do; its outputs are weights
                       (folded_weights_bytes, part of peak), not arena tensors; an If whose
                       condition is known holds only its taken branch (default on).
  --accumulate, --no-accumulate
                       A Conv whose only reader is an Add of a same-shape residual adds it as it
                       writes: the Conv's own output never exists, and with in-place the sum
                       takes the residual's bytes when it dies there (default on; --runtime
                       applies its runtime's fusions instead).
  --qdq, --no-qdq      A DequantizeLinear(s) -> op -> QuantizeLinear group whose op has a
                       quantized form (Conv, MatMul, Gemm, Add, Mul, Concat, pools, Relu/Clip
                       and other activations, data movement) is that quantized op: it reads
                       and writes the quantized tensors, the float tensors between never
                       exist, and a weight's DequantizeLinear goes with it (default on;
                       --runtime applies its runtime's rules instead).
  --baseline           The spec's baseline: the file's schedule, no folding, accumulating,
                       quantized groups, aliasing or in-place reuse (same as --schedule given
                       --no-fold --no-accumulate --no-qdq --no-alias --no-inplace).
                       The report always gives the baseline lower bound next to each mode's own.
  --runtime NAME       Model what one runtime does to the graph before it plans memory: its
                       fusions (tensors that no longer exist), its layout (ORT's NCHWc: padded
                       blocked tensors and reorder copies), which of its kernels work in place,
                       its kernels' workspaces (scratch live at their node's step,
                       workspace_bytes), graph inputs held to the run's end, its own planner
                       (runtime_tensor_bytes: its buffers at the worst step, arena off), its
                       measured per-run overhead (runtime_overhead_bytes), what it holds after
                       a first run with its default options (runtime_reserved_bytes) and its
                       weights after load (runtime_weights_bytes). The peak is then the
                       runtime process's: the larger of its load peak while it creates the
                       session (runtime_load_peak_bytes) and weights after load + reserved +
                       inputs (with noarena: + runtime tensors + overhead); the report names
                       the phase (runtime_peak_phase). Names: onnxruntime-cpu, with options
                       after a colon: an ISA (avx2, avx512, arm64; default: this machine's)
                       and noarena, e.g. onnxruntime-cpu:avx2,noarena. Independent of
                       --device. Default: none (the runtime-independent plan).
  --device NAME        Plan for a built-in hardware profile (default generic-cpu; see `devices`).
  --device-file FILE   Plan for a profile of your own (text-format DeviceProfile, see devices/).
  --format FORMAT      Report format (default text):
                         text  for people at a terminal;
                         json  for machines (several models: {"schema_version": 1, "reports": [...]});
                         md    Markdown for a pull-request comment (figures table, top 10 tensors);
                         html  one self-contained page (arena picture, live bytes, sortable table).
  --output FILE        Write the report to FILE instead of stdout (written whole or not at all).
  --emit-plan FILE     Also write the arena plan a runtime serves (one model, all tensors sized):
                       FILE.json (read by `onnx-footprint replay`) or FILE.h (a C99 header for
                       runtime/fp_arena.h), chosen by the extension; written whole or not at all.
  --time-limit SECONDS Planner budget beyond its heuristics (default 0.3; 0 = heuristics only).
  --max-peak SIZE      Budgets: exit 1, with one line on stderr per exceeded budget, when the
  --max-arena SIZE     peak, arena or weights figure is larger than SIZE (the report is still
  --max-weights SIZE   printed). SIZE: 4096 (bytes), 512KiB, 1.5MiB, 2GiB (binary: 1024^n),
                       100KB, 100MB, 2GB (decimal: 1000^n); K, M, G alone are binary.
  --baseline-report OLD.json
                       Show each figure's change against a previous JSON report of the model
                       (one model only; to gate on growth, use `onnx-footprint diff`).
  --jobs N             Analyze up to N models at once (default 1); output keeps the input order.
  -h, --help           This help.

A progress line is drawn on stderr while models are analyzed, only when stderr is a terminal.

The figures follow the memory model: peak = weights + folded weights + arena; lower bound =
the busiest step's live bytes; naive = one buffer per tensor; reuse savings = naive - arena.
They are those of the modes in use; the report also gives the baseline lower bound and what
each mode saved.
Exit codes: 0 success; 1 a budget or the device's capacity is exceeded; 2 usage or input error,
a binding the model contradicts among them (--dim height=481 where its adds need other sizes:
the line names the node, the dims and the nearest values the model takes) (with several models:
the worst of them, 2 > 1 > 0).
)";

// A usage error of `analyze`: its one-line message, which the command prints
// with a pointer to --help (and Python raises as is).
absl::Status UsageError(const std::string& message) { return absl::InvalidArgumentError(message); }

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

// Each Take*Flag: true when args[i] is one of its flags (i past its value),
// false when not (with *error set for one of its flags missing its value),
// or the usage error of a bad value.

// The modes and what the analysis models: --baseline, --[no-]qdq, --[no-]accumulate,
// --[no-]fold, --runtime, --[no-]alias, --[no-]inplace, --schedule, --schedule-time-limit.
absl::StatusOr<bool> TakeModeFlag(const std::vector<std::string>& args, size_t& i, AnalyzeCommand& command,
                                  std::string* error_out) {
  const std::string& word = args[i];
  AnalyzeOptions& options = command.options;
  std::string& error = *error_out;
  if (word == "--baseline") {
    options.optimize_schedule = false;
    options.alias = false;
    options.inplace = false;
    options.fold_constants = false;
    options.accumulate = false;
    options.qdq = false;
    return true;
  }
  if (word == "--qdq" || word == "--no-qdq") {
    options.qdq = word == "--qdq";
    return true;
  }
  if (word == "--accumulate" || word == "--no-accumulate") {
    options.accumulate = word == "--accumulate";
    return true;
  }
  if (word == "--fold" || word == "--no-fold") {
    options.fold_constants = word == "--fold";
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--runtime", &error)) {
    // `--runtime=` names no runtime ("" is none to the registry): refused like an unknown name.
    absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel(*value);
    if (runtime.ok() && *runtime == nullptr) {
      runtime = absl::InvalidArgumentError(
          absl::StrCat("must be one of ", absl::StrJoin(KnownRuntimes(), ", "), ", got ''"));
    }
    if (!runtime.ok()) return UsageError(absl::StrCat("--runtime ", runtime.status().message()));
    options.runtime = *value;
    return true;
  }
  if (word == "--alias" || word == "--no-alias") {
    options.alias = word == "--alias";
    return true;
  }
  if (word == "--inplace" || word == "--no-inplace") {
    options.inplace = word == "--inplace";
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--schedule", &error)) {
    if (*value != "given" && *value != "optimized") {
      return UsageError(absl::StrCat("--schedule must be given or optimized, got '", *value, "'"));
    }
    options.optimize_schedule = *value == "optimized";
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--schedule-time-limit", &error)) {
    double seconds = 0;
    if (!absl::SimpleAtod(*value, &seconds) || seconds < 0 || seconds > 86400) {
      return UsageError(
          absl::StrCat("--schedule-time-limit expects seconds between 0 and 86400, got '", *value, "'"));
    }
    options.schedule_time_limit = absl::Seconds(seconds);
    return true;
  }
  return false;
}

// The shapes and values: --dim, --input-shape, --input-value, --tensor-shape, --dim-default, --sweep.
absl::StatusOr<bool> TakeShapeFlag(const std::vector<std::string>& args, size_t& i, AnalyzeCommand& command,
                                   std::string* error_out) {
  AnalyzeOptions& options = command.options;
  std::string& error = *error_out;
  if (std::optional<std::string> value = TakeValue(args, i, "--dim", &error)) {
    const size_t equals = value->find('=');
    int64_t dim_value = 0;
    if (equals == std::string::npos || equals == 0 ||
        !absl::SimpleAtoi(value->substr(equals + 1), &dim_value) || dim_value < 0) {
      return UsageError(absl::StrCat("--dim expects NAME=VALUE with VALUE a non-negative integer, got '", *value,
                                     "'"));
    }
    options.dims[value->substr(0, equals)] = dim_value;
    return true;
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
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--input-value", &error)) {
    // The value's type and rank are checked against the input when the model is read.
    const size_t equals = value->find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == value->size()) {
      return UsageError(absl::StrCat("--input-value expects INPUT=V with V a value or a list like 1,2,3, got '",
                                     *value, "'"));
    }
    options.input_values[value->substr(0, equals)] = value->substr(equals + 1);
    return true;
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
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--dim-default", &error)) {
    int64_t dim_value = 0;
    if (!absl::SimpleAtoi(*value, &dim_value) || dim_value < 0) {
      return UsageError(absl::StrCat("--dim-default expects a non-negative integer, got '", *value, "'"));
    }
    options.dim_default = dim_value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--sweep", &error)) {
    command.sweep = ParseSweep(*value);
    if (!command.sweep.has_value()) {
      return UsageError(absl::StrCat("--sweep expects NAME=V1,V2,... with non-negative integers, got '", *value,
                                     "'"));
    }
    return true;
  }
  return false;
}

// Where it runs and what is written: --format, --device, --device-file, --output, --emit-plan,
// --baseline-report, --jobs.
absl::StatusOr<bool> TakeOutputFlag(const std::vector<std::string>& args, size_t& i, AnalyzeCommand& command,
                                    std::string* error_out) {
  ReportRequest& report = command.report;
  BatchRequest& batch = command.batch;
  std::string& error = *error_out;
  if (std::optional<std::string> value = TakeValue(args, i, "--format", &error)) {
    if (!IsReportFormat(*value)) {
      return UsageError(absl::StrCat("--format must be text, json, md or html, got '", *value, "'"));
    }
    report.format = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--device", &error)) {
    command.device_name = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--device-file", &error)) {
    command.device_file = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--output", &error)) {
    if (value->empty()) return UsageError("--output needs a file name");
    report.output_path = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--emit-plan", &error)) {
    if (!absl::EndsWith(*value, ".json") && !absl::EndsWith(*value, ".h")) {
      return UsageError(absl::StrCat("--emit-plan expects a FILE ending in .json or .h, got '", *value, "'"));
    }
    report.plan_path = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--baseline-report", &error)) {
    if (value->empty()) return UsageError("--baseline-report needs a file name");
    report.baseline_report_path = *value;
    return true;
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--jobs", &error)) {
    if (!absl::SimpleAtoi(*value, &batch.jobs) || batch.jobs < 1 || batch.jobs > 256) {
      return UsageError(absl::StrCat("--jobs expects a whole number from 1 to 256, got '", *value, "'"));
    }
    return true;
  }
  return false;
}

// The budgets (--max-peak, --max-arena, --max-weights) and --time-limit.
absl::StatusOr<bool> TakeLimitFlag(const std::vector<std::string>& args, size_t& i, AnalyzeCommand& command,
                                   std::string* error_out) {
  BatchRequest& batch = command.batch;
  AnalyzeOptions& options = command.options;
  std::string& error = *error_out;
  for (auto [flag, limit] : {std::pair{"--max-peak", &batch.budgets.max_peak_bytes},
                             std::pair{"--max-arena", &batch.budgets.max_arena_bytes},
                             std::pair{"--max-weights", &batch.budgets.max_weights_bytes}}) {
    if (std::optional<std::string> value = TakeValue(args, i, flag, &error)) {
      absl::StatusOr<int64_t> bytes = ParseByteSize(*value);
      if (!bytes.ok()) return UsageError(absl::StrCat(flag, ": ", bytes.status().message()));
      *limit = *bytes;
      return true;
    }
  }
  if (std::optional<std::string> value = TakeValue(args, i, "--time-limit", &error)) {
    double seconds = 0;
    if (!absl::SimpleAtod(*value, &seconds) || seconds < 0 || seconds > 86400) {
      return UsageError(absl::StrCat("--time-limit expects seconds between 0 and 86400, got '", *value, "'"));
    }
    options.planner_time_limit = absl::Seconds(seconds);
    return true;
  }
  return false;
}

}  // namespace

const char* AnalyzeUsage() { return kAnalyzeUsage; }

absl::StatusOr<AnalyzeCommand> ParseAnalyzeArgs(const std::vector<std::string>& args) {
  AnalyzeCommand command;
  AnalyzeOptions& options = command.options;  // The struct defaults to the baseline; the command to every mode.
  options.optimize_schedule = true;
  options.alias = true;
  options.inplace = true;
  options.fold_constants = true;
  options.accumulate = true;
  options.qdq = true;
  command.device_name = devices::kDefaultDeviceName;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "-h" || word == "--help") {
      command.help = true;
      return command;
    }
    std::string error;
    bool taken = false;
    for (const auto& take : {&TakeModeFlag, &TakeShapeFlag, &TakeOutputFlag, &TakeLimitFlag}) {
      absl::StatusOr<bool> took = take(args, i, command, &error);
      if (!took.ok()) return took.status();
      if (*took) {
        taken = true;
        break;
      }
    }
    if (taken) continue;
    if (!error.empty()) return UsageError(error);
    if (absl::StartsWith(word, "-") && word != "-") return UsageError(absl::StrCat("unknown option ", word));
    command.models.push_back(word);
  }
  if (command.models.empty()) return UsageError("analyze needs a MODEL.onnx");
  return command;
}

absl::StatusOr<BatchRequest> MakeBatchRequest(const AnalyzeCommand& command) {
  absl::StatusOr<devices::DeviceProfile> profile = command.device_file.empty()
                                                       ? devices::FindDevice(command.device_name)
                                                       : devices::LoadDeviceFile(command.device_file);
  if (!profile.ok()) return profile.status();
  BatchRequest batch = command.batch;
  batch.options = command.options;
  batch.options.device_profile = *std::move(profile);
  batch.sweep = command.sweep;
  return batch;
}

int RunAnalyzeCommand(const std::vector<std::string>& args) {
  absl::StatusOr<AnalyzeCommand> command = ParseAnalyzeArgs(args);
  if (!command.ok()) {
    std::cerr << kProgram << ": " << command.status().message() << " (see `onnx-footprint analyze --help`)\n";
    return kExitBadInput;
  }
  if (command->help) {
    std::cout << kAnalyzeUsage;
    return kExitOk;
  }
  absl::StatusOr<BatchRequest> batch = MakeBatchRequest(*command);
  if (!batch.ok()) {
    std::cerr << kProgram << ": " << batch.status().message() << "\n";
    return kExitBadInput;
  }
  batch->progress = Progress::StderrIsTerminal();
  return AnalyzeAndReport(command->models, *batch, command->report);
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
  if (args[0] == "fit") return RunFitCommand(rest);
  if (args[0] == "devices") return devices::RunDevicesCommand(rest);
  if (args[0] == "plan") return planner::RunPlanCommand(rest);
  if (args[0] == "diff") return RunDiffCommand(rest);
  if (args[0] == "replay") return RunReplayCommand(rest);
  std::cerr << kProgram << ": unknown command '" << args[0] << "' (see `onnx-footprint --help`)\n";
  return kExitBadInput;
}

}  // namespace footprint
