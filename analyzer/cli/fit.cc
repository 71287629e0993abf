#include "analyzer/cli/fit.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/cli/output_file.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze.h"
#include "analyzer/memory/dtype_what_if.h"
#include "analyzer/memory/tier_options.h"
#include "analyzer/report/format.h"
#include "analyzer/shapes/dim_ties.h"
#include "analyzer/shapes/shape_engine.h"
#include "devices/device_catalog.h"

namespace footprint {
namespace {

constexpr const char* kProgram = "onnx-footprint";
// The largest dim value the search tries: far past any memory a device has
// for a dim that scales a tensor; a dim that still fits there is reported so.
constexpr int64_t kLargestSearched = int64_t{1} << 30;
// Values below the first with a verdict are tried up to this one.
constexpr int64_t kSmallestValueSearched = 4096;
// At most this many orders of the RAM tiers are tried (4 tiers: all of them).
constexpr int kMaxTierOrders = 24;

constexpr const char* kFitUsage = R"(Usage: onnx-footprint fit MODEL.onnx (--device NAME | --device-file FILE) [analyze's flags]
                          [--fit-dim NAME]... [--format text|json|md] [--output FILE]

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
"Fits" means what analyze's exit code 0 means (the device's verdict and every --max-* budget).

Options:
  --fit-dim NAME       Search this input dim (repeatable).
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

// The figures of one analysis, and analyze's verdict on them.
struct Verdict {
  std::optional<bool> fits;  // nullopt: unknown (unsized tensors, or no capacity and no budget).
  std::string reason;        // Why not, or why unknown; "" when it fits.
};

Verdict VerdictOf(const Analysis& analysis, const Budgets& budgets) {
  for (const BudgetCheck& check : CheckBudgets(analysis.memory, budgets)) {
    if (!check.ok) return {false, BudgetViolation(check)};
  }
  if (analysis.fits.has_value() && !*analysis.fits) return {false, analysis.fits_reason};
  if (!analysis.memory.complete) {
    return {std::nullopt, absl::StrCat(analysis.memory.unsized_tensors, " tensors have no known size")};
  }
  if (analysis.fits.has_value() || !budgets.empty()) return {true, ""};
  return {std::nullopt, analysis.fits_reason};
}

int64_t ResidentWeights(const MemoryFigures& memory) { return memory.weights_bytes + memory.folded_weights_bytes; }

// What the activations take: the peak without the resident weights.
int64_t ActivationBytes(const MemoryFigures& memory) { return memory.peak_bytes - ResidentWeights(memory); }

std::vector<FitTier> TiersOf(const Analysis& analysis) {
  std::vector<FitTier> tiers;
  for (const TierSummary& tier : analysis.tiers) {
    tiers.push_back(FitTier{.name = tier.name,
                            .capacity_bytes = tier.capacity_bytes,
                            .holds_weights = tier.holds_weights,
                            .holds_activations = tier.holds_activations,
                            .arena_bytes = tier.arena_bytes,
                            .weights_bytes = tier.weights_bytes});
  }
  return tiers;
}

// Bytes in the tiers that hold activations (RAM): their arenas and the weights placed there.
int64_t RamBytes(const Analysis& analysis) {
  int64_t bytes = 0;
  for (const TierSummary& tier : analysis.tiers) {
    if (tier.holds_activations) bytes += tier.arena_bytes + tier.weights_bytes;
  }
  return bytes;
}

void SetFigures(const MemoryFigures& memory, const MemoryFigures& given, FitOption& option) {
  option.planned = true;
  option.peak_bytes = memory.peak_bytes;
  option.arena_bytes = memory.arena_bytes;
  option.weights_bytes = ResidentWeights(memory);
  option.saved_bytes = given.peak_bytes - memory.peak_bytes;
}

// --- kind "dim" --------------------------------------------------------------

// The input dims of the main graph by name, in input order: dim_params, and
// <input>_dim<k> for a dim with neither value nor name.
struct InputDims {
  std::vector<std::string> names;               // In order, each once.
  std::map<std::string, std::string> input_of;  // Name -> the (first) input holding it.
};

InputDims InputDimsOf(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& initializer : model.graph().initializer()) initializers.insert(initializer.name());
  InputDims dims;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (initializers.contains(input.name()) || !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape()) {
      continue;
    }
    int k = 0;
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      const std::string name = dim.has_dim_param() && !dim.dim_param().empty() ? dim.dim_param()
                               : dim.has_dim_value()                           ? std::string()
                                                                               : absl::StrCat(input.name(), "_dim", k);
      ++k;
      if (name.empty() || dims.input_of.contains(name)) continue;
      dims.names.push_back(name);
      dims.input_of.emplace(name, input.name());
    }
  }
  return dims;
}

// The dims the model ties together, from our engine's run on the model with
// no dim bound (the user's whole input shapes and values kept). Empty when
// the engine cannot run: the search then binds each dim on its own.
std::vector<symbolic::DimTie> TiesOf(const onnx::ModelProto& source, const AnalyzeOptions& options) {
  try {
    onnx::ModelProto model = source;
    if (!symbolic::ApplyInputBindings({.input_shapes = options.input_shapes, .input_values = options.input_values},
                                      model)
             .ok()) {
      return {};
    }
    absl::StatusOr<symbolic::InputValues> values = symbolic::ParseInputValues(options.input_values, model);
    if (!values.ok()) return {};
    // ONNX's per-node functions can crash on odd models (the analysis tries
    // them in a child first); the ties come from our own functions only.
    absl::StatusOr<symbolic::ShapeTables> tables =
        symbolic::InferSymbolicShapes(model, options.tensor_shapes, {}, /*onnx_fallback=*/false, *values);
    if (!tables.ok()) return {};
    return symbolic::FindDimTies(model, *tables);
  } catch (const std::exception&) {  // ONNX throws.
    return {};
  }
}

class DimSearch {
 public:
  DimSearch(const LoadedModel& loaded, const AnalyzeOptions& options, const Budgets& budgets, const InputDims& dims,
            const std::vector<symbolic::DimTie>& ties, std::string dim)
      : loaded_(loaded), options_(options), budgets_(budgets), dims_(dims), ties_(ties), dim_(std::move(dim)) {}

  absl::StatusOr<FitOption> Run(const MemoryFigures& given);

 private:
  struct Point {
    std::optional<bool> verdict;  // nullopt: unknown (unsized tensors at these values).
    bool fits = false;            // verdict == true.
    std::string reason;      // Why not, when it does not fit.
    MemoryFigures memory;    // Its figures (unset after an overflow).
    bool overflow = false;   // Sizes past 64 bits: does not fit.
  };

  // Every input dim's value when dim_ = value: the user's --dim, the ties,
  // then --dim-default or 1 for the rest, in input order.
  std::map<std::string, int64_t> BindingsAt(int64_t value) const;
  absl::StatusOr<const Point*> Measure(int64_t value);
  // The activations' limit in bytes, when the budgets or the device say it.
  std::optional<int64_t> ActivationLimit(const MemoryFigures& at) const;

  const LoadedModel& loaded_;
  const AnalyzeOptions& options_;
  const Budgets& budgets_;
  const InputDims& dims_;
  const std::vector<symbolic::DimTie>& ties_;
  const std::string dim_;
  std::map<int64_t, Point> points_;
  std::optional<std::vector<TierSummary>> tiers_;  // Of the first analysis: the device's limits.
};

std::map<std::string, int64_t> DimSearch::BindingsAt(int64_t value) const {
  std::map<std::string, int64_t> bound;
  for (const std::string& name : dims_.names) {
    if (name == dim_) continue;
    auto given = options_.dims.find(name);
    if (given != options_.dims.end()) bound[name] = given->second;
  }
  bound[dim_] = value;
  auto free_dim = [&](const std::string& name) {
    if (bound.contains(name)) return false;
    auto input = dims_.input_of.find(name);
    return input == dims_.input_of.end() ||
           (!options_.input_shapes.contains(input->second) && !options_.input_values.contains(input->second));
  };
  const auto apply_ties = [&] {
    for (bool changed = true; changed;) {
      changed = false;
      for (const symbolic::DimTie& tie : ties_) {
        std::set<std::string> symbols;
        tie.equals.CollectSymbols(symbols);
        symbolic::SymbolValues known(bound.begin(), bound.end());
        if (free_dim(tie.dim)) {
          if (std::optional<int64_t> v = tie.equals.Evaluate(known); v.has_value() && *v >= 0) {
            bound[tie.dim] = *v;
            changed = true;
          }
          continue;
        }
        if (!bound.contains(tie.dim)) continue;
        // The tied dim is bound: solve for the one free symbol of a formula
        // linear in it with coefficient 1 (total = past + seq -> past).
        std::vector<std::string> unknown;
        for (const std::string& s : symbols) {
          if (!bound.contains(s)) unknown.push_back(s);
        }
        if (unknown.size() != 1 || !free_dim(unknown[0])) continue;
        const symbolic::Expr rest = tie.equals.Substitute(known);
        std::optional<int64_t> at0 = rest.Substitute({{unknown[0], 0}}).AsConstant();
        if (!at0.has_value() || rest != symbolic::Expr::Symbol(unknown[0]) + symbolic::Expr(*at0)) continue;
        if (bound[tie.dim] - *at0 < 0) continue;
        bound[unknown[0]] = bound[tie.dim] - *at0;
        changed = true;
      }
    }
  };
  apply_ties();
  // The dims in no tie first, then those a tie's formula reads (a sequence
  // length), then the tied ones (a total length), so that a tied dim
  // follows from the others, or the others from it, rather than
  // contradicting them.
  std::map<std::string, int> rank;  // 0: in no tie; 1: in a formula; 2: tied.
  for (const symbolic::DimTie& tie : ties_) {
    std::set<std::string> symbols;
    tie.equals.CollectSymbols(symbols);
    for (const std::string& s : symbols) rank[s] = std::max(rank[s], 1);
    rank[tie.dim] = 2;
  }
  for (int pass = 0; pass <= 2; ++pass) {
    for (const std::string& name : dims_.names) {
      if (!free_dim(name) || (rank.contains(name) ? rank.at(name) : 0) != pass) continue;
      bound[name] = options_.dim_default.value_or(1);
      apply_ties();
    }
  }
  // Dims an --input-shape or --input-value sets stay theirs.
  for (auto it = bound.begin(); it != bound.end();) {
    auto input = dims_.input_of.find(it->first);
    const bool set_by_input = input != dims_.input_of.end() && (options_.input_shapes.contains(input->second) ||
                                                                 options_.input_values.contains(input->second));
    it = set_by_input ? bound.erase(it) : std::next(it);
  }
  return bound;
}

absl::StatusOr<const DimSearch::Point*> DimSearch::Measure(int64_t value) {
  auto found = points_.find(value);
  if (found != points_.end()) return &found->second;
  AnalyzeOptions at = options_;
  for (const auto& [name, bound] : BindingsAt(value)) at.dims[name] = bound;
  absl::StatusOr<Analysis> analysis = AnalyzeModel(loaded_, at);
  Point point;
  if (!analysis.ok()) {
    if (analysis.status().code() != absl::StatusCode::kOutOfRange) {
      return absl::Status(analysis.status().code(),
                          absl::StrCat("--fit-dim ", dim_, " at ", value, ": ", analysis.status().message()));
    }
    point.overflow = true;
    point.reason = std::string(analysis.status().message());
  } else {
    const Verdict verdict = VerdictOf(*analysis, budgets_);
    point.verdict = verdict.fits;
    point.fits = verdict.fits == true;
    point.reason = verdict.reason;
    point.memory = analysis->memory;
    if (!tiers_.has_value()) tiers_ = analysis->tiers;
  }
  return &points_.emplace(value, std::move(point)).first->second;
}

std::optional<int64_t> DimSearch::ActivationLimit(const MemoryFigures& at) const {
  std::optional<int64_t> limit;
  auto lower = [&limit](int64_t bytes) { limit = limit.has_value() ? std::min(*limit, bytes) : bytes; };
  if (budgets_.max_peak_bytes.has_value()) lower(*budgets_.max_peak_bytes - ResidentWeights(at));
  if (budgets_.max_arena_bytes.has_value()) lower(*budgets_.max_arena_bytes + ActivationBytes(at) - at.arena_bytes);
  if (tiers_.has_value()) {
    int64_t room = 0;
    bool known = false;
    for (const TierSummary& tier : *tiers_) {
      if (!tier.holds_activations) continue;
      if (!tier.capacity_bytes.has_value()) return limit;
      room += std::max<int64_t>(0, tier.arena_limit_bytes.value_or(*tier.capacity_bytes - tier.weights_bytes));
      known = true;
    }
    if (known) lower(room + ActivationBytes(at) - at.arena_bytes);
  }
  return limit;
}

absl::StatusOr<FitOption> DimSearch::Run(const MemoryFigures& given) {
  FitOption option{.kind = "dim", .dim = dim_};
  // The smallest value searched: 1, or the first power of two with a
  // verdict when smaller values leave tensors unsized (an image too small
  // for the convolutions' windows).
  int64_t start = 1;
  absl::StatusOr<const Point*> first = Measure(start);
  if (!first.ok()) return first.status();
  while (!(*first)->verdict.has_value() && start < kSmallestValueSearched) {
    start *= 2;
    first = Measure(start);
    if (!first.ok()) return first.status();
  }
  if (!(*first)->verdict.has_value()) {
    option.reason = absl::StrCat("no verdict for ", dim_, " from 1 to ", start, " (", (*first)->reason,
                                 "): bind the other input dims with --dim");
    option.description = absl::StrCat(dim_, ": no verdict");
    option.bindings_above = BindingsAt(1);
    return option;
  }
  if (!(*first)->fits) {
    option.largest_fitting = 0;
    option.fits = false;
    option.reason = absl::StrCat("even ", dim_, "=", start, " does not fit: ", (*first)->reason);
    option.description = absl::StrCat(dim_, ": even ", start, " does not fit");
    option.bindings_above = BindingsAt(start);
    if (!(*first)->overflow) SetFigures((*first)->memory, given, option);
    return option;
  }
  const std::string smaller = start == 1 ? "" : absl::StrCat("; below ", start, " no verdict");
  // The search: `low` fits; `high` (when known) does not. It cycles
  // through three steps: a guess where the activations reach their limit
  // (the budgets' or the device's), assuming they grow linearly between the
  // nearest points measured; the guess's neighbour (after a good guess, the
  // bracket closes there); a bisection (or, with no bracket yet, a
  // doubling), so that a poor guess still costs at most two steps per halving.
  int64_t low = start;
  std::optional<int64_t> high;
  std::optional<int64_t> previous_low;  // The fitting point before `low`, for a slope above it.
  int step = 0;                         // 0 guess, 1 neighbour, 2 bisect.
  bool last_fit = false;
  while (!high.has_value() || *high - low > 1) {
    if (!high.has_value() && low >= kLargestSearched) break;
    const auto untried = [&](int64_t v) { return v > low && (!high.has_value() || v < *high) && !points_.contains(v); };
    int64_t next = 0;
    if (step == 1) {
      next = last_fit ? low + 1 : (high.has_value() ? *high - 1 : 0);
      step = 2;
      if (!untried(next)) next = 0;
    }
    if (next == 0 && step == 0) {
      step = 1;
      const MemoryFigures& at_low = points_.at(low).memory;
      std::optional<double> slope;  // Activation bytes per unit of the dim.
      if (high.has_value() && !points_.at(*high).overflow) {
        slope = static_cast<double>(ActivationBytes(points_.at(*high).memory) - ActivationBytes(at_low)) /
                static_cast<double>(*high - low);
      } else if (previous_low.has_value()) {
        slope = static_cast<double>(ActivationBytes(at_low) - ActivationBytes(points_.at(*previous_low).memory)) /
                static_cast<double>(low - *previous_low);
      }
      const std::optional<int64_t> limit = ActivationLimit(at_low);
      if (!slope.has_value() && !high.has_value()) {
        next = low + 1;  // A second point, for a slope.
        step = 0;
      } else if (slope.has_value() && *slope > 0 && limit.has_value()) {
        const double steps = std::floor(static_cast<double>(*limit - ActivationBytes(at_low)) / *slope);
        const double guess = static_cast<double>(low) + std::max(1.0, steps);
        next = guess >= static_cast<double>(kLargestSearched) ? kLargestSearched : static_cast<int64_t>(guess);
        if (high.has_value()) next = std::clamp(next, low + 1, *high - 1);
      }
      if (!untried(next)) next = 0;
    }
    if (next == 0) {
      step = 0;
      if (high.has_value()) {
        next = low + (*high - low) / 2;
      } else {
        const bool flat = previous_low.has_value() &&
                          ActivationBytes(points_.at(low).memory) <= ActivationBytes(points_.at(*previous_low).memory);
        next = flat ? kLargestSearched : std::min(kLargestSearched, low * 2);
      }
    }
    absl::StatusOr<const Point*> point = Measure(next);
    if (!point.ok()) return point.status();
    last_fit = (*point)->fits;
    if (last_fit) {
      if (next > low) {
        previous_low = low;
        low = next;
      }
    } else if (!high.has_value() || next < *high) {
      high = next;
    }
  }
  option.largest_fitting = low;
  option.fits = true;
  option.bindings = BindingsAt(low);
  SetFigures(points_.at(low).memory, given, option);
  if (high.has_value()) {
    option.bindings_above = BindingsAt(*high);
    if (!points_.at(*high).verdict.has_value()) {
      option.reason = absl::StrCat("at ", *high, " the verdict is unknown (", points_.at(*high).reason, ")");
    }
  } else {
    option.reason = absl::StrCat("still fits at ", low, ", the largest value searched");
  }
  std::vector<std::string> flags, others;
  for (const auto& [name, value] : option.bindings) {
    auto given_value = options_.dims.find(name);
    if (given_value != options_.dims.end() && given_value->second == value && name != dim_) continue;
    flags.push_back(absl::StrCat("--dim ", name, "=", value));
    if (name != dim_) others.push_back(absl::StrCat(name, "=", value));
  }
  option.change = absl::StrJoin(flags, " ");
  option.description = absl::StrCat(dim_, " up to ", WithThousands(low),
                                     others.empty() ? "" : absl::StrCat(" (", absl::StrJoin(others, ", "), ")"));
  if (!smaller.empty()) option.reason = absl::StrCat(option.reason, option.reason.empty() ? "" : "; ", smaller.substr(2));
  return option;
}

// --- kind "dtype" ------------------------------------------------------------

absl::StatusOr<FitOption> DtypeOption(const LoadedModel& loaded, const Analysis& given, const AnalyzeOptions& options,
                                      const Budgets& budgets, WhatIfDtype dtype) {
  absl::StatusOr<DtypeWhatIf> what_if = MakeDtypeWhatIf(loaded, given, dtype);
  if (!what_if.ok()) return what_if.status();
  absl::StatusOr<Analysis> analysis = AnalyzeModel(what_if->model, options);
  if (!analysis.ok()) return analysis.status();
  FitOption option{.kind = "dtype", .dtype = WhatIfDtypeName(dtype)};
  SetFigures(analysis->memory, given.memory, option);
  option.fits = VerdictOf(*analysis, budgets).fits;
  option.float_ops = what_if->float_ops;
  option.quantized_nodes = what_if->quantized_nodes;
  std::vector<std::string> stays;
  for (const auto& [op, nodes] : what_if->float_ops) stays.push_back(absl::StrCat(op, " x", nodes));
  option.description =
      absl::StrCat(dtype == WhatIfDtype::kInt8 ? "int8" : "fp16", " weights and activations",
                   stays.empty() ? "" : absl::StrCat(" (float: ", absl::StrJoin(stays, ", "), ")"));
  option.change = dtype == WhatIfDtype::kInt8
                      ? "quantize to int8 QDQ, per-channel weights (onnxruntime.quantization.quantize_static)"
                      : "convert to fp16 (onnxconverter_common.float16.convert_float_to_float16)";
  return option;
}

// --- kind "tiers" ------------------------------------------------------------

std::string TierNames(const std::vector<std::string>& names) { return absl::StrJoin(names, ", "); }

void AddTierOptions(const Analysis& given, const AnalyzeOptions& options, const Budgets& budgets,
                    const Verdict& given_verdict, FitReport& report) {
  if (!options.device_profile.has_value()) return;
  const devices::DeviceProfile& profile = *options.device_profile;
  std::vector<std::string> read_only, ram_with_weights;
  std::vector<int> activation_tiers;
  for (int t = 0; t < profile.memory_size(); ++t) {
    const devices::Memory& memory = profile.memory(t);
    if (memory.holds_weights() && !memory.holds_activations()) read_only.push_back(memory.name());
    if (memory.holds_activations()) activation_tiers.push_back(t);
    if (memory.holds_weights() && memory.holds_activations()) ram_with_weights.push_back(memory.name());
  }
  devices::DeviceProfile base = profile;
  Verdict base_verdict = given_verdict;
  if (!read_only.empty()) {
    for (devices::Memory& memory : *base.mutable_memory()) {
      if (memory.holds_activations()) memory.set_holds_weights(false);
    }
    absl::StatusOr<Analysis> xip = ReplanTiers(given, base, options.planner_time_limit);
    if (!xip.ok()) {
      report.notes.push_back(absl::StrCat("tiers: ", xip.status().message()));
      return;
    }
    FitOption option{.kind = "tiers"};
    SetFigures(xip->memory, given.memory, option);
    option.ram_bytes = RamBytes(*xip);
    option.saved_bytes = RamBytes(given) - option.ram_bytes;
    base_verdict = VerdictOf(*xip, budgets);
    option.fits = base_verdict.fits;
    option.placement = TiersOf(*xip);
    option.description = absl::StrCat("weights in ", TierNames(read_only), " (XIP): RAM holds ",
                                      HumanBytes(option.ram_bytes));
    option.change = ram_with_weights.empty()
                        ? "as given (the device keeps weights in read-only memory)"
                        : absl::StrCat("holds_weights: false on ", TierNames(ram_with_weights), " (--device-file)");
    report.options.push_back(std::move(option));
  }
  if (activation_tiers.size() < 2 || base_verdict.fits != false) return;
  // Other orders of the RAM tiers: the tier planner fills them in order.
  std::vector<int> order = activation_tiers;
  const size_t permuted = std::min<size_t>(order.size(), 4);
  int tried = 0;
  while (std::next_permutation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(permuted)) &&
         tried < kMaxTierOrders) {
    ++tried;
    devices::DeviceProfile reordered = base;
    for (size_t i = 0; i < activation_tiers.size(); ++i) {
      *reordered.mutable_memory(activation_tiers[i]) = base.memory(order[i]);
    }
    absl::StatusOr<Analysis> analysis = ReplanTiers(given, reordered, absl::ZeroDuration());
    if (!analysis.ok()) continue;
    const Verdict verdict = VerdictOf(*analysis, budgets);
    if (verdict.fits != true) continue;
    std::vector<std::string> names;
    for (int t : order) names.push_back(profile.memory(t).name());
    FitOption option{.kind = "tiers"};
    SetFigures(analysis->memory, given.memory, option);
    option.ram_bytes = RamBytes(*analysis);
    option.saved_bytes = RamBytes(given) - option.ram_bytes;
    option.fits = true;
    option.placement = TiersOf(*analysis);
    option.description = absl::StrCat("activations in ", TierNames(names), ", in that order",
                                      read_only.empty() ? "" : " (weights in read-only memory)");
    option.change = absl::StrCat("list the memory tiers as ", TierNames(names), " (--device-file)");
    report.options.push_back(std::move(option));
    return;
  }
  report.notes.push_back(absl::StrCat("tiers: no order of the ", activation_tiers.size(),
                                      " RAM tiers holds the activations"));
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
      command.fit_dims.push_back(name);
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
  absl::StatusOr<AnalyzeCommand> analyze = ParseAnalyzeArgs(rest);
  if (!analyze.ok()) {
    if (absl::StrContains(analyze.status().message(), "analyze needs a MODEL.onnx")) {
      return UsageError("fit needs a MODEL.onnx");
    }
    return analyze.status();
  }
  command.analyze = *std::move(analyze);
  if (command.analyze.models.size() != 1) {
    return UsageError(absl::StrCat("fit takes one MODEL.onnx, got ", command.analyze.models.size()));
  }
  if (!device_given) return UsageError("fit needs --device NAME or --device-file FILE");
  return command;
}

absl::StatusOr<FitReport> FitModel(const ModelPath& model, const FitCommand& command) {
  absl::StatusOr<BatchRequest> request = MakeBatchRequest(command.analyze);
  if (!request.ok()) return request.status();
  const AnalyzeOptions& options = request->options;
  const Budgets& budgets = request->budgets;
  if (budgets.empty()) {
    for (const devices::Memory& memory : options.device_profile->memory()) {
      if ((memory.holds_activations() || memory.holds_weights()) && !memory.has_capacity_bytes()) {
        return UsageError(absl::StrCat("fit: device '", options.device_profile->name(), "' does not say the capacity of '",
                                       memory.name(),
                                       "': give a device with capacities or a budget (--max-peak SIZE)"));
      }
    }
  }
  std::error_code error;
  if (!model.bytes.has_value() && std::filesystem::is_directory(model.path, error)) {
    return UsageError(absl::StrCat(model.path, ": fit takes a model file, not a directory"));
  }
  absl::StatusOr<LoadedModel> loaded = Load(model);
  if (!loaded.ok()) return loaded.status();
  const InputDims dims = InputDimsOf(loaded->model);
  for (const std::string& name : command.fit_dims) {
    auto input = dims.input_of.find(name);
    if (input == dims.input_of.end()) {
      return UsageError(absl::StrCat(model.path, ": --fit-dim ", name, ": the model has no input dim named '", name,
                                     "'", dims.names.empty() ? "" : absl::StrCat(" (its dims: ", absl::StrJoin(dims.names, ", "), ")")));
    }
    if (options.input_shapes.contains(input->second) || options.input_values.contains(input->second)) {
      return UsageError(absl::StrCat(model.path, ": --fit-dim ", name, ": input '", input->second,
                                     "' has its shape given by --input-shape or --input-value"));
    }
  }
  absl::StatusOr<Analysis> given = AnalyzeModel(*loaded, options);
  if (!given.ok()) return absl::Status(given.status().code(), absl::StrCat(model.path, ": ", given.status().message()));

  FitReport report{.model = model.path, .device = given->device.name};
  const Verdict verdict = VerdictOf(*given, budgets);
  report.fits = verdict.fits;
  report.fits_reason = verdict.reason;
  report.peak_bytes = given->memory.peak_bytes;
  report.arena_bytes = given->memory.arena_bytes;
  report.weights_bytes = ResidentWeights(given->memory);
  report.tiers = TiersOf(*given);

  // kind "dim": the dims asked for, else those left unbound.
  std::vector<std::string> searched = command.fit_dims;
  if (searched.empty() && !options.dim_default.has_value()) {
    for (const std::string& name : dims.names) {
      const std::string& input = dims.input_of.at(name);
      if (!options.dims.contains(name) && !options.input_shapes.contains(input) && !options.input_values.contains(input)) {
        searched.push_back(name);
      }
    }
    // Every input dim bound and no fit: the --dim bindings are what to change.
    if (searched.empty() && report.fits != true) {
      for (const std::string& name : dims.names) {
        if (options.dims.contains(name)) searched.push_back(name);
      }
    }
    if (searched.empty()) report.notes.push_back("dim: every input dim is bound; name one with --fit-dim NAME");
  }
  if (!searched.empty()) {
    const std::vector<symbolic::DimTie> ties = TiesOf(loaded->model, options);
    for (const std::string& name : searched) {
      DimSearch search(*loaded, options, budgets, dims, ties, name);
      absl::StatusOr<FitOption> option = search.Run(given->memory);
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
  // kind "dtype".
  for (WhatIfDtype dtype : {WhatIfDtype::kInt8, WhatIfDtype::kFp16}) {
    absl::StatusOr<FitOption> option = DtypeOption(*loaded, *given, options, budgets, dtype);
    if (option.ok()) {
      report.options.push_back(*std::move(option));
    } else {
      report.notes.push_back(absl::StrCat(WhatIfDtypeName(dtype), ": ", option.status().message()));
    }
  }
  // kind "tiers".
  AddTierOptions(*given, options, budgets, verdict, report);

  std::stable_sort(report.options.begin(), report.options.end(),
                   [](const FitOption& a, const FitOption& b) { return a.saved_bytes > b.saved_bytes; });
  bool any_fits = report.fits == true;
  for (const FitOption& option : report.options) any_fits = any_fits || option.fits == true;
  report.exit_code = any_fits ? kExitOk : kExitNotWithinLimits;
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
  absl::StatusOr<FitReport> report = FitModel(ModelPath{.path = command->analyze.models[0]}, *command);
  if (!report.ok()) return Fail(std::string(report.status().message()));
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
