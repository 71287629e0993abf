// Where a tensor's external data lives, checked without reading a byte of it.
//
// Why: a model names its external data files by relative `location`s. A
// hostile model could name /etc/shadow, ../../secrets or a symlink pointing
// out of its folder (ONNX's CVE-2022-25882). The analyzer only needs sizes, so
// it never opens these files; it still refuses any location that leaves the
// model's folder, so that no report ever confirms or sizes a file outside it.
//
// The check, for each location:
// - refuse an empty or absolute location, or one with a NUL byte;
// - normalize it lexically ('.' and '..' components); refuse it when a '..'
//   climbs above the model folder;
// - if the file exists, resolve symlinks (realpath) and refuse it unless it
//   is inside the model folder's own realpath;
// - a missing file, or one that is not a regular file, is reported (the caller
//   turns it into a warning), not an error.
// Not guaranteed: a file replaced between this check and a later use (TOCTOU);
// we never use the file, so nothing later depends on it.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_EXTERNAL_DATA_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_EXTERNAL_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"

namespace footprint {

struct ExternalFile {
  std::string path;     // The model folder joined with the normalized location.
  bool found = false;   // A regular file inside the model folder.
  int64_t size = -1;    // Its size in bytes (stat), -1 when not found.
  std::string problem;  // Why it was not found ("no such file", "not a regular file"...).
};

class ExternalDataChecker {
 public:
  explicit ExternalDataChecker(std::string model_dir) : model_dir_(std::move(model_dir)) {}

  // InvalidArgument "tensor 'NAME': external data location 'LOC' escapes the
  // model folder" when `location` leaves the folder; otherwise the file's
  // status. Results are cached per normalized location, so that thousands of
  // tensors sharing one weights file cost one stat.
  absl::StatusOr<ExternalFile> Check(std::string_view tensor_name, std::string_view location);

 private:
  std::string model_dir_;
  std::optional<std::string> real_model_dir_;  // Resolved on first use; "" when it cannot be.
  std::unordered_map<std::string, ExternalFile> cache_;
};

// Lexically normalizes a relative path ("a/./b/../c" -> "a/c"); nullopt when
// it is absolute, empty, has a NUL byte or climbs above its start.
std::optional<std::string> NormalizeRelativePath(std::string_view location);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_EXTERNAL_DATA_H_
