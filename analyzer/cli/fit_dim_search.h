// `fit`'s option kind "dim": the largest value of one input dim at which the
// model still fits, found by full analyses of the loaded model.
//
// Usage:
//   InputDims dims = InputDimsOf(loaded.model);
//   std::vector<symbolic::DimTie> ties = TiesOf(loaded.model, options);
//   absl::StatusOr<FitOption> option = SearchDim(loaded, options, budgets, dims, ties, "batch", given.memory);
//
// The search:
// - starts at 1, or at the first power of two up to 4096 with a verdict (an
//   image too small for the convolutions' windows has none);
// - then cycles through a guess where the activations reach their limit (the
//   budgets' or the device's), linear between the nearest points measured;
//   the guess's neighbour (after a good guess the bracket closes there); and a
//   bisection (or, with no bracket yet, a doubling);
// - reports a value only once the analysis at it fits and at value + 1 does
//   not (or the value is 2^30, the largest searched). Never extrapolated.
// Dims the model ties to the searched one (total = past + sequence) move with
// it; the other unbound input dims are --dim-default or 1.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_FIT_DIM_SEARCH_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_FIT_DIM_SEARCH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/fit_report.h"
#include "analyzer/shapes/dim_ties.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// The input dims of the main graph by name, in input order: dim_params (the
// symbols of one that is a formula, such as past in "past + 1"), and
// <input>_dim<k> for a dim with neither value nor name.
struct InputDims {
  std::vector<std::string> names;               // In order, each once.
  std::map<std::string, std::string> input_of;  // Name -> the (first) input holding it.
};

InputDims InputDimsOf(const onnx::ModelProto& model);

// The dims the model ties together, from our engine's run on the model with
// no dim bound (the user's whole input shapes and values kept). Empty when
// the engine cannot run: the search then binds each dim on its own.
std::vector<symbolic::DimTie> TiesOf(const onnx::ModelProto& source, const AnalyzeOptions& options);

// The option for `dim`; an error is an analysis that failed at some value
// (the message names the dim and the value).
absl::StatusOr<FitOption> SearchDim(const LoadedModel& loaded, const AnalyzeOptions& options, const Budgets& budgets,
                                    const InputDims& dims, const std::vector<symbolic::DimTie>& ties,
                                    const std::string& dim, const MemoryFigures& given);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_FIT_DIM_SEARCH_H_
