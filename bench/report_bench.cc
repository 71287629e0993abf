// Times the report renderers alone, in process, on one analysis: the text
// report, the JSON report kept whole (RenderJson) and the JSON report handed
// to a sink in pieces, as the CLI writes it (here a sink that only counts).
// What the JSON costs on top of the text in a whole run is bench/report.bench.sh.
//
// Usage: report_bench MODEL.onnx [--runs N]
// Prints per renderer: best and median milliseconds of N runs and the bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/report.h"

namespace {

struct Renderer {
  const char* name;                     // As printed.
  std::function<size_t()> render;       // One full rendering; returns its bytes.
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: report_bench MODEL.onnx [--runs N]\n", stderr);
    return 2;
  }
  const std::string path = argv[1];
  int runs = 10;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  absl::StatusOr<footprint::LoadedModel> loaded = footprint::LoadModel(path);
  if (!loaded.ok()) {
    std::fprintf(stderr, "report_bench: %s: %s\n", path.c_str(), std::string(loaded.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<footprint::Analysis> analysis =
      footprint::AnalyzeModel(*loaded, {.optimize_schedule = true, .alias = true, .inplace = true});
  if (!analysis.ok()) {
    std::fprintf(stderr, "report_bench: %s: %s\n", path.c_str(), std::string(analysis.status().message()).c_str());
    return 2;
  }
  const std::vector<Renderer> renderers = {
      {"text (RenderText)", [&] { return footprint::RenderText(*analysis).size(); }},
      {"json (RenderJson)", [&] { return footprint::RenderJson(*analysis).size(); }},
      {"json (to a sink)",
       [&] {
         size_t bytes = 0;
         footprint::JsonWriter json([&](std::string_view piece) { bytes += piece.size(); });
         json.BeginObject();
         footprint::WriteAnalysisJsonMembers(*analysis, json);
         json.EndObject();
         json.Flush();
         return bytes + 1;  // With the final newline, as RenderJson.
       }},
  };
  std::printf("%-20s %10s %10s %12s\n", "renderer", "best ms", "median ms", "bytes");
  for (const Renderer& renderer : renderers) {
    std::vector<double> milliseconds;
    size_t bytes = 0;
    for (int run = 0; run < runs; ++run) {
      const auto start = std::chrono::steady_clock::now();
      bytes = renderer.render();
      milliseconds.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(milliseconds.begin(), milliseconds.end());
    std::printf("%-20s %10.2f %10.2f %12zu\n", renderer.name, milliseconds.front(), milliseconds[milliseconds.size() / 2],
                bytes);
  }
  return 0;
}
