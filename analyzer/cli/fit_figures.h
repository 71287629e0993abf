// What every `fit` option shares: analyze's verdict on an analysis, and the
// figures an option reports (report/fit_report.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_FIT_FIGURES_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_FIT_FIGURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/cli/budgets.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/fit_report.h"

namespace footprint {

// The figures of one analysis, and analyze's verdict on them.
struct Verdict {
  std::optional<bool> fits;  // nullopt: unknown (unsized tensors, or no capacity and no budget).
  std::string reason;        // Why not, or why unknown; "" when it fits.
};

// What analyze's exit code would say: the budgets first, then the device.
Verdict VerdictOf(const Analysis& analysis, const Budgets& budgets);

// The weights held for the run: the file's and the folded ones.
int64_t ResidentWeights(const MemoryFigures& memory);

// What the activations take: the peak without the resident weights.
int64_t ActivationBytes(const MemoryFigures& memory);

// What the peak sums, named as the analysis reports them: the resident
// weights and the arena, or under --runtime the runtime's parts.
std::vector<FitPeakPart> PeakParts(const Analysis& analysis);

// The tiers of an analysis as the fit report shows them.
std::vector<FitTier> FitTiersOf(const Analysis& analysis);

// Bytes in the tiers that hold activations (RAM): their arenas and the weights placed there.
int64_t RamBytes(const Analysis& analysis);

// Sets `option`'s figures from `memory` and what it saves against `given`.
void SetFigures(const MemoryFigures& memory, const MemoryFigures& given, FitOption& option);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_FIT_FIGURES_H_
