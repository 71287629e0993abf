#include "planner/exact.h"

#include <pthread.h>

#include <algorithm>
#include <functional>
#include <random>

#include "gtest/gtest.h"
#include "planner/greedy.h"
#include "planner/lower_bound.h"
#include "planner/testing/staircase.h"
#include "planner/validator.h"

namespace footprint::planner {
namespace {

// Greedy by size needs 10 bytes on the staircase; the optimum is the lower bound, 7
// (found by exhaustive search, see BruteForceArena below).
const Problem& kGreedyTrap = kStaircase;

// The least arena, by trying every offset of every buffer (tiny problems only).
Bytes BruteForceArena(const Problem& problem) {
  const std::vector<Buffer>& buffers = problem.buffers;
  const int n = static_cast<int>(buffers.size());
  Bytes best = 0;
  for (const Buffer& buffer : buffers) best += buffer.size + buffer.alignment;  // Stacking always fits.
  std::vector<Bytes> offsets(n, 0);
  std::function<void(int, Bytes)> place = [&](int i, Bytes arena) {
    if (arena >= best) return;
    if (i == n) {
      best = arena;
      return;
    }
    const Buffer& buffer = buffers[i];
    std::vector<Bytes> choices;
    if (buffer.pinned_offset.has_value()) {
      choices.push_back(*buffer.pinned_offset);
    } else {
      for (Bytes offset = 0; offset + buffer.size < best; offset += buffer.alignment) choices.push_back(offset);
    }
    for (Bytes offset : choices) {
      bool fits = true;
      for (int j = 0; j < i && fits; ++j) {
        if (buffers[j].size == 0 || buffer.size == 0 || !buffers[j].lifespan.Intersects(buffer.lifespan)) continue;
        fits = offset + buffer.size <= offsets[j] || offsets[j] + buffers[j].size <= offset;
      }
      if (!fits) continue;
      offsets[i] = offset;
      place(i + 1, std::max(arena, offset + buffer.size));
    }
  };
  place(0, 0);
  return best;
}

TEST(ExactTest, FindsTheOptimumGreedyMisses) {
  ASSERT_EQ(BruteForceArena(kGreedyTrap), 7);
  ASSERT_EQ(ArenaSize(kGreedyTrap, GreedyBySize(kGreedyTrap)), 10);
  const ExactResult result = MinimizeArena(kGreedyTrap, GreedyBySize(kGreedyTrap));
  EXPECT_TRUE(ValidateSolution(kGreedyTrap, result.solution).ok());
  EXPECT_EQ(result.arena_bytes, 7);
  EXPECT_TRUE(result.proven_optimal);
  EXPECT_TRUE(result.improved);
}

TEST(ExactTest, ProvesAnArenaAboveTheLowerBoundOptimal) {
  // Two 3-byte buffers live together, both aligned to 2: the lower bound is 6
  // but the second one cannot start before byte 4, so 7 is the least.
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 3, .alignment = 2},
                               {.id = "b", .lifespan = {1, 1}, .size = 3, .alignment = 2},
                           }};
  ASSERT_EQ(LowerBound(problem), 6);
  ASSERT_EQ(BruteForceArena(problem), 7);
  const ExactResult result = MinimizeArena(problem, {.offsets = {0, 4}});
  EXPECT_EQ(result.arena_bytes, 7);
  EXPECT_EQ(result.proven_lower_bound, 7);
  EXPECT_TRUE(result.proven_optimal);
}

TEST(ExactTest, DecisionSaysFitsOrImpossible) {
  const DecisionResult fits = FitWithinCapacity(kGreedyTrap, 7);
  ASSERT_EQ(fits.feasibility, Feasibility::kFits);
  EXPECT_TRUE(ValidateSolution(kGreedyTrap, fits.solution).ok());
  EXPECT_LE(ArenaSize(kGreedyTrap, fits.solution), 7);
  EXPECT_EQ(FitWithinCapacity(kGreedyTrap, 6).feasibility, Feasibility::kImpossible);
}

TEST(ExactTest, RespectsAlignment) {
  // a (3 bytes) and b (4 bytes, aligned to 4) live together: b cannot start at 3.
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 3},
                               {.id = "b", .lifespan = {1, 2}, .size = 4, .alignment = 4},
                           }};
  const ExactResult result = MinimizeArena(problem, {.offsets = {4, 8}});
  EXPECT_TRUE(ValidateSolution(problem, result.solution).ok());
  EXPECT_EQ(result.arena_bytes, 7);  // b at 0, a at 4.
  EXPECT_TRUE(result.proven_optimal);
}

TEST(ExactTest, KeepsPinnedBuffers) {
  const Problem problem = {.buffers = {
                               {.id = "pinned", .lifespan = {0, 3}, .size = 2, .pinned_offset = 2},
                               {.id = "a", .lifespan = {0, 1}, .size = 2},
                               {.id = "b", .lifespan = {1, 2}, .size = 2},
                           }};
  const ExactResult result = MinimizeArena(problem, {.offsets = {2, 4, 6}});
  EXPECT_TRUE(ValidateSolution(problem, result.solution).ok());
  EXPECT_EQ(result.solution.offsets[0], 2);
  EXPECT_EQ(result.arena_bytes, 6);  // One of a, b under the pinned buffer, the other above it.
}

TEST(ExactTest, SolvesPartsSplitByALongLivedBuffer) {
  // Two staircases one after the other, joined by a buffer live throughout:
  // once that one is placed, the two halves are independent.
  Problem problem;
  for (int copy = 0; copy < 2; ++copy) {
    for (const Buffer& buffer : kGreedyTrap.buffers) {
      Buffer shifted = buffer;
      shifted.id += std::to_string(copy);
      shifted.lifespan.first += 10 * copy;
      shifted.lifespan.last += 10 * copy;
      problem.buffers.push_back(shifted);
    }
  }
  problem.buffers.push_back({.id = "all", .lifespan = {0, 19}, .size = 2});
  const ExactResult result = MinimizeArena(problem, GreedyBySize(problem));
  EXPECT_TRUE(ValidateSolution(problem, result.solution).ok());
  EXPECT_EQ(result.arena_bytes, 9);  // The lower bound: 7 + 2.
  EXPECT_TRUE(result.proven_optimal);
  EXPECT_EQ(FitWithinCapacity(problem, 8).feasibility, Feasibility::kImpossible);
}

TEST(ExactTest, NodeLimitReturnsTheIncumbent) {
  const Solution greedy = GreedyBySize(kGreedyTrap);
  const ExactResult result = MinimizeArena(kGreedyTrap, greedy, {.max_nodes = 0});
  EXPECT_EQ(result.solution, greedy);
  EXPECT_FALSE(result.proven_optimal);
}

TEST(ExactTest, PastDeadlineReturnsTheIncumbent) {
  const Solution greedy = GreedyBySize(kGreedyTrap);
  const ExactResult result = MinimizeArena(kGreedyTrap, greedy, {.deadline = absl::InfinitePast()});
  EXPECT_EQ(result.arena_bytes, 10);
  EXPECT_FALSE(result.proven_optimal);
}

// The exact search against brute force on random tiny problems: same optimum,
// proven, and the decision search agrees one byte below it.
TEST(ExactTest, MatchesBruteForceOnRandomTinyProblems) {
  std::mt19937 random(20240601);
  for (int round = 0; round < 300; ++round) {
    Problem problem;
    const int count = 2 + static_cast<int>(random() % 5);
    for (int i = 0; i < count; ++i) {
      const Step first = random() % 5;
      const Step last = first + random() % 3;
      problem.buffers.push_back({.id = std::to_string(i),
                                 .lifespan = {first, last},
                                 .size = 1 + static_cast<Bytes>(random() % 4),
                                 .alignment = round % 3 == 0 ? 1 + static_cast<Bytes>(random() % 2) : 1});
    }
    if (round % 4 == 1) {
      // A buffer live throughout: the search splits the rest into parts once it is placed.
      problem.buffers.push_back({.id = "all", .lifespan = {0, 8}, .size = 1 + static_cast<Bytes>(random() % 2)});
    }
    const Bytes optimum = BruteForceArena(problem);
    const ExactResult result = MinimizeArena(problem, PlaceBestFit(problem, OrderByStart(problem)));
    SCOPED_TRACE(testing::Message() << "round " << round);
    ASSERT_TRUE(ValidateSolution(problem, result.solution).ok());
    EXPECT_EQ(result.arena_bytes, optimum);
    EXPECT_TRUE(result.proven_optimal);
    EXPECT_EQ(FitWithinCapacity(problem, optimum).feasibility, Feasibility::kFits);
    EXPECT_EQ(FitWithinCapacity(problem, optimum - 1).feasibility, Feasibility::kImpossible);
  }
}

// Runs `work` on a thread with a 256 KiB stack, as a library user's worker
// thread may have, and waits for it.
void RunOnSmallStack(const std::function<void()>& work) {
  pthread_attr_t attributes;
  ASSERT_EQ(pthread_attr_init(&attributes), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attributes, 256 * 1024), 0);
  pthread_t thread;
  auto run = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attributes, run, const_cast<std::function<void()>*>(&work)), 0);
  pthread_attr_destroy(&attributes);
  pthread_join(thread, nullptr);
}

// The search recurses once per buffer of a part. A chain of the largest part
// it takes (each buffer meets the next) is one part as deep as it gets; the
// caller's small stack must not matter (it overflowed before the search ran
// on a stack of its own).
TEST(ExactTest, TheLargestPartIsSearchedWhateverTheCallersStack) {
  Problem chain;
  for (int i = 0; i < kMaxExactPartitionBuffers; ++i) {
    chain.buffers.push_back({.id = std::to_string(i), .lifespan = {i, i + 1}, .size = 1 + i % 3});
  }
  Solution stacked;  // Every buffer above the last: valid, far from the least.
  Bytes top = 0;
  for (const Buffer& buffer : chain.buffers) {
    stacked.offsets.push_back(top);
    top += buffer.size;
  }
  DecisionResult decision;
  ExactResult result;
  RunOnSmallStack([&]() {
    decision = FitWithinCapacity(chain, top);
    result = MinimizeArena(chain, stacked);
  });
  EXPECT_EQ(decision.feasibility, Feasibility::kFits);
  EXPECT_TRUE(ValidateSolution(chain, decision.solution).ok());
  EXPECT_TRUE(ValidateSolution(chain, result.solution).ok());
  EXPECT_EQ(result.arena_bytes, LowerBound(chain));
  EXPECT_TRUE(result.proven_optimal);
}

}  // namespace
}  // namespace footprint::planner
