// `fit`'s options that change the model's dtype or where it is placed on the
// device (the option kind "dim" is fit_dim_search.h), each planned by a full
// analysis with the user's flags.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_FIT_OPTIONS_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_FIT_OPTIONS_H_

#include "absl/status/statusor.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/cli/fit_figures.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/memory/dtype_what_if.h"
#include "analyzer/report/fit_report.h"

namespace footprint {

// kind "dtype": the int8 or fp16 what-if of a float model (memory/dtype_what_if.h),
// with the ops that stay float named in its description.
absl::StatusOr<FitOption> DtypeOption(const LoadedModel& loaded, const Analysis& given, const AnalyzeOptions& options,
                                      const Budgets& budgets, WhatIfDtype dtype);

// kind "tiers", added to `report`: weights in the device's read-only tiers
// (XIP), and, when that still does not fit and the device has several RAM
// tiers, the first order of them (of at most 24 tried) that fits. What could
// not be planned is a note.
void AddTierOptions(const Analysis& given, const AnalyzeOptions& options, const Budgets& budgets,
                    const Verdict& given_verdict, FitReport& report);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_FIT_OPTIONS_H_
