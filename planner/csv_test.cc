#include "planner/csv.h"

#include "gtest/gtest.h"

namespace footprint::planner {
namespace {

TEST(CsvTest, ReadsMiniMallocFormatWithHalfOpenLifespans) {
  const absl::StatusOr<Problem> problem = ParseProblemCsv("id,lower,upper,size\n0,0,3,1024\nb1,3,4,64\n");
  ASSERT_TRUE(problem.ok()) << problem.status();
  ASSERT_EQ(problem->buffers.size(), 2);
  EXPECT_EQ(problem->buffers[0], (Buffer{.id = "0", .lifespan = {0, 2}, .size = 1024}));
  EXPECT_EQ(problem->buffers[1], (Buffer{.id = "b1", .lifespan = {3, 3}, .size = 64}));
}

TEST(CsvTest, ReadsAlignmentAndPinnedOffsetInAnyColumnOrder) {
  const absl::StatusOr<Problem> problem =
      ParseProblemCsv("size,id,upper,lower,offset,alignment\r\n8,a,2,0,16,8\r\n4,b,2,1,,1\r\n");
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->buffers[0],
            (Buffer{.id = "a", .lifespan = {0, 1}, .size = 8, .alignment = 8, .pinned_offset = 16}));
  EXPECT_EQ(problem->buffers[1], (Buffer{.id = "b", .lifespan = {1, 1}, .size = 4}));
}

struct BadCsv {
  std::string text;
  std::string message;  // Expected at the start of the error message.
};

void PrintTo(const BadCsv& bad, std::ostream* out) { *out << bad.message; }

class BadCsvTest : public testing::TestWithParam<BadCsv> {};

TEST_P(BadCsvTest, NamesTheLine) {
  const absl::StatusOr<Problem> problem = ParseProblemCsv(GetParam().text);
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.status().message().substr(0, GetParam().message.size()), GetParam().message)
      << problem.status();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadCsvTest,
    testing::Values(BadCsv{.text = "", .message = "line 1: empty file"},
                    BadCsv{.text = "id,lower,size\n", .message = "line 1: the header lacks the 'upper' column"},
                    BadCsv{.text = "id,lower,upper,size,colour\n", .message = "line 1: unknown column 'colour'"},
                    BadCsv{.text = "id,lower,upper,size\n0,0,1,4\n1,0,1\n", .message = "line 3: expected 4 fields"},
                    BadCsv{.text = "id,lower,upper,size\n0,0,1,-4\n", .message = "line 2: size is negative"},
                    BadCsv{.text = "id,lower,upper,size\n0,2,2,4\n", .message = "line 2: upper (2) must be greater"},
                    BadCsv{.text = "id,lower,upper,size\n0,3,1,4\n", .message = "line 2: upper (1) must be greater"},
                    BadCsv{.text = "id,lower,upper,size\n0,0,1,4\n\n0,1,2,4\n", .message = "line 4: duplicate id '0'"},
                    BadCsv{.text = "id,lower,upper,size\n0,0,1,4k\n", .message = "line 2: size is not an integer"},
                    BadCsv{.text = "id,lower,upper,size\n0,x,1,4\n", .message = "line 2: lower is not an integer"},
                    BadCsv{.text = "id,lower,upper,size,alignment\n0,0,1,4,0\n", .message = "line 2: alignment"},
                    BadCsv{.text = "id,lower,upper,size,alignment,offset\n0,0,1,4,8,4\n",
                           .message = "line 2: offset 4 is not a multiple"}),
    [](const testing::TestParamInfo<BadCsv>& info) { return "Case" + std::to_string(info.index); });

TEST(CsvTest, WritesOffsetsBackInTheSameFormat) {
  const Problem problem = {.buffers = {{.id = "a", .lifespan = {0, 2}, .size = 8},
                                       {.id = "b", .lifespan = {1, 1}, .size = 4}}};
  EXPECT_EQ(WriteSolutionCsv(problem, {.offsets = {0, 8}}), "id,lower,upper,size,offset\na,0,3,8,0\nb,1,2,4,8\n");
  Problem aligned = problem;
  aligned.buffers[1].alignment = 4;
  EXPECT_EQ(WriteSolutionCsv(aligned, {.offsets = {0, 8}}),
            "id,lower,upper,size,alignment,offset\na,0,3,8,1,0\nb,1,2,4,4,8\n");
  const absl::StatusOr<Problem> round_trip = ParseProblemCsv(WriteSolutionCsv(aligned, {.offsets = {0, 8}}));
  ASSERT_TRUE(round_trip.ok());
  EXPECT_EQ(round_trip->buffers[1].pinned_offset, 8);
}

}  // namespace
}  // namespace footprint::planner
