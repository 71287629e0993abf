// WriteFileAtomically: a report file is there whole, or not at all.
#include "analyzer/cli/output_file.h"

#include <filesystem>
#include <string>

#include "analyzer/testing/cli_runner.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::ReadWholeFile;
using ::footprint::testing::ScratchPath;

TEST(OutputFileTest, PiecesArriveInOrderAndReplaceTheOldFile) {
  const std::string path = ScratchPath("output_file_test/pieces.json");  // A folder of its own.
  ASSERT_TRUE(WriteFileAtomically(path, "old contents, longer than the new ones").ok());
  const absl::Status status = WriteFileAtomically(path, [](OutputSink sink) {
    sink("{\n");
    sink("");
    sink("  \"a\": 1\n");
    sink("}\n");
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ReadWholeFile(path), "{\n  \"a\": 1\n}\n");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
  }
}

TEST(OutputFileTest, AFolderThatIsNotThereIsAnErrorAndWritesNothing) {
  const std::string path = testing::ScratchDir() + "/absent-folder/report.json";  // Not created.
  bool produced = false;
  const absl::Status status = WriteFileAtomically(path, [&](OutputSink sink) {
    produced = true;
    sink("never written");
  });
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(produced) << "nothing is made when there is nowhere to write it";
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace footprint
