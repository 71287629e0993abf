// `onnx-footprint fit MODEL.onnx (--device NAME | --device-file FILE) [analyze's flags]
//  [--fit-dim NAME]... [--format text|json|md] [--output FILE]`: whether the
// model fits as given and, either way, what would make it fit, each option
// with the figures planned for it (report/fit_report.h).
//
// Usage:
//   absl::StatusOr<FitCommand> command = ParseFitArgs({"model.onnx", "--device", "stm32f407"});
//   absl::StatusOr<FitReport> report = FitModel(ModelPath{.path = "model.onnx"}, *command);
//
// The options, each figured by the full analysis with the user's flags:
// - dim: the largest value of an input dim that fits (each --fit-dim, else
//   each input dim left unbound, else, when the model does not fit, each one
//   bound by --dim), searched over analyses of the loaded model
//   (interpolation on the peak, then bisection) and only reported once the
//   analysis at the value fits and at value + 1 does not. Dims the model ties
//   to it (total = past + sequence, FindDimTies) move with it; other unbound
//   input dims are 1. Never extrapolated.
// - dtype: int8 and fp16 what-ifs of a float model (memory/dtype_what_if.h),
//   planned like the model.
// - tiers: weights in the device's read-only tier (XIP) and what remains in
//   RAM; with several RAM tiers, an order of them that fits when the given
//   one does not.
// - patch: the first high-resolution stage run patch by patch (fit_patch.h,
//   analyzer/patching/), within --max-overhead extra MACs; --emit-model
//   writes that model.
// "Fits" is analyze's exit code: 0 (the device's verdict and every budget)
// with a verdict known; a device with a tier of unknown capacity and no
// budget is a usage error (nothing to fit against).
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_FIT_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_FIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/cli/batch.h"
#include "analyzer/cli/cli.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/report/fit_report.h"

namespace footprint {

struct FitCommand {
  AnalyzeCommand analyze;              // analyze's flags (one model), --format and --output.
  std::vector<std::string> fit_dims;   // --fit-dim NAME, in the order given.
  double max_overhead_percent = 20;    // --max-overhead PCT: extra MACs the patch option may cost.
  std::string emit_model;              // --emit-model OUT.onnx: the patched model; "" for none.
  bool stream_input = false;           // --stream-input: the patch option with the input delivered patch by patch too.
};

// A bad flag is InvalidArgument with the one-line message the CLI prints.
absl::StatusOr<FitCommand> ParseFitArgs(const std::vector<std::string>& args);

// The report of one model; errors are the exit-2 one-line messages (naming
// the file for a model that cannot be read or analyzed).
// `patch`, when given, receives the patch search (its plan for --emit-model).
absl::StatusOr<FitReport> FitModel(const ModelPath& model, const FitCommand& command,
                                   patching::PatchSearch* patch = nullptr);

// `args` are the words after `fit`.
int RunFitCommand(const std::vector<std::string>& args);

// `onnx-footprint fit --help`.
const char* FitUsage();

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_FIT_H_
