#include "analyzer/loader/external_data.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace footprint {
namespace {

std::optional<std::string> RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string result(resolved);
  free(resolved);
  return result;
}

bool IsInside(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.size() > dir.size() && path.substr(0, dir.size()) == dir && path[dir.size()] == '/';
}

}  // namespace

std::optional<std::string> NormalizeRelativePath(std::string_view location) {
  if (location.empty() || location.front() == '/' || location.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(absl::string_view(location.data(), location.size()), '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  if (parts.empty()) return std::nullopt;  // The folder itself is not a data file.
  return absl::StrJoin(parts, "/");
}

absl::StatusOr<ExternalFile> ExternalDataChecker::Check(std::string_view tensor_name,
                                                        std::string_view location) {
  const auto escapes = [&] {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", absl::CHexEscape(absl::string_view(tensor_name.data(), tensor_name.size())),
                                                   "': external data location '",
                                                   absl::CHexEscape(absl::string_view(location.data(), location.size())),
                                                   "' escapes the model folder"));
  };
  std::optional<std::string> normalized = NormalizeRelativePath(location);
  if (!normalized) return escapes();
  if (auto it = cache_.find(*normalized); it != cache_.end()) {
    if (it->second.problem == "escapes") return escapes();
    return it->second;
  }

  ExternalFile file;
  file.path = (model_dir_.empty() ? std::string(".") : model_dir_) + "/" + *normalized;
  if (!real_model_dir_) real_model_dir_ = RealPath(model_dir_.empty() ? "." : model_dir_).value_or("");

  struct stat info;
  if (lstat(file.path.c_str(), &info) != 0) {
    file.problem = errno == ENOENT || errno == ENOTDIR ? "no such file" : std::strerror(errno);
  } else if (real_model_dir_->empty()) {
    file.problem = "the model folder cannot be resolved";
  } else {
    std::optional<std::string> real = RealPath(file.path);
    if (!real) {
      // A dangling symlink (or a loop): never followed, so reported as missing.
      file.problem = errno == ENOENT ? "dangling symbolic link" : std::strerror(errno);
    } else if (!IsInside(*real, *real_model_dir_)) {
      cache_[*normalized] = ExternalFile{.problem = "escapes"};
      return escapes();
    } else if (stat(real->c_str(), &info) != 0) {
      file.problem = std::strerror(errno);
    } else if (!S_ISREG(info.st_mode)) {
      file.problem = "not a regular file";
    } else {
      file.found = true;
      file.size = static_cast<int64_t>(info.st_size);
    }
  }
  cache_[*normalized] = file;
  return file;
}

}  // namespace footprint
