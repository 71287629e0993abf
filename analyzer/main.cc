#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "analyzer/cli.h"

int main(int argc, char** argv) {
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
