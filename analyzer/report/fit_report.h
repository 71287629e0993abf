// `onnx-footprint fit`'s report: whether a model fits a device as given, and
// each way that would make it fit, with the figures planned for it.
//
// Usage:
//   FitReport report = ...;  // cli/fit.h fills it
//   std::cout << RenderFitText(report);  // or RenderFitMarkdown, RenderFitJson
//
// JSON (schema_version 1):
//   {"schema_version": 1, "model": PATH, "device": NAME, "fits": true|false|null,
//    "fits_reason": "...", "peak_bytes", "arena_bytes", "weights_bytes",
//    "complete" (false: some tensor unsized, the figures are lower bounds), "unsized_tensors",
//    "peak_parts": [{"part", "bytes", "known"}] (what the peak sums: weights + arena, or the runtime's parts),
//    "capacity_bytes": [{"tier", "capacity_bytes" (null: unknown), "holds_weights",
//                        "holds_activations"}],
//    "options": [{"kind": "dim"|"dtype"|"tiers"|"patch", "description", "change", "peak_bytes",
//                 "arena_bytes", "weights_bytes", "complete", "fits", "saved_bytes",
//                 dim:   "dim", "largest_fitting", "bindings" {dim: value} (fits),
//                        "bindings_above" {dim: value} (the next value: does not fit),
//                        "reason" (largest_fitting 0 or not found),
//                 dtype: "dtype", "float_ops" {op: nodes}, "quantized_nodes",
//                 tiers: "ram_bytes", "placement" [{"tier", "arena_bytes", "weights_bytes"}],
//                 patch: "segments" [{"first_node", "last_node", "input", "output", "nodes",
//                                     "patches" [rows, cols], "macs_before", "macs_after",
//                                     "output_in_pieces" (only when true: a chain's link)}],
//                        "model_macs", "extra_macs", "extra_macs_percent", "stream_input"}],
//    "notes": ["..."]}
// Options are ranked by saved_bytes (as-given peak - the option's; for
// tiers, the RAM it frees), largest first; options whose figures are lower
// bounds (unsized tensors) follow, as what they save is not known.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_FIT_REPORT_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_FIT_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace footprint {

struct FitTier {
  std::string name;                       // The profile's memory name.
  std::optional<int64_t> capacity_bytes;  // nullopt: the profile does not say.
  bool holds_weights = false;             // From the profile.
  bool holds_activations = false;         // From the profile.
  int64_t arena_bytes = 0;                // Activations planned here (in a tiers option: by it).
  int64_t weights_bytes = 0;              // Weights placed here.
};

struct FitPeakPart {
  std::string part;    // "weights", "arena", "runtime weights", "runtime reserved"...
  int64_t bytes = 0;
  bool known = true;   // false: a sum of sized tensors only, a lower bound.
};

// One segment of a patch option (analyzer/patching/patch_plan.h).
struct FitPatchSegment {
  std::string first_node;    // Its first node.
  std::string last_node;     // The node whose output is assembled whole.
  std::string input;         // The tensor each patch slices (held whole).
  std::vector<std::string> other_inputs;  // More tensors each patch slices (held whole): a neck's stage.
  std::string output;        // The tensor assembled from the patches.
  int64_t nodes = 0;         // Nodes copied once per patch.
  int64_t rows = 1;          // Patches along H.
  int64_t cols = 1;          // Patches along W.
  int64_t macs_before = 0;   // The segment's multiply-accumulates unpatched.
  int64_t macs_after = 0;    // Over all its patches.
  bool output_in_pieces = false;  // Output kept as its patches' pieces for the next segment (never whole).
};

struct FitOption {
  std::string kind;            // "dim", "dtype", "tiers" or "patch".
  std::string description;     // One line, for people.
  std::string change;          // The exact flags or change that get it.
  bool planned = false;        // The figures below are set (null in JSON otherwise).
  int64_t peak_bytes = 0;      // The figures planned with the change.
  int64_t arena_bytes = 0;
  int64_t weights_bytes = 0;   // Resident weights, folded ones included.
  bool complete = true;        // false: some tensor is unsized, the figures above are lower bounds.
  std::optional<bool> fits;    // nullopt: unknown.
  int64_t saved_bytes = 0;     // What it saves against the model as given (ranks the options).
  // kind "dim":
  std::string dim;                          // The searched dim.
  std::optional<int64_t> largest_fitting;   // 0: even 1 does not fit; nullopt: no verdict (see reason).
  std::map<std::string, int64_t> bindings;        // Every input dim bound at largest_fitting.
  std::map<std::string, int64_t> bindings_above;  // The same at largest_fitting + 1 (does not fit).
  std::string reason;                       // Why largest_fitting is 0 or missing; "" otherwise.
  // kind "dtype":
  std::string dtype;                        // "int8" or "fp16".
  std::map<std::string, int64_t> float_ops;  // Ops that stay float -> nodes.
  int64_t quantized_nodes = 0;              // Nodes on the low-precision tensors.
  // kind "tiers":
  int64_t ram_bytes = 0;                    // Held in the tiers that hold activations.
  std::vector<FitTier> placement;           // Per tier, as the option places it.
  // kind "patch":
  std::vector<FitPatchSegment> segments;    // In the order they run.
  int64_t model_macs = 0;                   // The whole model's MACs unpatched.
  int64_t extra_macs = 0;                   // What the patches recompute.
  double extra_macs_percent = 0;            // 100 x extra_macs / model_macs.
  bool stream_input = false;                // The graph input delivered patch by patch (--stream-input), not held whole.
};

struct FitReport {
  std::string model;                 // The path as given.
  std::string device;                // The profile's name.
  std::optional<bool> fits;          // As given; nullopt: unknown (unsized tensors).
  std::string fits_reason;           // Why not (or why unknown); "" when it fits.
  int64_t peak_bytes = 0;            // As given.
  int64_t arena_bytes = 0;
  int64_t weights_bytes = 0;         // Resident weights, folded ones included.
  bool complete = true;              // false: some tensor is unsized, the figures are lower bounds.
  int64_t unsized_tensors = 0;       // How many.
  std::vector<FitPeakPart> peak_parts;  // What peak_bytes sums ("weights", "arena", or the runtime's parts).
  std::vector<FitTier> tiers;        // The device's tiers, as planned for the model as given.
  std::vector<FitOption> options;    // Ranked by saved_bytes, largest first.
  std::vector<std::string> notes;    // Options not figured, and why.
  int exit_code = 0;                 // 0 fits or some option does; 1 none does.
};

std::string RenderFitJson(const FitReport& report);
std::string RenderFitText(const FitReport& report);
std::string RenderFitMarkdown(const FitReport& report);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_FIT_REPORT_H_
