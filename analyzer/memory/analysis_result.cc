#include "analyzer/memory/analysis_result.h"

namespace footprint {

const char* TensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::kGraphInput:
      return "graph_input";
    case TensorRole::kActivation:
      return "activation";
    case TensorRole::kGraphOutput:
      return "graph_output";
    case TensorRole::kSubgraphWorkspace:
      return "subgraph_workspace";
    case TensorRole::kKernelWorkspace:
      return "kernel_workspace";
  }
  return "activation";
}

}  // namespace footprint
