// Budgets: the limits a CI gate puts on a model's figures.
//
// Usage:
//   Budgets budgets{.max_peak_bytes = 512 * 1024};
//   analysis.budgets = CheckBudgets(analysis.memory, budgets);
//   if (!AllWithinBudget(analysis.budgets)) { /* exit 1, one BudgetViolation line each */ }
//
// A budget compares the figure as the memory model defines it. When the
// figures are incomplete (unsized tensors), the figure is a lower bound of the
// truth: a budget it meets may still be exceeded at run time, so callers say
// so next to the result rather than pretending to certainty.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_BUDGETS_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_BUDGETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/memory/analysis_result.h"

namespace footprint {

struct Budgets {
  std::optional<int64_t> max_peak_bytes;     // --max-peak: peak_bytes.
  std::optional<int64_t> max_arena_bytes;    // --max-arena: arena_bytes.
  std::optional<int64_t> max_weights_bytes;  // --max-weights: weights_bytes.
  bool empty() const { return !max_peak_bytes && !max_arena_bytes && !max_weights_bytes; }
};

// One check per budget that is set, in the order peak, arena, weights.
std::vector<BudgetCheck> CheckBudgets(const MemoryFigures& memory, const Budgets& budgets);

// AllWithinBudget(checks) is beside BudgetCheck in memory/analysis_result.h.

// "peak 1.50 MiB (1,572,864 bytes) exceeds --max-peak 1.00 MiB (1,048,576 bytes) by 512 KiB"
std::string BudgetViolation(const BudgetCheck& check);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_BUDGETS_H_
