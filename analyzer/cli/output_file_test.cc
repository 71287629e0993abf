// WriteFileAtomically: a report file is there whole, or not at all.
#include "analyzer/cli/output_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

std::string TempPath(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(footprint::testing::ScratchDir()) / "output_file_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

TEST(OutputFileTest, PiecesArriveInOrderAndReplaceTheOldFile) {
  const std::string path = TempPath("pieces.json");
  ASSERT_TRUE(WriteFileAtomically(path, "old contents, longer than the new ones").ok());
  const absl::Status status = WriteFileAtomically(path, [](OutputSink sink) {
    sink("{\n");
    sink("");
    sink("  \"a\": 1\n");
    sink("}\n");
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(ReadAll(path), "{\n  \"a\": 1\n}\n");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
  }
}

TEST(OutputFileTest, AFolderThatIsNotThereIsAnErrorAndWritesNothing) {
  const std::string path = TempPath("absent-folder/report.json");
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
