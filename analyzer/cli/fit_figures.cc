#include "analyzer/cli/fit_figures.h"

#include "absl/strings/str_cat.h"
#include "analyzer/report/report.h"  // WeightsKnown.

namespace footprint {

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

int64_t ActivationBytes(const MemoryFigures& memory) { return memory.peak_bytes - ResidentWeights(memory); }

std::vector<FitPeakPart> PeakParts(const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  const bool weights = WeightsKnown(analysis);
  const bool tensors = memory.complete;
  if (analysis.options.runtime.empty()) {
    return {{"weights", ResidentWeights(memory), weights}, {"arena", memory.arena_bytes, tensors}};
  }
  if (memory.runtime_peak_phase == "session creation") {
    return {{"runtime load peak", memory.runtime_load_peak_bytes, weights}};
  }
  if (memory.runtime_peak_reserved) {
    return {{"runtime weights", memory.runtime_weights_bytes, weights},
            {"runtime reserved", memory.runtime_reserved_bytes, tensors},
            {"inputs", memory.runtime_input_bytes, tensors}};
  }
  return {{"runtime weights", memory.runtime_weights_bytes, weights},
          {"runtime tensors", memory.runtime_tensor_bytes, tensors},
          {"runtime overhead", memory.runtime_overhead_bytes, tensors}};
}

std::vector<FitTier> FitTiersOf(const Analysis& analysis) {
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
  option.complete = memory.complete;
  option.saved_bytes = given.peak_bytes - memory.peak_bytes;
}

}  // namespace footprint
