// The acceptance sweeps, in process: every shared model and every Debian
// test model whose arena is fully sized, in the default modes, --baseline
// and --device stm32h743 (when it fits), gets its plan emitted in both
// formats, read back from JSON and replayed: no clobber. Then 200 plans are
// broken on purpose (one tensor moved over a live neighbour) and replay must
// name exactly that pair. Planner and scheduler budgets are 0 (heuristics
// only): a plan's correctness does not depend on how long it was searched.
#include <pthread.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>

#include "absl/strings/match.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/plan/plan_file.h"
#include "analyzer/plan/replay.h"
#include "analyzer/testing/shared_corpus.h"
#include "devices/device_catalog.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ModelsBelow(const std::string& root) {
  std::vector<std::string> models;
  std::error_code error;
  if (!fs::is_directory(root, error)) return models;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file() && it->path().extension() == ".onnx") models.push_back(it->path().string());
  }
  std::sort(models.begin(), models.end());
  return models;
}

// Runs `work` on a thread with a 256 MiB stack: the planner's exact search
// recurses, and AddressSanitizer's frames (make test-sanitize) outgrow the
// main thread's 8 MiB on the larger shared models.
void OnBigStack(const std::function<void()>& work) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, size_t{256} << 20);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  const bool started = pthread_create(&thread, &attributes, run, const_cast<std::function<void()>*>(&work)) == 0;
  pthread_attr_destroy(&attributes);
  if (started) {
    pthread_join(thread, nullptr);
  } else {
    work();
  }
}

struct Mode {
  const char* name;
  bool all_modes;
  const char* device;
};
constexpr Mode kModes[] = {{"default", true, "generic-cpu"}, {"baseline", false, "generic-cpu"},
                           {"stm32h743", true, "stm32h743"}};

AnalyzeOptions OptionsFor(const Mode& mode) {
  AnalyzeOptions options;
  options.alias = options.inplace = options.optimize_schedule = mode.all_modes;
  options.planner_time_limit = absl::ZeroDuration();
  options.schedule_time_limit = absl::ZeroDuration();
  options.device_profile = *devices::FindDevice(mode.device);
  return options;
}

bool FullySized(const Analysis& analysis) {
  return std::all_of(analysis.tensors.begin(), analysis.tensors.end(),
                     [](const TensorRecord& t) { return t.bytes.has_value(); });
}

struct SweepCounts {
  int models = 0;
  int plans = 0;
  int unsized = 0;
  int not_fitting = 0;
};

// Emits, reads back and replays the plan of `path` in every mode; failures
// are test failures naming the model and mode.
void SweepModel(const std::string& path, SweepCounts& counts, std::vector<ArenaPlan>* keep = nullptr) {
  absl::StatusOr<LoadedModel> loaded = LoadModel(path);
  if (!loaded.ok()) return;  // Models the analyzer refuses have no plan (sweep_models checks their exit).
  ++counts.models;
  const std::string hash = *ModelHash(path);
  for (const Mode& mode : kModes) {
    absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, OptionsFor(mode));
    if (!analysis.ok()) return;
    if (!FullySized(*analysis)) {
      ++counts.unsized;
      return;
    }
    if (std::string(mode.device) == "stm32h743" && analysis->fits != true) {
      ++counts.not_fitting;
      continue;
    }
    absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(*analysis, hash);
    ASSERT_TRUE(plan.ok()) << path << " " << mode.name << ": " << plan.status();
    absl::StatusOr<ArenaPlan> back = ParsePlanJson(RenderPlanJson(*plan));
    ASSERT_TRUE(back.ok()) << path << " " << mode.name << ": " << back.status();
    EXPECT_TRUE(absl::StrContains(RenderPlanHeader(*back, "plan"), "FP_PLAN_INITIALIZER"));
    absl::StatusOr<ReplayResult> result = ReplayPlan(*back);
    ASSERT_TRUE(result.ok()) << path << " " << mode.name << ": " << result.status();
    EXPECT_TRUE(result->ok) << path << " " << mode.name << ": " << result->failure;
    ++counts.plans;
    if (keep != nullptr) keep->push_back(*std::move(back));
  }
}

TEST(PlanSweep, EverySharedModelReplaysInEveryMode) {
  FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
  const std::vector<std::string> models = ModelsBelow(testing::SharedModelsDir());
  SweepCounts counts;
  OnBigStack([&] {
    for (const std::string& model : models) SweepModel(model, counts);
  });
  std::cout << counts.models << " shared models, " << counts.plans << " plans replayed, " << counts.unsized
            << " unsized (no plan), " << counts.not_fitting << " not fitting stm32h743\n";
  EXPECT_GT(counts.plans, 0);
}

TEST(PlanSweep, EveryFullySizedDebianModelReplaysInEveryMode) {
  const std::vector<std::string> models = ModelsBelow("/usr/share/libonnx-testdata/data");
  if (models.empty()) GTEST_SKIP() << "libonnx-testdata is not installed";
  SweepCounts counts;
  OnBigStack([&] {
    for (const std::string& model : models) SweepModel(model, counts);
  });
  std::cout << counts.models << " Debian models, " << counts.plans << " plans replayed, " << counts.unsized
            << " unsized (no plan), " << counts.not_fitting << " not fitting stm32h743\n";
  EXPECT_GT(counts.plans, 2 * static_cast<int>(models.size()));
}

bool Solo(const ArenaPlan& plan, int64_t id, const std::vector<bool>& shared) {
  return plan.tensors[id].size > 0 && !shared[id];
}

bool LiveTogether(const PlanTensor& a, const PlanTensor& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Moves a solo tensor X onto a live solo neighbour Y of its tier, where
// nothing else live with X overlaps X's new bytes; returns {X, Y}, or
// {-1, -1} when the plan has no such pair.
std::pair<int64_t, int64_t> MoveOntoNeighbour(ArenaPlan& plan, std::mt19937& random) {
  const int64_t n = static_cast<int64_t>(plan.tensors.size());
  std::vector<bool> shared(n, false);
  for (int64_t id = 0; id < n; ++id) {
    if (plan.tensors[id].shares_with >= 0) shared[id] = shared[plan.tensors[id].shares_with] = true;
  }
  for (int attempt = 0; attempt < 64 && n >= 2; ++attempt) {
    const int64_t x = std::uniform_int_distribution<int64_t>(0, n - 1)(random);
    const int64_t y = std::uniform_int_distribution<int64_t>(0, n - 1)(random);
    const PlanTensor& tx = plan.tensors[x];
    const PlanTensor& ty = plan.tensors[y];
    if (x == y || !Solo(plan, x, shared) || !Solo(plan, y, shared) || tx.tier != ty.tier) continue;
    if (!LiveTogether(tx, ty) || tx.offset == ty.offset) continue;
    const int64_t begin = ty.offset, end = ty.offset + tx.aligned_size;
    if (end > plan.tiers[tx.tier].arena_bytes) continue;
    bool only_y = true;
    for (int64_t z = 0; z < n && only_y; ++z) {
      const PlanTensor& tz = plan.tensors[z];
      if (z == x || z == y || tz.tier != tx.tier || tz.size == 0 || !LiveTogether(tx, tz)) continue;
      only_y = tz.offset + tz.size <= begin || tz.offset >= end;
    }
    if (!only_y) continue;
    plan.tensors[x].offset = ty.offset;
    return {x, y};
  }
  return {-1, -1};
}

TEST(PlanMutation, TwoHundredMovedTensorsAreEachCaughtNamingThePair) {
  std::vector<std::string> models = ModelsBelow("/usr/share/libonnx-testdata/data");
  for (const std::string& model : ModelsBelow(testing::SharedModelsDir())) models.push_back(model);
  if (models.empty()) GTEST_SKIP() << "no models";
  std::mt19937 random(13);
  std::shuffle(models.begin(), models.end(), random);
  int caught = 0, tried = 0;
  for (const std::string& model : models) {
    if (tried == 200) break;
    std::vector<ArenaPlan> plans;
    SweepCounts counts;
    OnBigStack([&] { SweepModel(model, counts, &plans); });
    for (ArenaPlan& plan : plans) {
      if (tried == 200) break;
      const auto [x, y] = MoveOntoNeighbour(plan, random);
      if (x < 0) continue;
      ++tried;
      absl::StatusOr<ReplayResult> result = ReplayPlan(plan);
      ASSERT_TRUE(result.ok()) << model << ": " << result.status();
      const auto sorted = [](int64_t a, int64_t b) { return std::pair<int64_t, int64_t>(std::min(a, b), std::max(a, b)); };
      const std::pair<int64_t, int64_t> named = sorted(result->overwritten, result->overwriter);
      EXPECT_FALSE(result->ok) << model << ": moving " << plan.tensors[x].name << " onto " << plan.tensors[y].name
                               << " went unnoticed";
      EXPECT_EQ(named, sorted(x, y)) << model << ": moved " << plan.tensors[x].name << " onto "
                                          << plan.tensors[y].name << "; replay said: " << result->failure;
      if (!result->ok && named == sorted(x, y)) ++caught;
    }
  }
  std::cout << caught << " of " << tried << " mutated plans caught, naming the moved pair\n";
  EXPECT_EQ(tried, 200);
}

}  // namespace
}  // namespace footprint
