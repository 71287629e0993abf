#include <pthread.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli/cli.h"

#ifdef FOOTPRINT_WITH_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char** argv) {
#ifdef FOOTPRINT_WITH_MIMALLOC
  // 2 MiB pages where the kernel offers them (transparent huge pages): a
  // large model's analysis touches tens of MiB once, and faulting them in
  // 4 KiB at a time was a third of its time. mimalloc gives huge pages only
  // to memory committed up front, hence the eager commit. The environment
  // (MIMALLOC_LARGE_OS_PAGES, MIMALLOC_EAGER_COMMIT_DELAY) still decides when set.
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) mi_option_enable(mi_option_large_os_pages);
  if (std::getenv("MIMALLOC_EAGER_COMMIT_DELAY") == nullptr) mi_option_set(mi_option_eager_commit_delay, 0);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  int exit_code = footprint::kExitBadInput;
  auto run = [&args, &exit_code] {
    try {
      exit_code = footprint::RunCli(args);
    } catch (const std::exception& error) {
      // Every error path returns a Status; reaching here is a bug of ours (or
      // memory exhausted). Say so in one line rather than abort with a core.
      std::cerr << "onnx-footprint: internal error: " << error.what() << " (please report it with the model)\n";
      exit_code = footprint::kExitBadInput;
    }
  };
#ifdef FOOTPRINT_WITH_MIMALLOC
  // On a thread of its own: the main thread's first segment was made before
  // main, without those options; a new thread's segments get them. Its
  // stack is as large as the main thread's usual 8 MiB, whatever ulimit says
  // (glibc would give 2 MiB under `ulimit -s unlimited`).
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) == 0) {
    pthread_t thread;
    const bool started = pthread_attr_setstacksize(&attributes, 8 << 20) == 0 &&
                         pthread_create(
                             &thread, &attributes,
                             [](void* work) -> void* {
                               (*static_cast<decltype(run)*>(work))();
                               return nullptr;
                             },
                             &run) == 0;
    pthread_attr_destroy(&attributes);
    if (started) {
      pthread_join(thread, nullptr);
      return exit_code;
    }
  }
#endif
  run();
  return exit_code;
}
