#include "planner/search_stack.h"

#include <pthread.h>

#include <algorithm>

namespace footprint::planner {
namespace {

// Sanitizers pad every frame with redzones (8256 bytes a level measured under
// AddressSanitizer, 464 without): the margin follows the build.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kBytesPerLevel = 16 * 1024;
#else
constexpr size_t kBytesPerLevel = 2 * 1024;
#endif
constexpr size_t kReserveBytes = 1024 * 1024;  // Decide's own frames, sorting, the C library.

struct Call {
  absl::FunctionRef<void()> work;
};

void* RunCall(void* arg) {
  static_cast<Call*>(arg)->work();
  return nullptr;
}

}  // namespace

size_t SearchStackBytes(size_t depth) {
  const size_t bytes = kReserveBytes + depth * kBytesPerLevel;
  return std::max<size_t>(bytes, PTHREAD_STACK_MIN);
}

bool RunWithSearchStack(size_t depth, absl::FunctionRef<void()> work) {
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) != 0) return false;
  Call call = {.work = work};
  pthread_t thread;
  const bool started = pthread_attr_setstacksize(&attributes, SearchStackBytes(depth)) == 0 &&
                       pthread_create(&thread, &attributes, &RunCall, &call) == 0;
  pthread_attr_destroy(&attributes);
  if (!started) return false;
  pthread_join(thread, nullptr);
  return true;
}

}  // namespace footprint::planner
