#include "analyzer/loader/isolated_call.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace footprint {
namespace {

void WriteAll(int fd, const std::string& bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

}  // namespace

absl::StatusOr<std::string> RunIsolated(const std::function<std::string()>& work, absl::Duration deadline) {
  const char* no_fork = std::getenv("FOOTPRINT_NO_FORK");
  if (no_fork != nullptr && std::string(no_fork) == "1") return work();

  int fds[2];
  if (::pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (child == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      WriteAll(fds[1], work());
    } catch (...) {
      code = 3;
    }
    ::close(fds[1]);
    // Straight to the kernel: no atexit handlers, no destructors of the
    // parent's objects, and no leak check of the child's copy of them (which
    // sanitizers would otherwise run from their _exit interceptor).
    ::syscall(SYS_exit_group, code);
  }
  ::close(fds[1]);
  std::string bytes;
  char buffer[1 << 16];
  const absl::Time end = absl::Now() + deadline;
  bool timed_out = false;
  while (true) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    pollfd descriptor{.fd = fds[0], .events = POLLIN, .revents = 0};
    const int ready = ::poll(&descriptor, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed its end (done or dead).
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat("did not finish within ", absl::FormatDuration(deadline)));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat("crashed (signal ", WTERMSIG(status), ", ", strsignal(WTERMSIG(status)),
                                            ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("failed (exit code ", WEXITSTATUS(status), ")"));
  }
  return bytes;
}

}  // namespace footprint
