#include "analyzer/cli/budgets.h"

#include "absl/strings/str_cat.h"
#include "analyzer/report/format.h"

namespace footprint {
namespace {

BudgetCheck Check(const std::string& figure, int64_t limit, int64_t actual) {
  return BudgetCheck{.figure = figure, .limit_bytes = limit, .actual_bytes = actual, .ok = actual <= limit};
}

}  // namespace

std::vector<BudgetCheck> CheckBudgets(const MemoryFigures& memory, const Budgets& budgets) {
  std::vector<BudgetCheck> checks;
  if (budgets.max_peak_bytes) checks.push_back(Check("peak", *budgets.max_peak_bytes, memory.peak_bytes));
  if (budgets.max_arena_bytes) checks.push_back(Check("arena", *budgets.max_arena_bytes, memory.arena_bytes));
  if (budgets.max_weights_bytes) {
    checks.push_back(Check("weights", *budgets.max_weights_bytes, memory.weights_bytes));
  }
  return checks;
}

std::string BudgetViolation(const BudgetCheck& check) {
  return absl::StrCat(check.figure, " ", HumanAndExactBytes(check.actual_bytes), " exceeds --max-", check.figure, " ",
                      HumanAndExactBytes(check.limit_bytes), " by ", HumanBytes(check.actual_bytes - check.limit_bytes));
}

}  // namespace footprint
