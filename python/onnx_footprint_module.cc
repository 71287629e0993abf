// The onnx_footprint Python module: the CLI's `analyze`, `plan` and `devices`
// from Python, built from the same C++ code (README.md).
//
// Why the CLI's parser: the keyword arguments of analyze() become the CLI's
// flag words through one table (kFlags), and ParseAnalyzeArgs reads them, so
// every value means, and every bad value fails with, exactly what the flag
// does. The dict is the CLI's JSON report (WriteModelReportJson), read by
// Python's json module.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "analyzer/cli/batch.h"
#include "analyzer/cli/budgets.h"
#include "analyzer/cli/cli.h"
#include "analyzer/cli/fit.h"
#include "analyzer/cli/size_flags.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/fit_report.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/model_report.h"
#include "analyzer/shapes/shapes.h"
#include "devices/devices_command.h"
#include "planner/planner.h"

namespace py = pybind11;

namespace footprint::python {
namespace {

// How a keyword's value becomes flag words.
enum class Kind {
  kBindings,  // {name: int} -> --flag name=value, one per entry.
  kShapes,    // {name: [dims]} -> --flag name=1x3x224x224 ("scalar" for []), one per entry.
  kValue,     // str, int, float or os.PathLike -> --flag VALUE.
  kSwitch,    // bool -> --flag or --no-flag.
  kTrueOnly,  // True -> --flag; False -> nothing.
  kValues,    // {name: value or [values]} -> --flag name=V or name=1,2,3, one per entry.
};

struct FlagOf {
  const char* keyword;  // analyze()'s keyword argument.
  const char* flag;     // The CLI's flag (for kSwitch, the "on" spelling).
  Kind kind;            // How its value is written.
};

// One row per keyword, in the order their words are given to the parser:
// `baseline` first, so that an explicit schedule/alias/inplace overrides it
// as it does when written after --baseline on the command line.
constexpr FlagOf kFlags[] = {
    {"baseline", "--baseline", Kind::kTrueOnly},
    {"dims", "--dim", Kind::kBindings},
    {"input_shapes", "--input-shape", Kind::kShapes},
    {"dim_default", "--dim-default", Kind::kValue},
    {"tensor_shapes", "--tensor-shape", Kind::kShapes},
    {"input_values", "--input-value", Kind::kValues},
    {"sweep", "--sweep", Kind::kValue},
    {"device", "--device", Kind::kValue},
    {"device_file", "--device-file", Kind::kValue},
    {"schedule", "--schedule", Kind::kValue},
    {"alias", "--alias", Kind::kSwitch},
    {"inplace", "--inplace", Kind::kSwitch},
    {"fold", "--fold", Kind::kSwitch},
    {"accumulate", "--accumulate", Kind::kSwitch},
    {"qdq", "--qdq", Kind::kSwitch},
    {"runtime", "--runtime", Kind::kValue},
    {"time_limit", "--time-limit", Kind::kValue},
    {"schedule_time_limit", "--schedule-time-limit", Kind::kValue},
    {"max_peak", "--max-peak", Kind::kValue},
    {"max_arena", "--max-arena", Kind::kValue},
    {"max_weights", "--max-weights", Kind::kValue},
    {"baseline_report", "--baseline-report", Kind::kValue},
};

// The report's model.path of a model given as bytes or a ModelProto.
constexpr const char* kInMemoryName = "<in-memory model>";

// A Python scalar as the CLI would read it: str as is, os.PathLike through
// os.fspath, bool refused (it is not a number), numbers through str().
std::string ValueWord(const py::handle& value, const char* keyword) {
  if (py::isinstance<py::bool_>(value)) {
    throw py::type_error(absl::StrCat(keyword, " takes a value, not a bool"));
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) return py::str(value).cast<std::string>();
  if (py::hasattr(value, "__fspath__")) {
    return py::module_::import("os").attr("fspath")(value).cast<std::string>();
  }
  throw py::type_error(absl::StrCat(keyword, " takes a str, a number or a path, not ",
                                    py::str(value.get_type().attr("__name__")).cast<std::string>()));
}

// An input's value as --input-value reads it: a bool as 1/0, a number as
// ValueWord writes it, a list or tuple as its elements joined by commas.
std::string InputValueWord(const py::handle& value, const char* keyword) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "1" : "0";
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::vector<std::string> parts;
    for (const py::handle& element : value) parts.push_back(InputValueWord(element, keyword));
    return absl::StrJoin(parts, ",");
  }
  return ValueWord(value, keyword);
}

py::dict DictArgument(const py::handle& value, const char* keyword) {
  if (!py::isinstance<py::dict>(value)) {
    throw py::type_error(absl::StrCat(keyword, " takes a dict"));
  }
  return py::reinterpret_borrow<py::dict>(value);
}

// "1x3x224x224" from [1, 3, 224, 224]; "scalar" from [].
std::string ShapeWord(const py::handle& dims, const char* keyword) {
  if (py::isinstance<py::str>(dims) || !py::isinstance<py::sequence>(dims)) {
    throw py::type_error(absl::StrCat(keyword, " takes lists of ints, e.g. [1, 3, 224, 224]"));
  }
  std::vector<std::string> parts;
  for (const py::handle& dim : dims) parts.push_back(ValueWord(dim, keyword));
  return parts.empty() ? "scalar" : absl::StrJoin(parts, "x");
}

// analyze()'s keywords as the CLI's words, after the model's name;
// `function` names the caller in the error for an unknown keyword.
std::vector<std::string> FlagWords(const py::kwargs& kwargs, const char* function = "analyze") {
  for (const auto& [key, value] : kwargs) {
    const std::string name = key.cast<std::string>();
    bool known = false;
    for (const FlagOf& row : kFlags) known = known || name == row.keyword;
    if (!known) throw py::type_error(absl::StrCat(function, "() got an unexpected keyword argument '", name, "'"));
  }
  std::vector<std::string> words;
  for (const FlagOf& row : kFlags) {
    if (!kwargs.contains(row.keyword)) continue;
    const py::object value = kwargs[row.keyword];
    if (value.is_none()) continue;  // None: as if not given.
    switch (row.kind) {
      case Kind::kBindings:
        for (const auto& [name, bound] : DictArgument(value, row.keyword)) {
          words.push_back(row.flag);
          words.push_back(absl::StrCat(py::str(name).cast<std::string>(), "=", ValueWord(bound, row.keyword)));
        }
        break;
      case Kind::kShapes:
        for (const auto& [name, dims] : DictArgument(value, row.keyword)) {
          words.push_back(row.flag);
          words.push_back(absl::StrCat(py::str(name).cast<std::string>(), "=", ShapeWord(dims, row.keyword)));
        }
        break;
      case Kind::kValues:
        for (const auto& [name, given] : DictArgument(value, row.keyword)) {
          words.push_back(row.flag);
          words.push_back(absl::StrCat(py::str(name).cast<std::string>(), "=", InputValueWord(given, row.keyword)));
        }
        break;
      case Kind::kValue:
        words.push_back(row.flag);
        words.push_back(ValueWord(value, row.keyword));
        break;
      case Kind::kSwitch:
        if (!py::isinstance<py::bool_>(value)) throw py::type_error(absl::StrCat(row.keyword, " takes a bool"));
        words.push_back(value.cast<bool>() ? std::string(row.flag)
                                           : absl::StrCat("--no-", std::string(row.flag).substr(2)));
        break;
      case Kind::kTrueOnly:
        if (!py::isinstance<py::bool_>(value)) throw py::type_error(absl::StrCat(row.keyword, " takes a bool"));
        if (value.cast<bool>()) words.push_back(row.flag);
        break;
    }
  }
  return words;
}

// The model argument: a path (str or os.PathLike) is read as the CLI reads
// it; bytes-like objects and anything with SerializeToString (onnx.ModelProto)
// are parsed from memory, with `bytes_owner` keeping the buffer alive.
struct ModelArgument {
  ModelPath model;           // What AnalyzeModels takes.
  py::object bytes_owner;    // The bytes (or buffer) `model.bytes` points into.
  std::optional<py::buffer_info> buffer;  // Held while a bytearray or memoryview is read.
};

ModelArgument ReadModelArgument(const py::object& model, const py::object& external_data_dir) {
  ModelArgument argument;
  if (py::isinstance<py::str>(model) || py::hasattr(model, "__fspath__")) {
    if (!external_data_dir.is_none()) {
      throw py::type_error("external_data_dir is for a model given as bytes or a ModelProto; a path's is its folder");
    }
    argument.model.path = py::module_::import("os").attr("fspath")(model).cast<std::string>();
    return argument;
  }
  py::object serialized = model;
  if (!py::isinstance<py::bytes>(model) && !py::isinstance<py::buffer>(model)) {
    if (!py::hasattr(model, "SerializeToString")) {
      throw py::type_error("analyze() takes a path, bytes or an onnx.ModelProto");
    }
    serialized = model.attr("SerializeToString")();
  }
  argument.model.path = kInMemoryName;
  argument.model.external_data_dir = external_data_dir.is_none()
                                         ? std::string(".")
                                         : py::module_::import("os").attr("fspath")(external_data_dir).cast<std::string>();
  argument.bytes_owner = serialized;
  if (py::isinstance<py::bytes>(serialized)) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    PyBytes_AsStringAndSize(serialized.ptr(), &data, &size);
    argument.model.bytes = std::string_view(data, static_cast<size_t>(size));
  } else {
    argument.buffer = py::reinterpret_borrow<py::buffer>(serialized).request();
    argument.model.bytes =
        std::string_view(static_cast<const char*>(argument.buffer->ptr),
                         static_cast<size_t>(argument.buffer->size * argument.buffer->itemsize));
  }
  return argument;
}

py::object JsonLoads(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

py::object Analyze(const py::object& model, const py::object& external_data_dir, const py::kwargs& kwargs) {
  ModelArgument argument = ReadModelArgument(model, external_data_dir);
  std::vector<std::string> words = {argument.model.path};
  for (std::string& word : FlagWords(kwargs)) words.push_back(std::move(word));
  absl::StatusOr<AnalyzeCommand> command = ParseAnalyzeArgs(words);
  if (!command.ok()) throw py::value_error(std::string(command.status().message()));
  std::string json_text;
  std::string error;
  {
    py::gil_scoped_release release;  // Other Python threads run (and analyze) meanwhile.
    absl::StatusOr<BatchRequest> batch = MakeBatchRequest(*command);
    if (!batch.ok()) {
      error = std::string(batch.status().message());
    } else if (!command->report.baseline_report_path.empty()) {
      absl::StatusOr<ReportFigures> baseline = ReadReportFigures(command->report.baseline_report_path);
      if (baseline.ok()) {
        batch->baseline = *baseline;
      } else {
        error = absl::StrCat(command->report.baseline_report_path, ": ", baseline.status().message());
      }
    }
    if (error.empty()) {
      // As the CLI with one model: a file stays a file (ExpandModelPaths would make a folder many).
      const std::vector<ModelReport> reports = AnalyzeModels({argument.model}, *batch);
      if (!reports[0].analysis.has_value()) {
        error = absl::StrCat(reports[0].path, ": ", reports[0].error);
      } else {
        JsonWriter json;
        WriteModelReportJson(reports[0], json);
        json_text = std::move(json).Release();
      }
    }
  }
  if (!error.empty()) throw py::value_error(error);
  return JsonLoads(json_text);
}

// fp.fit(model, device=..., fit_dims=[...], **analyze's options): the CLI's
// `fit --format json` report as a dict.
py::object Fit(const py::object& model, const py::object& external_data_dir, const py::object& fit_dims,
               const py::kwargs& kwargs) {
  ModelArgument argument = ReadModelArgument(model, external_data_dir);
  std::vector<std::string> words = {argument.model.path};
  for (std::string& word : FlagWords(kwargs, "fit")) words.push_back(std::move(word));
  if (!fit_dims.is_none()) {
    if (py::isinstance<py::str>(fit_dims) || !py::isinstance<py::sequence>(fit_dims)) {
      throw py::type_error("fit_dims takes a list of dim names, e.g. ['batch']");
    }
    for (const py::handle& name : fit_dims) {
      words.push_back("--fit-dim");
      words.push_back(ValueWord(name, "fit_dims"));
    }
  }
  absl::StatusOr<FitCommand> command = ParseFitArgs(words);
  if (!command.ok()) throw py::value_error(std::string(command.status().message()));
  std::string json_text;
  std::string error;
  {
    py::gil_scoped_release release;
    absl::StatusOr<FitReport> report = FitModel(argument.model, *command);
    if (report.ok()) {
      json_text = RenderFitJson(*report);
    } else {
      error = std::string(report.status().message());
    }
  }
  if (!error.empty()) throw py::value_error(error);
  return JsonLoads(json_text);
}

// fp.check(report, max_peak=...): the CLI's budget lines ("PATH: peak ...
// exceeds --max-peak ..."), one per failed budget; none given: the report's own.
std::vector<std::string> Check(const py::dict& report, const py::object& max_peak, const py::object& max_arena,
                               const py::object& max_weights) {
  if (!report.contains("memory") || !report.contains("model")) {
    throw py::value_error("check() takes a report of analyze(), with 'model' and 'memory'");
  }
  const py::dict memory_dict = report["memory"].cast<py::dict>();
  MemoryFigures memory;
  memory.peak_bytes = memory_dict["peak_bytes"].cast<int64_t>();
  memory.arena_bytes = memory_dict["arena_bytes"].cast<int64_t>();
  memory.weights_bytes = memory_dict["weights_bytes"].cast<int64_t>();
  const std::string path = report["model"].cast<py::dict>()["path"].cast<std::string>();
  std::vector<BudgetCheck> checks;
  if (max_peak.is_none() && max_arena.is_none() && max_weights.is_none()) {
    if (report.contains("budgets")) {
      for (const py::handle& entry : report["budgets"]) {
        const py::dict budget = py::reinterpret_borrow<py::dict>(entry);
        checks.push_back(BudgetCheck{.figure = budget["figure"].cast<std::string>(),
                                     .limit_bytes = budget["limit_bytes"].cast<int64_t>(),
                                     .actual_bytes = budget["actual_bytes"].cast<int64_t>(),
                                     .ok = budget["ok"].cast<bool>()});
      }
    }
  } else {
    Budgets budgets;
    for (auto [flag, keyword, value, limit] :
         {std::tuple{"--max-peak", "max_peak", &max_peak, &budgets.max_peak_bytes},
          std::tuple{"--max-arena", "max_arena", &max_arena, &budgets.max_arena_bytes},
          std::tuple{"--max-weights", "max_weights", &max_weights, &budgets.max_weights_bytes}}) {
      if (value->is_none()) continue;
      absl::StatusOr<int64_t> bytes = ParseByteSize(ValueWord(*value, keyword));
      if (!bytes.ok()) throw py::value_error(absl::StrCat(flag, ": ", bytes.status().message()));
      *limit = *bytes;
    }
    checks = CheckBudgets(memory, budgets);
  }
  std::vector<std::string> failed;
  for (const BudgetCheck& check : checks) {
    if (!check.ok) failed.push_back(absl::StrCat(path, ": ", BudgetViolation(check)));
  }
  return failed;
}

py::dict Plan(const std::vector<std::tuple<int64_t, int64_t, int64_t>>& buffers, double time_limit,
              int64_t alignment) {
  if (time_limit < 0 || time_limit > 86400) {
    throw py::value_error(absl::StrCat("time_limit expects seconds between 0 and 86400, got ", time_limit));
  }
  if (alignment < 1) throw py::value_error(absl::StrCat("alignment must be at least 1, got ", alignment));
  planner::Problem problem;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto [size, first, last] = buffers[i];
    if (size < 0 || first < 0 || last < first) {
      throw py::value_error(absl::StrCat("buffer ", i, ": (size, first, last) needs size >= 0 and 0 <= first <= last, got (",
                                         size, ", ", first, ", ", last, ")"));
    }
    problem.buffers.push_back({.id = absl::StrCat(i), .lifespan = {first, last}, .size = size, .alignment = alignment});
  }
  absl::StatusOr<planner::PlanResult> result;
  {
    py::gil_scoped_release release;
    result = planner::Solve(problem, {.time_limit = absl::Seconds(time_limit)});
  }
  if (!result.ok()) throw py::value_error(std::string(result.status().message()));
  py::dict plan;
  plan["offsets"] = result->solution.offsets;
  plan["arena_bytes"] = result->arena_bytes;
  plan["lower_bound_bytes"] = result->lower_bound;
  plan["algorithm"] = result->algorithm;
  plan["proven_optimal"] = result->proven_optimal;
  plan["seconds"] = result->seconds;
  return plan;
}

py::object Devices() {
  std::ostringstream out;
  std::ostringstream err;
  if (devices::RunDevicesCommand({"--format", "json"}, out, err) != 0) throw py::value_error(err.str());
  return JsonLoads(out.str());
}

std::string AnalyzeDoc() {
  std::string table;
  for (const FlagOf& row : kFlags) {
    absl::StrAppend(&table, "  ", row.keyword, std::string(22 - std::string_view(row.keyword).size(), ' '), row.flag,
                    row.kind == Kind::kSwitch ? absl::StrCat(" / --no-", std::string(row.flag).substr(2)) : "",
                    "\n");
  }
  return absl::StrCat(
      "analyze(model, *, external_data_dir=None, **options) -> dict\n\n"
      "Analyzes one model exactly as `onnx-footprint analyze MODEL --format json` does and\n"
      "returns that JSON report as a dict (same keys, same numbers).\n\n"
      "model: a path (str or os.PathLike; a path behaves exactly like the CLI's), bytes or a\n"
      "  bytes-like object, or an onnx.ModelProto (anything with SerializeToString; load it with\n"
      "  load_external_data=False: weights are sized from their dims, never read). An in-memory\n"
      "  model is named '",
      kInMemoryName,
      "' in the report, and its external data locations resolve\n"
      "  against external_data_dir (default: the current directory).\n\n"
      "Each keyword is one CLI flag (None = not given; an unknown keyword is a TypeError):\n", table,
      "\nFor example dims={'batch': 1}, input_shapes={'x': [1, 3, 224, 224]} ([] = scalar),\n"
      "  sweep='batch=1,8', max_peak='512KiB' (or a number of bytes),\n"
      "  alias=False is --no-alias, baseline=True is --baseline (explicit modes override it).\n\n"
      "Raises onnx_footprint.Error (a ValueError) with the CLI's one-line exit-2 message. Unsized\n"
      "tensors are in the dict (memory.unsized_tensors, tensors[].unsized_reason), not an error.\n"
      "The GIL is released during the analysis.\n\n"
      "The CLI's help for these flags:\n\n",
      AnalyzeUsage());
}

}  // namespace
}  // namespace footprint::python

PYBIND11_MODULE(onnx_footprint, m) {
  using namespace footprint::python;  // NOLINT(build/namespaces): the module's own functions.
  m.doc() =
      "onnx-footprint from Python: how much memory an ONNX model needs on a device.\n\n"
      "  analyze(model, **options) -> dict   the CLI's JSON report (see help(analyze))\n"
      "  fit(model, device=..., fit_dims=[...], **options) -> dict   `fit --format json`: what would fit\n"
      "  check(report, max_peak=...) -> list  the failed budgets, as the CLI's lines\n"
      "  plan([(size, first, last), ...])     the offset planner alone\n"
      "  devices() -> list                    the built-in hardware profiles\n"
      "  Error                                bad input (a ValueError), the CLI's exit-2 message";
  m.attr("__version__") = "0.1.0";
  // ONNX's schema registry is built once, here: analyses on several threads
  // fork children for ONNX's inference, and a child must not inherit it half-built.
  footprint::PrepareOnnxSchemas();
  static py::exception<std::runtime_error> error(m, "Error", PyExc_ValueError);
  // Every ValueError raised here is an onnx_footprint.Error.
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const py::value_error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  static const std::string analyze_doc = AnalyzeDoc();  // pybind11 keeps the pointer.
  m.def("analyze", &Analyze, py::arg("model"), py::kw_only(), py::arg("external_data_dir") = py::none(),
        analyze_doc.c_str());
  m.def("fit", &Fit, py::arg("model"), py::kw_only(), py::arg("external_data_dir") = py::none(),
        py::arg("fit_dims") = py::none(),
        "fit(model, *, external_data_dir=None, fit_dims=None, device=..., **options) -> dict\n\n"
        "`onnx-footprint fit MODEL --format json` as a dict: whether the model fits the device as\n"
        "given ('fits'), and 'options' (kind 'dim', 'dtype' or 'tiers'), each with its planned\n"
        "figures and whether it fits. fit_dims: the input dims to search (--fit-dim), default the\n"
        "unbound ones. device or device_file is required; every other keyword is analyze()'s\n"
        "(sweep and baseline_report excepted). Raises onnx_footprint.Error with the CLI's message.");
  m.def("check", &Check, py::arg("report"), py::kw_only(), py::arg("max_peak") = py::none(),
        py::arg("max_arena") = py::none(), py::arg("max_weights") = py::none(),
        "check(report, *, max_peak=None, max_arena=None, max_weights=None) -> list[str]\n\n"
        "The budgets a report of analyze() exceeds, one line each, as the CLI prints them on stderr\n"
        "(without its 'onnx-footprint: ' prefix): 'PATH: peak 1.50 MiB (1,572,864 bytes) exceeds\n"
        "--max-peak ...'. A SIZE is an int (bytes) or the flags' text: '512KiB', '1.5MiB', '100MB'.\n"
        "With no budget given, the report's own (analyze(..., max_peak=...)) are read. A budget is\n"
        "met when the figure is at most the limit; [] means every budget is met.");
  m.def("plan", &Plan, py::arg("buffers"), py::kw_only(), py::arg("time_limit") = 1.0, py::arg("alignment") = 1,
        "plan(buffers, *, time_limit=1.0, alignment=1) -> dict\n\n"
        "The offset planner of `onnx-footprint plan`, alone. buffers: (size, first, last) tuples,\n"
        "each live on the closed interval of steps [first, last] (the analyzer's convention; the\n"
        "CSV of `plan` is half-open). Sizes are rounded to no alignment but offsets are multiples of\n"
        "`alignment`. Returns {'offsets': [...] (one per buffer, in order), 'arena_bytes',\n"
        "'lower_bound_bytes', 'algorithm', 'proven_optimal', 'seconds'}; every plan is validated.\n"
        "time_limit: seconds for the exact search after the heuristics (0 = heuristics only).");
  m.def("devices", &Devices,
        "devices() -> list[dict]\n\n"
        "The built-in hardware profiles, as `onnx-footprint devices --format json` prints them.");
}
