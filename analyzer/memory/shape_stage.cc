// The input bindings and the shape stage of AnalyzeModel (model_stages.h):
// BindInputs and ShapeStage.
#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "analyzer/loader/isolated_call.h"
#include "analyzer/memory/model_stages.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"

namespace footprint {

absl::StatusOr<BoundInputs> BindInputs(const onnx::ModelProto& source, const AnalyzeOptions& options) {
  BoundInputs inputs{.source = &source};
  absl::flat_hash_set<std::string> input_dim_names;
  for (const onnx::ValueInfoProto& input : source.graph().input()) {
    if (!input.type().has_tensor_type()) continue;
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      if (dim.has_dim_param()) input_dim_names.insert(dim.dim_param());
    }
  }
  // A dim_param that is a formula ("past + 1") takes its value from its
  // symbols' (--dim past=3 gives it 4) once all of them are bound: the
  // unbound-dims report names the symbols, not the formula.
  std::set<std::string> formula_symbols;
  for (const std::string& name : input_dim_names) {
    std::optional<symbolic::Expr> formula = symbolic::Expr::Parse(name);
    std::set<std::string> symbols;
    if (formula.has_value()) formula->CollectSymbols(symbols);
    if (symbols.empty() || (symbols.size() == 1 && *symbols.begin() == name)) continue;
    formula_symbols.insert(symbols.begin(), symbols.end());
    if (options.dims.contains(name)) continue;  // Bound as a whole.
    symbolic::SymbolValues known;
    for (const std::string& symbol : symbols) {
      if (auto it = options.dims.find(symbol); it != options.dims.end()) known[symbol] = it->second;
    }
    if (known.size() != symbols.size()) continue;
    if (std::optional<int64_t> value = formula->Substitute(known).AsConstant(); value.has_value() && *value >= 0) {
      inputs.input_dims[name] = *value;
    }
  }
  // A name neither the inputs nor the engine know is refused once the engine
  // has run (ShapeStage::Await), with BindDims' message.
  for (const auto& [name, value] : options.dims) {
    if (input_dim_names.contains(name)) {
      inputs.input_dims[name] = value;
    } else if (!formula_symbols.contains(name) || input_dim_names.contains(name)) {
      inputs.engine_dims[name] = value;
    }
  }
  if (options.onnx_inference_only) inputs.input_dims = options.dims;
  // ONNX's whole-model pass costs as much as the rest of the analysis: when
  // our engine has a shape function for every op, it is skipped (the engine
  // still asks ONNX per node where its own function gives up).
  inputs.needs_onnx_fallback = symbolic::NeedsOnnxFallback(source);
  const bool engine_covers_all = !options.onnx_inference_only && !inputs.needs_onnx_fallback;
  inputs.run_onnx_pass = options.onnx_shape_inference && !engine_covers_all;
  absl::StatusOr<symbolic::InputValues> input_values = symbolic::ParseInputValues(options.input_values, source);
  if (!input_values.ok()) return input_values.status();
  inputs.input_values = *std::move(input_values);
  if (inputs.run_onnx_pass || !inputs.input_dims.empty() || !options.input_shapes.empty() ||
      options.dim_default.has_value() || !options.input_values.empty()) {
    inputs.bound.emplace(source);
    if (absl::Status status = BindDims(inputs.input_dims, *inputs.bound); !status.ok()) return status;
    if (absl::Status status = symbolic::ApplyInputBindings({.input_shapes = options.input_shapes,
                                                            .dim_default = options.dim_default,
                                                            .input_values = options.input_values},
                                                           *inputs.bound);
        !status.ok()) {
      return status;
    }
  }
  return inputs;
}

ShapeStage::ShapeStage(BoundInputs& inputs, const AnalyzeOptions& options, Analysis& analysis)
    : inputs_(inputs), analysis_(analysis) {
  if (inputs.run_onnx_pass) {
    const absl::Time onnx_start = absl::Now();
    for (std::string& warning : RunOnnxShapeInference(*inputs.bound)) analysis.warnings.push_back(std::move(warning));
    analysis.phase_seconds["onnx_shape_inference"] = absl::ToDoubleSeconds(absl::Now() - onnx_start);
  }
  if (options.onnx_inference_only) return;
  const onnx::ModelProto& model = inputs.model();
  const absl::Time engine_start = absl::Now();
  if (inputs.needs_onnx_fallback) {
    // A dry run in a child: ONNX's per-node functions may crash on this model.
    absl::StatusOr<std::string> dry_run = RunIsolated(
        [&]() {
          (void)symbolic::InferSymbolicShapes(model, options.tensor_shapes, inputs.engine_dims, true,
                                              inputs.input_values);
          return std::string("ok");
        },
        kOnnxInferenceDeadline);
    if (!dry_run.ok()) {
      onnx_fallback_ = false;
      analysis.warnings.push_back(absl::StrCat("ONNX's per-node shape functions ", dry_run.status().message(),
                                               " on this model; ops without a shape function of ours stay unsized"));
    }
  }
  analysis.phase_seconds["shape_engine_dry_run"] = absl::ToDoubleSeconds(absl::Now() - engine_start);
  // Runs after this constructor returns: it holds what it reads by pointer,
  // all owned by AnalyzeModel's frame.
  auto run_engine = [this, model = &model, tensor_shapes = &options.tensor_shapes] {
    const absl::Time tables_start = absl::Now();
    try {
      tables_ = symbolic::InferSymbolicShapes(*model, *tensor_shapes, inputs_.engine_dims, onnx_fallback_,
                                              inputs_.input_values);
    } catch (const std::exception& error) {  // ONNX's per-node functions throw; nothing may escape a thread.
      tables_ = absl::InternalError(absl::StrCat("shape inference failed: ", error.what()));
    }
    analysis_.phase_seconds["shape_engine"] = absl::ToDoubleSeconds(absl::Now() - tables_start);
  };
  if (inputs.needs_onnx_fallback) {
    run_engine();
  } else {
    engine_ = std::thread(run_engine);
  }
}

ShapeStage::~ShapeStage() {
  if (engine_.joinable()) engine_.join();
}

absl::Status ShapeStage::Await() {
  if (status_.has_value()) return *status_;
  if (engine_.joinable()) engine_.join();
  status_ = absl::OkStatus();
  if (!tables_.has_value()) return *status_;
  if (!tables_->ok()) return *(status_ = tables_->status());
  if (!(*tables_)->unused_symbol_values.empty()) {
    onnx::ModelProto probe = *inputs_.source;
    DimBindings unused;
    for (const std::string& name : (*tables_)->unused_symbol_values) unused[name] = 0;
    return *(status_ = BindDims(unused, probe));  // Its error names the dims the inputs do have.
  }
  shapes_ = *std::move(*tables_);
  for (std::string& warning : shapes_->warnings) analysis_.warnings.push_back(std::move(warning));
  for (const symbolic::IfDecision& decision : shapes_->if_decisions) {
    analysis_.if_branches.push_back({.node = decision.node,
                                     .branch = decision.branch,
                                     .decided_by = decision.decided_by,
                                     .bound_branch = decision.bound_branch,
                                     .ruled_out = decision.ruled_out});
  }
  return *status_;
}

}  // namespace footprint
