// Real models against figures derived independently (testdata/golden/), and
// every plan re-checked here pair by pair, without the planner's validator.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

struct GoldenFigures {
  std::string model;          // Path under ../shared/models.
  int64_t weights_bytes = 0;  // As checked by tools/independent_figures.py.
  int64_t naive_bytes = 0;
  int64_t lower_bound_bytes = 0;
};

std::vector<GoldenFigures> ReadGolden() {
  std::ifstream file(std::string(FOOTPRINT_TESTDATA_DIR) + "/golden/baseline_figures.tsv");
  std::vector<GoldenFigures> golden;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() != 4) continue;
    GoldenFigures entry{.model = fields[0]};
    if (!absl::SimpleAtoi(fields[1], &entry.weights_bytes) || !absl::SimpleAtoi(fields[2], &entry.naive_bytes) ||
        !absl::SimpleAtoi(fields[3], &entry.lower_bound_bytes)) {
      continue;
    }
    golden.push_back(entry);
  }
  return golden;
}

struct SharingFigures {
  std::string model;                     // Path under ../shared/models.
  int64_t alias_lower_bound_bytes = 0;   // File order, aliasing: tools/independent_figures.py --sharing.
  int64_t shared_lower_bound_bytes = 0;  // File order, aliasing and in-place.
};

std::vector<SharingFigures> ReadSharingGolden() {
  std::ifstream file(std::string(FOOTPRINT_TESTDATA_DIR) + "/golden/sharing_figures.tsv");
  std::vector<SharingFigures> golden;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() != 3) continue;
    SharingFigures entry{.model = fields[0]};
    if (!absl::SimpleAtoi(fields[1], &entry.alias_lower_bound_bytes) ||
        !absl::SimpleAtoi(fields[2], &entry.shared_lower_bound_bytes)) {
      continue;
    }
    golden.push_back(entry);
  }
  return golden;
}

// The tensor that owns the bytes `tensor` occupies (itself when it owns them).
const TensorRecord& OwnerOf(const Analysis& analysis, const TensorRecord& tensor) {
  return tensor.shares_with_index < 0 ? tensor : analysis.tensors[tensor.shares_with_index];
}

// Quadratic and independent of planner/validator.cc on purpose. Tensors of
// one group (the same owner) may overlap each other, nothing else.
void ExpectValidPlan(const Analysis& analysis) {
  const int64_t alignment = analysis.device.alignment_bytes;
  std::vector<const TensorRecord*> planned;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (!tensor.bytes.has_value()) continue;
    ASSERT_TRUE(tensor.offset.has_value()) << tensor.name;
    EXPECT_EQ(*tensor.offset % alignment, 0) << tensor.name;
    EXPECT_LE(*tensor.offset + tensor.aligned_bytes, analysis.memory.arena_bytes) << tensor.name;
    if (tensor.aligned_bytes > 0) planned.push_back(&tensor);
  }
  int overlaps = 0;
  for (size_t i = 0; i < planned.size(); ++i) {
    for (size_t j = i + 1; j < planned.size(); ++j) {
      const TensorRecord& a = *planned[i];
      const TensorRecord& b = *planned[j];
      if (&OwnerOf(analysis, a) == &OwnerOf(analysis, b)) {
        EXPECT_EQ(a.offset, b.offset) << a.name << " and " << b.name << " share bytes at different offsets";
        continue;
      }
      const bool same_time = a.first_step <= b.last_step && b.first_step <= a.last_step;
      const bool same_bytes = *a.offset < *b.offset + b.aligned_bytes && *b.offset < *a.offset + a.aligned_bytes;
      if (same_time && same_bytes && ++overlaps <= 3) ADD_FAILURE() << a.name << " overlaps " << b.name;
    }
  }
  EXPECT_EQ(overlaps, 0);
}

TEST(GoldenTest, SharedModelsMatchIndependentFigures) {
  const std::vector<GoldenFigures> golden = ReadGolden();
  ASSERT_EQ(golden.size(), 7u) << "testdata/golden/baseline_figures.tsv unreadable";
  int analyzed = 0;
  for (const GoldenFigures& entry : golden) {
    const std::string path = std::string(FOOTPRINT_SHARED_DIR) + "/models/" + entry.model;
    if (!std::ifstream(path).good()) continue;  // shared/ absent: checked below.
    SCOPED_TRACE(entry.model);
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, AnalyzeOptions{});
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    const MemoryFigures& memory = analysis->memory;
    EXPECT_EQ(memory.weights_bytes, entry.weights_bytes);
    EXPECT_EQ(memory.naive_bytes, entry.naive_bytes);
    EXPECT_EQ(memory.lower_bound_bytes, entry.lower_bound_bytes);
    EXPECT_GE(memory.arena_bytes, memory.lower_bound_bytes);
    EXPECT_EQ(memory.reuse_savings_bytes, memory.naive_bytes - memory.arena_bytes);
    EXPECT_EQ(memory.peak_bytes, memory.weights_bytes + memory.arena_bytes);
    EXPECT_EQ(memory.unsized_tensors, 0);
    ExpectValidPlan(*analysis);
    ++analyzed;
  }
  if (analyzed == 0) GTEST_SKIP() << "no shared models at " << FOOTPRINT_SHARED_DIR;
  EXPECT_EQ(analyzed, 7);
}

TEST(GoldenTest, SharingOnTheFileOrderMatchesIndependentFigures) {
  const std::vector<SharingFigures> golden = ReadSharingGolden();
  ASSERT_EQ(golden.size(), 7u) << "testdata/golden/sharing_figures.tsv unreadable";
  int analyzed = 0;
  for (const SharingFigures& entry : golden) {
    const std::string path = std::string(FOOTPRINT_SHARED_DIR) + "/models/" + entry.model;
    if (!std::ifstream(path).good()) continue;
    SCOPED_TRACE(entry.model);
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, AnalyzeOptions{.alias = true, .inplace = true});
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    EXPECT_EQ(analysis->modes.alias.lower_bound_bytes, entry.alias_lower_bound_bytes);
    EXPECT_EQ(analysis->memory.lower_bound_bytes, entry.shared_lower_bound_bytes);
    EXPECT_EQ(analysis->modes.inplace.lower_bound_bytes, entry.shared_lower_bound_bytes);
    EXPECT_GE(analysis->memory.arena_bytes, analysis->memory.lower_bound_bytes);
    ExpectValidPlan(*analysis);
    ++analyzed;
  }
  if (analyzed == 0) GTEST_SKIP() << "no shared models at " << FOOTPRINT_SHARED_DIR;
  EXPECT_EQ(analyzed, 7);
}

TEST(GoldenTest, EveryModeKeepsTheBaselineBoundAndAValidPlan) {
  const std::vector<GoldenFigures> golden = ReadGolden();
  int analyzed = 0;
  for (const GoldenFigures& entry : golden) {
    const std::string path = std::string(FOOTPRINT_SHARED_DIR) + "/models/" + entry.model;
    if (!std::ifstream(path).good()) continue;
    SCOPED_TRACE(entry.model);
    absl::StatusOr<LoadedModel> loaded = LoadModel(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    absl::StatusOr<Analysis> analysis =
        AnalyzeModel(*loaded, AnalyzeOptions{.optimize_schedule = true, .alias = true, .inplace = true});
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    const ModesSummary& modes = analysis->modes;
    EXPECT_EQ(modes.baseline_lower_bound_bytes, entry.lower_bound_bytes);
    EXPECT_LE(modes.schedule.lower_bound_bytes, modes.baseline_lower_bound_bytes);
    EXPECT_LE(modes.alias.lower_bound_bytes, modes.schedule.lower_bound_bytes);
    EXPECT_LE(modes.inplace.lower_bound_bytes, modes.alias.lower_bound_bytes);
    EXPECT_EQ(analysis->memory.lower_bound_bytes, modes.inplace.lower_bound_bytes);
    EXPECT_EQ(analysis->memory.naive_bytes, entry.naive_bytes);  // One buffer per tensor in every mode.
    int64_t live_peak = 0;
    for (int64_t bytes : analysis->live_bytes_per_step) live_peak = std::max(live_peak, bytes);
    EXPECT_EQ(live_peak, analysis->memory.lower_bound_bytes);
    ExpectValidPlan(*analysis);
    // One tier at the device's alignment: the tier plan is the single arena's.
    ASSERT_EQ(analysis->tiers.size(), 1u);
    EXPECT_EQ(analysis->tiers[0].arena_bytes, analysis->memory.arena_bytes);
    for (const TensorRecord& tensor : analysis->tensors) {
      if (tensor.bytes.has_value()) {
        EXPECT_EQ(tensor.tier_offset, tensor.offset) << tensor.name;
      }
    }
    ++analyzed;
  }
  if (analyzed == 0) GTEST_SKIP() << "no shared models at " << FOOTPRINT_SHARED_DIR;
  EXPECT_EQ(analyzed, 7);
}

}  // namespace
}  // namespace footprint
