#include "testing/source_tree.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace footprint::layering {
namespace {

namespace fs = std::filesystem;

// Hidden folders anywhere; build output only at the root (where `make` and
// CMake put it), so that a source folder named builders/ is still checked.
bool SkippedFolder(const fs::path& path, bool at_root) {
  const std::string name = path.filename().string();
  if (absl::StartsWith(name, ".")) return true;
  return at_root && (absl::StartsWith(name, "build") || absl::StartsWith(name, "cmake-build"));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FilesBelow(const fs::path& root) {
  std::error_code error;
  if (!fs::is_directory(root, error)) return absl::NotFoundError(absl::StrCat(root.string(), ": not a folder"));
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(root, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (it->is_directory() && SkippedFolder(it->path(), it.depth() == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path().lexically_relative(root).generic_string());
  }
  if (error) return absl::InternalError(absl::StrCat(root.string(), ": ", error.message()));
  std::sort(files.begin(), files.end());
  return files;
}

bool IsSource(const std::string& file) {
  const std::string ext = fs::path(file).extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".c";
}

bool IsTest(const std::string& file) {
  const std::string stem = fs::path(file).stem().string();
  return absl::EndsWith(stem, "_test") || absl::EndsWith(stem, "_test_util") || absl::StartsWith(file, "testing/") ||
         absl::StrContains(file, "/testing/") || absl::StartsWith(file, "bench/");
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace footprint::layering
