#include "analyzer/cli/fit_dim_search.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/cli/fit_figures.h"
#include "analyzer/report/format.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"

namespace footprint {
namespace {

// The largest dim value the search tries: far past any memory a device has
// for a dim that scales a tensor; a dim that still fits there is reported so.
constexpr int64_t kLargestSearched = int64_t{1} << 30;
// Values below the first with a verdict are tried up to this one.
constexpr int64_t kSmallestValueSearched = 4096;
// Values the model cannot take measured below holes, at most, per search.
constexpr int kMaxHoles = 256;

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
    bool contradiction = false;  // The model cannot take this value (IsContradictingBinding).
    int64_t taken = 0;           // The value whose verdict and figures these are: itself, or the one below a hole.
  };
  // The search's state between two analyses.
  struct Bracket {
    int64_t low = 0;                      // Fits.
    std::optional<int64_t> high;          // Does not fit (or has no verdict), when known.
    std::optional<int64_t> previous_low;  // The fitting point before `low`, for a slope above it.
    int step = 0;                         // Next: 0 guess, 1 neighbour, 2 bisect.
    bool last_fit = false;                // Whether the last value measured fitted.
  };

  // Every input dim's value when dim_ = value: the user's --dim, the ties,
  // then --dim-default or 1 for the rest, in input order.
  std::map<std::string, int64_t> BindingsAt(int64_t value) const;
  absl::StatusOr<const Point*> Measure(int64_t value);
  // A value the model cannot take (an FPN's adds at 481): never offered, it
  // carries the verdict and figures of the nearest value below that the
  // model takes, so that the search stays monotone across such holes.
  Point Hole(int64_t value, const absl::Status& status);
  // The activations' limit in bytes, when the budgets or the device say it.
  std::optional<int64_t> ActivationLimit(const MemoryFigures& at) const;
  // 1, or the first power of two with a verdict when smaller values leave
  // tensors unsized (an image too small for the convolutions' windows).
  absl::StatusOr<int64_t> FirstValueWithVerdict();
  // Measures until the bracket closes (high = low + 1) or low is the largest searched.
  absl::Status Narrow(Bracket& bracket);
  // The next value to measure, by the cycle of guess, neighbour and bisection.
  int64_t NextValue(Bracket& bracket) const;
  // Where the activations reach their limit, linear between the nearest
  // points measured; 0 when there is no slope or no limit.
  int64_t GuessAtLimit(Bracket& bracket) const;
  // The option once the bracket is closed at `low`.
  FitOption FittingOption(const Bracket& bracket, int64_t start, const MemoryFigures& given) const;

  const LoadedModel& loaded_;
  const AnalyzeOptions& options_;
  const Budgets& budgets_;
  const InputDims& dims_;
  const std::vector<symbolic::DimTie>& ties_;
  const std::string dim_;
  std::map<int64_t, Point> points_;
  int holes_ = 0;  // Values measured below holes (kMaxHoles).
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
  point.taken = value;
  if (!analysis.ok() && IsContradictingBinding(analysis.status())) {
    point = Hole(value, analysis.status());
  } else if (!analysis.ok()) {
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

DimSearch::Point DimSearch::Hole(int64_t value, const absl::Status& status) {
  Point point{.reason = std::string(status.message()), .contradiction = true, .taken = value};
  // The value where the clashing dims agree, when this dim alone decides them; else one below.
  const std::optional<int64_t> agrees = AgreeingValueBelow(status, dim_);
  const int64_t below = agrees.has_value() && *agrees < value ? *agrees : value - 1;
  if (below < 1 || ++holes_ > kMaxHoles) return point;  // No verdict.
  absl::StatusOr<const Point*> taken = Measure(below);
  if (!taken.ok()) return point;
  point.verdict = (*taken)->verdict;
  point.fits = (*taken)->fits;
  point.memory = (*taken)->memory;
  point.overflow = (*taken)->overflow;
  point.taken = (*taken)->taken;
  return point;
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

absl::StatusOr<int64_t> DimSearch::FirstValueWithVerdict() {
  int64_t start = 1;
  absl::StatusOr<const Point*> first = Measure(start);
  if (!first.ok()) return first.status();
  while (!(*first)->verdict.has_value() && start < kSmallestValueSearched) {
    start *= 2;
    first = Measure(start);
    if (!first.ok()) return first.status();
  }
  return start;
}

int64_t DimSearch::GuessAtLimit(Bracket& bracket) const {
  const MemoryFigures& at_low = points_.at(bracket.low).memory;
  std::optional<double> slope;  // Activation bytes per unit of the dim.
  if (bracket.high.has_value() && !points_.at(*bracket.high).overflow) {
    slope = static_cast<double>(ActivationBytes(points_.at(*bracket.high).memory) - ActivationBytes(at_low)) /
            static_cast<double>(*bracket.high - bracket.low);
  } else if (bracket.previous_low.has_value()) {
    slope = static_cast<double>(ActivationBytes(at_low) - ActivationBytes(points_.at(*bracket.previous_low).memory)) /
            static_cast<double>(bracket.low - *bracket.previous_low);
  }
  const std::optional<int64_t> limit = ActivationLimit(at_low);
  if (!slope.has_value() && !bracket.high.has_value()) {
    bracket.step = 0;  // A second point first, for a slope.
    return bracket.low + 1;
  }
  if (!slope.has_value() || *slope <= 0 || !limit.has_value()) return 0;
  const double steps = std::floor(static_cast<double>(*limit - ActivationBytes(at_low)) / *slope);
  const double guess = static_cast<double>(bracket.low) + std::max(1.0, steps);
  int64_t next = guess >= static_cast<double>(kLargestSearched) ? kLargestSearched : static_cast<int64_t>(guess);
  if (bracket.high.has_value()) next = std::clamp(next, bracket.low + 1, *bracket.high - 1);
  return next;
}

int64_t DimSearch::NextValue(Bracket& bracket) const {
  const auto untried = [&](int64_t v) {
    return v > bracket.low && (!bracket.high.has_value() || v < *bracket.high) && !points_.contains(v);
  };
  int64_t next = 0;
  if (bracket.step == 1) {
    next = bracket.last_fit ? bracket.low + 1 : (bracket.high.has_value() ? *bracket.high - 1 : 0);
    bracket.step = 2;
    if (!untried(next)) next = 0;
  }
  if (next == 0 && bracket.step == 0) {
    bracket.step = 1;
    next = GuessAtLimit(bracket);
    if (!untried(next)) next = 0;
  }
  if (next != 0) return next;
  bracket.step = 0;
  if (bracket.high.has_value()) return bracket.low + (*bracket.high - bracket.low) / 2;
  const bool flat = bracket.previous_low.has_value() && ActivationBytes(points_.at(bracket.low).memory) <=
                                                            ActivationBytes(points_.at(*bracket.previous_low).memory);
  return flat ? kLargestSearched : std::min(kLargestSearched, bracket.low * 2);
}

absl::Status DimSearch::Narrow(Bracket& bracket) {
  while (!bracket.high.has_value() || *bracket.high - bracket.low > 1) {
    if (!bracket.high.has_value() && bracket.low >= kLargestSearched) break;
    const int64_t next = NextValue(bracket);
    absl::StatusOr<const Point*> point = Measure(next);
    if (!point.ok()) return point.status();
    bracket.last_fit = (*point)->fits;
    if (bracket.last_fit) {
      if (next > bracket.low) {
        bracket.previous_low = bracket.low;
        bracket.low = next;
      }
    } else if (!bracket.high.has_value() || next < *bracket.high) {
      bracket.high = next;
    }
  }
  return absl::OkStatus();
}

FitOption DimSearch::FittingOption(const Bracket& bracket, int64_t start, const MemoryFigures& given) const {
  // Below a hole (values the model cannot take), the value the model takes.
  const int64_t low = points_.at(bracket.low).taken;
  FitOption option{.kind = "dim", .dim = dim_};
  option.largest_fitting = low;
  option.fits = true;
  option.bindings = BindingsAt(low);
  SetFigures(points_.at(low).memory, given, option);
  if (low != bracket.low) {  // bracket.low is a hole whose nearest value below is low.
    option.reason = absl::StrCat(low + 1 == bracket.low ? "" : absl::StrCat(low + 1, " to "), bracket.low,
                                 " not offered: ", points_.at(bracket.low).reason);
  } else if (bracket.high.has_value() && points_.at(*bracket.high).contradiction) {
    option.reason = absl::StrCat(*bracket.high, " not offered: ", points_.at(*bracket.high).reason);
  }
  if (bracket.high.has_value()) {
    option.bindings_above = BindingsAt(*bracket.high);
    const Point& high = points_.at(*bracket.high);
    if (!high.verdict.has_value() && !high.contradiction) {
      option.reason = absl::StrCat("at ", *bracket.high, " the verdict is unknown (", high.reason, ")");
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
  if (start != 1) {
    option.reason = absl::StrCat(option.reason, option.reason.empty() ? "" : "; ", "below ", start, " no verdict");
  }
  return option;
}

absl::StatusOr<FitOption> DimSearch::Run(const MemoryFigures& given) {
  absl::StatusOr<int64_t> start = FirstValueWithVerdict();
  if (!start.ok()) return start.status();
  const Point& first = points_.at(*start);
  FitOption option{.kind = "dim", .dim = dim_};
  if (!first.verdict.has_value()) {
    option.reason = absl::StrCat("no verdict for ", dim_, " from 1 to ", *start, " (", first.reason,
                                 "): bind the other input dims with --dim");
    option.description = absl::StrCat(dim_, ": no verdict");
    option.bindings_above = BindingsAt(1);
    return option;
  }
  if (!first.fits) {
    option.largest_fitting = 0;
    option.fits = false;
    option.reason = absl::StrCat("even ", dim_, "=", *start, " does not fit: ", first.reason);
    option.description = absl::StrCat(dim_, ": even ", *start, " does not fit");
    option.bindings_above = BindingsAt(*start);
    if (!first.overflow) SetFigures(first.memory, given, option);
    return option;
  }
  Bracket bracket{.low = *start};
  if (absl::Status narrowed = Narrow(bracket); !narrowed.ok()) return narrowed;
  return FittingOption(bracket, *start, given);
}

}  // namespace

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
      if (name.empty()) continue;
      // A formula ("past + 1") is bound through its symbols, as --dim takes them.
      std::set<std::string> symbols;
      if (std::optional<symbolic::Expr> formula = symbolic::Expr::Parse(name)) formula->CollectSymbols(symbols);
      if (symbols.empty()) symbols.insert(name);
      for (const std::string& symbol : symbols) {
        if (dims.input_of.contains(symbol)) continue;
        dims.names.push_back(symbol);
        dims.input_of.emplace(symbol, input.name());
      }
    }
  }
  return dims;
}

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

absl::StatusOr<FitOption> SearchDim(const LoadedModel& loaded, const AnalyzeOptions& options, const Budgets& budgets,
                                    const InputDims& dims, const std::vector<symbolic::DimTie>& ties,
                                    const std::string& dim, const MemoryFigures& given) {
  return DimSearch(loaded, options, budgets, dims, ties, dim).Run(given);
}

}  // namespace footprint
