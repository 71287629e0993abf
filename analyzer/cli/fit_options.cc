#include "analyzer/cli/fit_options.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/memory/tier_options.h"
#include "analyzer/report/format.h"

namespace footprint {
namespace {

// At most this many orders of the RAM tiers are tried (4 tiers: all of them).
constexpr int kMaxTierOrders = 24;

std::string TierNames(const std::vector<std::string>& names) { return absl::StrJoin(names, ", "); }

// The device's tiers by role.
struct TierRoles {
  std::vector<std::string> read_only;         // Hold weights, no activations (flash).
  std::vector<std::string> ram_with_weights;  // Hold both.
  std::vector<int> activation_tiers;          // Indexes of the tiers that hold activations.
};

TierRoles RolesOf(const devices::DeviceProfile& profile) {
  TierRoles roles;
  for (int t = 0; t < profile.memory_size(); ++t) {
    const devices::Memory& memory = profile.memory(t);
    if (memory.holds_weights() && !memory.holds_activations()) roles.read_only.push_back(memory.name());
    if (memory.holds_activations()) roles.activation_tiers.push_back(t);
    if (memory.holds_weights() && memory.holds_activations()) roles.ram_with_weights.push_back(memory.name());
  }
  return roles;
}

// Weights in the read-only tiers: `xip` is the device with no RAM tier
// holding weights; its verdict replaces the given one for what follows.
absl::Status AddXipOption(const Analysis& given, const AnalyzeOptions& options, const Budgets& budgets,
                          const TierRoles& roles, const devices::DeviceProfile& xip, Verdict& verdict,
                          FitReport& report) {
  absl::StatusOr<Analysis> analysis = ReplanTiers(given, xip, options.planner_time_limit);
  if (!analysis.ok()) return analysis.status();
  FitOption option{.kind = "tiers"};
  SetFigures(analysis->memory, given.memory, option);
  option.ram_bytes = RamBytes(*analysis);
  option.saved_bytes = RamBytes(given) - option.ram_bytes;
  verdict = VerdictOf(*analysis, budgets);
  option.fits = verdict.fits;
  option.placement = FitTiersOf(*analysis);
  option.description =
      absl::StrCat("weights in ", TierNames(roles.read_only), " (XIP): RAM holds ", HumanBytes(option.ram_bytes));
  option.change = absl::StrCat("holds_weights: false on ", TierNames(roles.ram_with_weights), " (--device-file)");
  report.options.push_back(std::move(option));
  return absl::OkStatus();
}

// Other orders of the RAM tiers (the tier planner fills them in order): the
// first that fits, or a note that none does.
void AddReorderedTiersOption(const Analysis& given, const Budgets& budgets, const TierRoles& roles,
                             const devices::DeviceProfile& profile, const devices::DeviceProfile& base,
                             FitReport& report) {
  std::vector<int> order = roles.activation_tiers;
  const size_t permuted = std::min<size_t>(order.size(), 4);
  int tried = 0;
  while (std::next_permutation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(permuted)) &&
         tried < kMaxTierOrders) {
    ++tried;
    devices::DeviceProfile reordered = base;
    for (size_t i = 0; i < roles.activation_tiers.size(); ++i) {
      *reordered.mutable_memory(roles.activation_tiers[i]) = base.memory(order[i]);
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
    option.placement = FitTiersOf(*analysis);
    option.description = absl::StrCat("activations in ", TierNames(names), ", in that order",
                                      roles.read_only.empty() ? "" : " (weights in read-only memory)");
    option.change = absl::StrCat("list the memory tiers as ", TierNames(names), " (--device-file)");
    report.options.push_back(std::move(option));
    return;
  }
  report.notes.push_back(
      absl::StrCat("tiers: no order of the ", roles.activation_tiers.size(), " RAM tiers holds the activations"));
}

}  // namespace

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

void AddTierOptions(const Analysis& given, const AnalyzeOptions& options, const Budgets& budgets,
                    const Verdict& given_verdict, FitReport& report) {
  if (!options.device_profile.has_value()) return;
  const devices::DeviceProfile& profile = *options.device_profile;
  const TierRoles roles = RolesOf(profile);
  devices::DeviceProfile base = profile;
  Verdict base_verdict = given_verdict;
  // Weights in read-only memory: an option only where some RAM tier holds
  // weights as given (else it is the given placement again).
  if (!roles.read_only.empty() && !roles.ram_with_weights.empty()) {
    for (devices::Memory& memory : *base.mutable_memory()) {
      if (memory.holds_activations()) memory.set_holds_weights(false);
    }
    if (absl::Status added = AddXipOption(given, options, budgets, roles, base, base_verdict, report); !added.ok()) {
      report.notes.push_back(absl::StrCat("tiers: ", added.message()));
      return;
    }
  }
  if (roles.activation_tiers.size() < 2 || base_verdict.fits != false) return;
  AddReorderedTiersOption(given, budgets, roles, profile, base, report);
}

}  // namespace footprint
