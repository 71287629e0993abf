// Shape coverage: the fraction of arena tensors (graph inputs and node
// outputs of the main graph) that get a byte size, with ONNX 1.12's own
// inference alone against our engine, under the same bindings; and, with no
// binding at all, the fraction our engine sizes or gives as a formula.
//
// Usage: shape_coverage [--dim-default N] MODEL.onnx... (or a file listing
// models, one a line, after --list). Prints one TSV line per model and the
// totals; exits 1 if any model fails to analyze. --compare also lists every
// tensor that ONNX and ours both size, differently (and then exits 1).
//        shape_coverage --synthetic NODES: times the whole analysis of a
// transformer-like chain of NODES nodes whose Reshapes take computed shapes,
// bound and unbound (the target: well under a second for 18,000 nodes).
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/model_builder.h"

namespace {

struct Count {
  int64_t tensors = 0;   // Arena tensors of the main graph.
  int64_t sized = 0;     // With a byte size.
  int64_t formulas = 0;  // Without one, but with a formula in unbound dims.
};

Count CountOf(const footprint::Analysis& analysis) {
  Count count;
  for (const footprint::TensorRecord& tensor : analysis.tensors) {
    if (tensor.role == footprint::TensorRole::kSubgraphWorkspace) continue;
    ++count.tensors;
    if (tensor.bytes.has_value()) {
      ++count.sized;
    } else if (!tensor.bytes_expr.empty()) {
      ++count.formulas;
    }
  }
  return count;
}

std::string Percent(int64_t part, int64_t whole) {
  return whole == 0 ? "-" : absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// Blocks of 9 nodes: Shape, 2 Gathers, Concat, Reshape (computed), Softmax,
// Reshape, MatMul, Reshape back; symbolic batch and seq.
footprint::LoadedModel Synthetic(int nodes) {
  using footprint::testing::ModelBuilder;
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {"batch", "seq", 64})
      .Int64Initializer("i0", {0})
      .Int64Initializer("i1", {1})
      .Int64Initializer("heads", {4, 16})
      .Int64Initializer("flat", {-1, 64})
      .Initializer("w", onnx::TensorProto::FLOAT, {64, 64});
  std::string x = "x";
  for (int b = 0; b * 9 < nodes; ++b) {
    const std::string p = "b" + std::to_string(b) + "_";
    builder.Add("Shape", {x}, {p + "s"})
        .Add("Gather", {p + "s", "i0"}, {p + "batch"})
        .Add("Gather", {p + "s", "i1"}, {p + "seq"});
    onnx::NodeProto& concat = builder.Node("Concat", {p + "batch", p + "seq", "heads"}, {p + "target"});
    onnx::AttributeProto* axis = concat.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(0);
    builder.Add("Reshape", {x, p + "target"}, {p + "r"})
        .Add("Softmax", {p + "r"}, {p + "sm"})
        .Add("Reshape", {p + "sm", "flat"}, {p + "f"})
        .Add("MatMul", {p + "f", "w"}, {p + "mm"})
        .Add("Reshape", {p + "mm", p + "s"}, {p + "y"});
    x = p + "y";
  }
  builder.Output(x);
  return footprint::LoadedModel{.model = builder.Build(), .path = "synthetic.onnx"};
}

int TimeSynthetic(int nodes) {
  const footprint::LoadedModel model = Synthetic(nodes);
  for (const bool bound : {true, false}) {
    footprint::AnalyzeOptions options;
    options.planner_time_limit = absl::ZeroDuration();
    if (bound) options.dims = {{"batch", 4}, {"seq", 128}};
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<footprint::Analysis> analysis = footprint::AnalyzeModel(model, options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!analysis.ok()) {
      std::cout << "synthetic: " << analysis.status().message() << "\n";
      return 1;
    }
    std::cout << absl::StrFormat("synthetic %d nodes, %s: %.0f ms, %d unsized, %s\n", model.model->graph().node_size(),
                                 bound ? "dims bound" : "dims unbound", ms, analysis->memory.unsized_tensors,
                                 analysis->symbolic_memory.has_value()
                                     ? "lower bound " + analysis->symbolic_memory->lower_bound_expr
                                     : absl::StrFormat("lower bound %d bytes", analysis->memory.lower_bound_bytes));
  }
  return 0;
}

// Where both size a tensor, the sizes must agree: prints each tensor ONNX's
// inference and ours size differently, returns how many.
int PrintMismatches(const std::string& path, const footprint::Analysis& onnx_only, const footprint::Analysis& ours) {
  std::map<std::string, int64_t> onnx_bytes;
  for (const footprint::TensorRecord& t : onnx_only.tensors) {
    if (t.bytes.has_value()) onnx_bytes[t.name] = *t.bytes;
  }
  int mismatches = 0;
  for (const footprint::TensorRecord& t : ours.tensors) {
    // A body's workspace grows where ours sizes more of the body: not a disagreement.
    if (t.role == footprint::TensorRole::kSubgraphWorkspace) continue;
    auto it = onnx_bytes.find(t.name);
    if (it != onnx_bytes.end() && t.bytes.has_value() && *t.bytes != it->second) {
      std::cout << "MISMATCH\t" << path << "\t" << t.name << "\tonnx " << it->second << "\tours " << *t.bytes << "\n";
      ++mismatches;
    }
  }
  return mismatches;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--synthetic") return TimeSynthetic(std::atoi(argv[2]));
  std::optional<int64_t> dim_default;
  std::vector<std::string> models;
  bool compare = false;  // --compare: print every tensor both size differently.
  int mismatches = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    int64_t value = 0;
    if (arg == "--dim-default" && i + 1 < argc && absl::SimpleAtoi(argv[i + 1], &value)) {
      dim_default = value;
      ++i;
    } else if (arg == "--compare") {
      compare = true;
    } else if (arg == "--list" && i + 1 < argc) {
      std::ifstream list(argv[++i]);
      for (std::string line; std::getline(list, line);) {
        if (!line.empty()) models.push_back(line);
      }
    } else {
      models.push_back(arg);
    }
  }
  std::cout << "model\ttensors\tonnx_sized\tours_sized\tours_unbound_sized_or_formula\tours_ms\n";
  Count total_onnx, total_ours, total_unbound;
  int failures = 0;
  for (const std::string& path : models) {
    absl::StatusOr<footprint::LoadedModel> loaded = footprint::LoadModel(path);
    if (!loaded.ok()) {
      std::cout << path << "\tERROR " << loaded.status().message() << "\n";
      ++failures;
      continue;
    }
    footprint::AnalyzeOptions options;
    options.dim_default = dim_default;
    options.planner_time_limit = absl::ZeroDuration();
    options.onnx_inference_only = true;
    absl::StatusOr<footprint::Analysis> onnx_only = footprint::AnalyzeModel(*loaded, options);
    options.onnx_inference_only = false;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<footprint::Analysis> ours = footprint::AnalyzeModel(*loaded, options);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    footprint::AnalyzeOptions unbound_options;
    unbound_options.planner_time_limit = absl::ZeroDuration();
    absl::StatusOr<footprint::Analysis> unbound = footprint::AnalyzeModel(*loaded, unbound_options);
    if (!onnx_only.ok() || !ours.ok() || !unbound.ok()) {
      const absl::Status& status =
          !onnx_only.ok() ? onnx_only.status() : !ours.ok() ? ours.status() : unbound.status();
      std::cout << path << "\tERROR " << status.message() << "\n";
      ++failures;
      continue;
    }
    if (compare) mismatches += PrintMismatches(path, *onnx_only, *ours);
    const Count a = CountOf(*onnx_only), b = CountOf(*ours), c = CountOf(*unbound);
    total_onnx.tensors += a.tensors;
    total_onnx.sized += a.sized;
    total_ours.tensors += b.tensors;
    total_ours.sized += b.sized;
    total_unbound.tensors += c.tensors;
    total_unbound.sized += c.sized + c.formulas;
    std::cout << path << "\t" << b.tensors << "\t" << Percent(a.sized, a.tensors) << "\t" << Percent(b.sized, b.tensors)
              << "\t" << Percent(c.sized + c.formulas, c.tensors) << "\t" << absl::StrFormat("%.1f", ms) << "\n";
  }
  std::cout << "TOTAL (" << models.size() << " models)\t" << total_ours.tensors << "\t"
            << Percent(total_onnx.sized, total_onnx.tensors) << "\t" << Percent(total_ours.sized, total_ours.tensors)
            << "\t" << Percent(total_unbound.sized, total_unbound.tensors) << "\t-\n";
  if (compare) std::cout << mismatches << " size mismatches between ONNX's inference and ours\n";
  return failures == 0 && mismatches == 0 ? 0 : 1;
}
