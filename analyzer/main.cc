#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli.h"

#ifdef FOOTPRINT_WITH_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char** argv) {
#ifdef FOOTPRINT_WITH_MIMALLOC
  // 2 MiB pages where the kernel offers them (transparent huge pages): a
  // large model's analysis touches tens of MiB once, and a fault per 4 KiB
  // page was a tenth of its time. The environment (MIMALLOC_LARGE_OS_PAGES=0)
  // still decides when set.
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) mi_option_enable(mi_option_large_os_pages);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return footprint::RunCli(args);
  } catch (const std::exception& error) {
    // Every error path returns a Status; reaching here is a bug of ours (or
    // memory exhausted). Say so in one line rather than abort with a core.
    std::cerr << "onnx-footprint: internal error: " << error.what() << " (please report it with the model)\n";
    return footprint::kExitBadInput;
  }
}
