#include "analyzer/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace footprint {

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::string pattern = absl::StrCat(path, ".tmp.XXXXXX");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot write: ", std::strerror(errno)));
  const std::string temp(name.data());
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return absl::InternalError(absl::StrCat("cannot write: ", std::strerror(error)));
    }
    written += static_cast<size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot write: ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace footprint
