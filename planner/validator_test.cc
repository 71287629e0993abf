#include "planner/validator.h"

#include "gtest/gtest.h"

namespace footprint::planner {
namespace {

const Problem kTwoOverlapping = {.buffers = {
                                     {.id = "a", .lifespan = {0, 2}, .size = 64, .alignment = 64},
                                     {.id = "b", .lifespan = {2, 3}, .size = 64, .alignment = 64},
                                 }};

TEST(ValidatorTest, AcceptsDisjointRanges) {
  EXPECT_TRUE(ValidateSolution(kTwoOverlapping, {.offsets = {0, 64}}).ok());
  EXPECT_TRUE(ValidateSolution(kTwoOverlapping, {.offsets = {64, 0}}).ok());
}

TEST(ValidatorTest, CatchesOverlapInBytesAndTime) {
  const absl::Status status = ValidateSolution(kTwoOverlapping, {.offsets = {0, 0}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("overlap"), std::string_view::npos) << status;
}

TEST(ValidatorTest, CatchesPartialOverlapFromBelow) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 5}, .size = 100},
                               {.id = "b", .lifespan = {1, 1}, .size = 100},
                               {.id = "c", .lifespan = {3, 4}, .size = 10},
                           }};
  EXPECT_TRUE(ValidateSolution(problem, {.offsets = {0, 100, 100}}).ok());
  EXPECT_FALSE(ValidateSolution(problem, {.offsets = {0, 100, 95}}).ok());
}

TEST(ValidatorTest, SameBytesAtDisjointStepsAreFine) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = 64},
                               {.id = "b", .lifespan = {2, 3}, .size = 64},
                           }};
  EXPECT_TRUE(ValidateSolution(problem, {.offsets = {0, 0}}).ok());
}

TEST(ValidatorTest, CatchesMisalignedOffset) {
  const absl::Status status = ValidateSolution(kTwoOverlapping, {.offsets = {0, 96}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("multiple of 64"), std::string_view::npos) << status;
}

TEST(ValidatorTest, CatchesWrongCountNegativePinnedAndCapacity) {
  EXPECT_FALSE(ValidateSolution(kTwoOverlapping, {.offsets = {0}}).ok());
  EXPECT_FALSE(ValidateSolution(kTwoOverlapping, {.offsets = {-64, 0}}).ok());
  Problem pinned = kTwoOverlapping;
  pinned.buffers[0].pinned_offset = 128;
  EXPECT_FALSE(ValidateSolution(pinned, {.offsets = {0, 64}}).ok());
  EXPECT_TRUE(ValidateSolution(pinned, {.offsets = {128, 0}}).ok());
  Problem bounded = kTwoOverlapping;
  bounded.capacity = 100;
  EXPECT_FALSE(ValidateSolution(bounded, {.offsets = {0, 64}}).ok());
}

TEST(ValidatorTest, ZeroSizeBuffersNeverOverlap) {
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 3}, .size = 64},
                               {.id = "empty", .lifespan = {0, 3}, .size = 0},
                           }};
  EXPECT_TRUE(ValidateSolution(problem, {.offsets = {0, 0}}).ok());
}

TEST(ValidateProblemTest, RejectsBadBuffers) {
  EXPECT_FALSE(ValidateProblem({.buffers = {{.id = "a", .lifespan = {0, 1}, .size = -1}}}).ok());
  EXPECT_FALSE(ValidateProblem({.buffers = {{.id = "a", .lifespan = {2, 1}, .size = 1}}}).ok());
  EXPECT_FALSE(ValidateProblem({.buffers = {{.id = "a", .lifespan = {0, 1}, .size = 1, .alignment = 0}}}).ok());
  EXPECT_TRUE(ValidateProblem({.buffers = {{.id = "a", .lifespan = {0, 1}, .size = 1}}}).ok());
}

TEST(ValidateProblemTest, RejectsCollidingPinnedBuffers) {
  const Problem problem = {.buffers = {{.id = "a", .lifespan = {0, 1}, .size = 8, .pinned_offset = 0},
                                       {.id = "b", .lifespan = {1, 2}, .size = 8, .pinned_offset = 4}}};
  const absl::Status status = ValidateProblem(problem);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("pinned buffers collide"), std::string_view::npos) << status;
  Problem apart = problem;
  apart.buffers[1].pinned_offset = 8;
  EXPECT_TRUE(ValidateProblem(apart).ok());
}

TEST(ValidatorTest, RefusesProblemsWhoseTotalSizeOverflows) {
  // Each size fits in 64 bits; their sum, which the lower bound's sweep and
  // every planner's offsets can reach, does not.
  const Bytes three_eighths = Bytes{3} << 60;
  const Problem problem = {.buffers = {
                               {.id = "a", .lifespan = {0, 1}, .size = three_eighths},
                               {.id = "b", .lifespan = {1, 2}, .size = three_eighths},
                               {.id = "c", .lifespan = {1, 2}, .size = three_eighths},
                           }};
  const absl::Status status = ValidateProblem(problem);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_NE(status.message().find("'c'"), std::string_view::npos) << status;
  EXPECT_TRUE(ValidateProblem({.buffers = {problem.buffers[0], problem.buffers[1]}}).ok());
}

}  // namespace
}  // namespace footprint::planner
