#include "analyzer/cli/batch.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analyzer/cli/progress.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/shapes/shapes.h"

namespace footprint {
namespace {

// The names a model answers to, for the bindings of a several-model run:
// its inputs' named dims, "<input>_dim<k>" for each input dim, its Loop
// nodes' "<node>.trip_count" (bodies included), its inputs and its values.
struct ModelNames {
  std::set<std::string> dims;     // --dim names it knows.
  std::set<std::string> inputs;   // --input-shape names.
  std::set<std::string> values;   // --tensor-shape names (node outputs, any graph).
};

void CollectGraphNames(const onnx::GraphProto& graph, ModelNames& names) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) names.values.insert(output);
    if (node.op_type() == "Loop") {
      names.dims.insert(absl::StrCat(node.name(), ".trip_count"));
    }
    for (const onnx::GraphProto* body : BodiesOf(node)) CollectGraphNames(*body, names);
  }
}

ModelNames NamesOf(const onnx::ModelProto& model) {
  ModelNames names;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    names.inputs.insert(input.name());
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    int k = 0;
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      if (dim.has_dim_param()) names.dims.insert(dim.dim_param());
      names.dims.insert(absl::StrCat(input.name(), "_dim", k++));
    }
  }
  CollectGraphNames(model.graph(), names);
  return names;
}

template <typename Map>
Map Named(const Map& bindings, const std::set<std::string>& known, const std::string& kind,
          std::set<std::string>* used) {
  Map named;
  for (const auto& [name, value] : bindings) {
    if (!known.contains(name)) continue;
    named.emplace(name, value);
    used->insert(kind + name);
  }
  return named;
}

// `used_dims` collects the --dim names this model used (several-model runs).
ModelReport AnalyzeOne(const ModelPath& model, const BatchRequest& request, bool several,
                       std::set<std::string>* used_dims) {
  const std::string& path = model.path;
  ModelReport report{.path = path};
  const absl::Time load_start = absl::Now();
  absl::StatusOr<LoadedModel> loaded = model.bytes.has_value()
                                           ? LoadModelFromBytes(*model.bytes, model.external_data_dir)
                                           : LoadModel(path);
  if (loaded.ok()) loaded->path = path;
  const double load_seconds = absl::ToDoubleSeconds(absl::Now() - load_start);
  if (!loaded.ok()) {
    report.error = std::string(loaded.status().message());
    report.exit_code = 2;
    return report;
  }
  AnalyzeOptions options = request.options;
  if (several) {
    // One run may cover models with different dynamic dims: each model takes
    // the bindings that name its dims. A name no model uses is an error of
    // the run (run_errors), as it is of a one-model run.
    const ModelNames names = NamesOf(loaded->model);
    options.dims = Named(request.options.dims, names.dims, "--dim ", used_dims);
    options.input_shapes = Named(request.options.input_shapes, names.inputs, "--input-shape ", used_dims);
    options.input_values = Named(request.options.input_values, names.inputs, "--input-value ", used_dims);
    options.tensor_shapes = Named(request.options.tensor_shapes, names.values, "--tensor-shape ", used_dims);
  }
  absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, options);
  if (!analysis.ok()) {
    report.error = std::string(analysis.status().message());
    report.exit_code = 2;
    return report;
  }
  analysis->phase_seconds["load"] = load_seconds;
  if (request.sweep.has_value()) {
    absl::StatusOr<std::vector<SweepPoint>> points = Sweep(*loaded, options, *request.sweep);
    if (!points.ok()) {
      report.error = absl::StrCat("--sweep ", request.sweep->dim, ": ", points.status().message());
      report.exit_code = 2;
      return report;
    }
    analysis->sweep = SweepFigures{.dim = request.sweep->dim, .points = std::move(*points)};
  }
  analysis->budgets = CheckBudgets(analysis->memory, request.budgets);
  if (request.baseline.has_value()) {
    ReportFigures now = FiguresOf(*analysis);
    now.source = path;
    report.baseline = DiffFigures(*request.baseline, now, std::nullopt);
  }
  const bool over = !AllWithinBudget(analysis->budgets) || (analysis->fits.has_value() && !*analysis->fits);
  report.exit_code = over ? 1 : 0;
  report.analysis = std::move(*analysis);
  return report;
}
}  // namespace

std::vector<ModelPath> ExpandModelPaths(const std::vector<std::string>& arguments) {
  std::vector<ModelPath> models;
  for (const std::string& argument : arguments) {
    std::error_code error;
    if (!std::filesystem::is_directory(argument, error)) {
      models.push_back({.path = argument});
      continue;
    }
    std::vector<std::string> found;
    std::filesystem::recursive_directory_iterator it(
        argument, std::filesystem::directory_options::skip_permission_denied, error);
    for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      std::error_code type_error;
      if (it->is_regular_file(type_error) && it->path().extension() == ".onnx") found.push_back(it->path().string());
    }
    if (error) {
      models.push_back({.path = argument, .error = absl::StrCat("cannot read the directory: ", error.message())});
      continue;
    }
    if (found.empty()) {
      models.push_back({.path = argument, .error = "no *.onnx file below this directory"});
      continue;
    }
    std::sort(found.begin(), found.end());
    for (std::string& path : found) models.push_back({.path = std::move(path)});
  }
  return models;
}

std::vector<ModelReport> AnalyzeModels(const std::vector<ModelPath>& models, const BatchRequest& request,
                                       std::vector<std::string>* run_errors) {
  std::vector<ModelReport> reports(models.size());
  const bool several = models.size() > 1;
  std::vector<std::set<std::string>> used_dims(models.size());
  Progress progress(models.size(), request.progress);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < models.size(); i = next++) {
      if (!models[i].error.empty()) {
        reports[i] = ModelReport{.path = models[i].path, .error = models[i].error, .exit_code = 2};
        progress.Finished(i);
        continue;
      }
      progress.Started(i, models[i].path);
      reports[i] = AnalyzeOne(models[i], request, several, &used_dims[i]);
      progress.Finished(i);
    }
  };
  const size_t threads = std::min<size_t>(std::max(request.jobs, 1), std::max<size_t>(models.size(), 1));
  // ONNX's inference runs in forked children; a child gets only the forking
  // thread, so nothing it needs may be half-built by another: the schema
  // registry is built here, before any thread starts.
  if (threads > 1) PrepareOnnxSchemas();
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  progress.Stop();
  if (several) {
    std::set<std::string> used;
    for (const std::set<std::string>& names : used_dims) used.insert(names.begin(), names.end());
    auto report_unused = [&](const auto& bindings, const std::string& flag, const std::string& what) {
      for (const auto& [name, value] : bindings) {
        if (used.contains(flag + name) || run_errors == nullptr) continue;
        run_errors->push_back(absl::StrCat(flag, name, ": none of the ", models.size(), " models has ", what, " '",
                                           name, "'"));
      }
    };
    report_unused(request.options.dims, "--dim ", "a dimension named");
    report_unused(request.options.input_shapes, "--input-shape ", "an input named");
    report_unused(request.options.input_values, "--input-value ", "an input named");
    report_unused(request.options.tensor_shapes, "--tensor-shape ", "a tensor named");
  }
  return reports;
}

int WorstExitCode(const std::vector<ModelReport>& reports) {
  int worst = 0;
  for (const ModelReport& report : reports) worst = std::max(worst, report.exit_code);
  return worst;
}

}  // namespace footprint
