#include "analyzer/cli/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace footprint {

absl::Status WriteFileAtomically(const std::string& path, absl::FunctionRef<void(OutputSink)> produce) {
  std::string pattern = absl::StrCat(path, ".tmp.XXXXXX");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write: ", std::strerror(errno)));
  const std::string temp(name.data());
  int write_error = 0;  // The first failure; the pieces after it are dropped.
  produce([&](std::string_view piece) {
    while (write_error == 0 && !piece.empty()) {
      const ssize_t n = ::write(fd, piece.data(), piece.size());
      if (n < 0) {
        if (errno != EINTR) write_error = errno;
        continue;
      }
      piece.remove_prefix(static_cast<size_t>(n));
    }
  });
  if (write_error != 0) {
    ::close(fd);
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot write: ", std::strerror(write_error)));
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot write: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, [&](OutputSink sink) { sink(contents); });
}

}  // namespace footprint
