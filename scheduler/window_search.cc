#include "scheduler/window_search.h"

#include <algorithm>
#include <optional>
#include <span>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"
#include "scheduler/exact_search.h"
#include "scheduler/segments.h"
#include "scheduler/step_model.h"

namespace footprint::scheduler {
namespace {

// A window's search gives up beyond this many executed sets: many small
// tries beat one exhausting search.
constexpr int64_t kWindowMaxStates = 50'000;

}  // namespace

bool ImproveByWindows(const FlatGraph& graph, std::vector<int>& order, int64_t good_enough,
                      absl::Time deadline) {
  const int num_nodes = static_cast<int>(order.size());
  if (num_nodes < 2) return false;
  const StepModel model = BuildStepModel(graph);
  // Each window's graph and model, built in memory kept from window to window.
  std::optional<Segmentation> cut;
  std::vector<int> starts;
  FlatGraph part;
  StepModelBuilder part_model;
  bool improved = false;
  int64_t tried_at_peak = -1;
  absl::flat_hash_set<int64_t> tried;  // Window start * 1000 + size, at peak tried_at_peak.
  for (int size : {16, 32, 64}) {
    const int window = std::min(size, num_nodes);
    bool progress = true;
    while (progress && absl::Now() < deadline) {
      progress = false;
      const std::vector<int64_t> live = ModelLiveBytesPerStep(model, order);
      const int64_t peak = *std::max_element(live.begin(), live.end());
      if (peak <= good_enough) return improved;
      if (peak != tried_at_peak) {
        tried.clear();
        tried_at_peak = peak;
      }
      for (int step = 0; step < num_nodes && !progress; ++step) {
        if (live[step] != peak) continue;
        const int first = std::clamp(step - window / 2, 0, num_nodes - window);
        if (!tried.insert(int64_t{first} * 1000 + window).second) continue;
        if (absl::Now() >= deadline) return improved;
        // The window is segment `wanted` of the cut at its two ends (ExtractPositions).
        starts.assign(1, 0);
        if (first > 0) starts.push_back(first);
        const int wanted = static_cast<int>(starts.size()) - 1;
        if (first + window < num_nodes) starts.push_back(first + window);
        if (cut.has_value()) {
          cut->Reset(order, starts);
        } else {
          cut.emplace(graph, order, starts);
        }
        cut->BuildGraph(wanted, part);
        const int64_t passing = cut->passing_bytes(wanted);
        // Steps outside the window keep their live bytes whatever its order.
        int64_t outside = good_enough;
        for (int k = 0; k < num_nodes; ++k) {
          if (k < first || k >= first + window) outside = std::max(outside, live[k]);
        }
        const ExactSearchResult exact =
            ExactSearch(part_model.Build(part),
                        {.upper_bound = peak - passing,
                         .good_enough = std::max<int64_t>(0, std::min(outside, peak - 1) - passing),
                         .deadline = deadline,
                         .max_states = kWindowMaxStates});
        if (exact.outcome != ExactOutcome::kFound) continue;
        const std::span<const int> part_nodes = cut->nodes(wanted);  // A copy of the order's.
        for (int i = 0; i < window; ++i) order[first + i] = part_nodes[exact.order[i]];
        improved = true;
        progress = true;
      }
    }
  }
  return improved;
}

bool ImproveByWindows(const DataflowGraph& graph, std::vector<int>& order, int64_t good_enough,
                      absl::Time deadline) {
  return ImproveByWindows(Flatten(graph), order, good_enough, deadline);
}

}  // namespace footprint::scheduler
