// Models and files for the loader's tests (loader_test): a small model with
// weights to drop, nested subgraphs, external data, and lookups in what
// LoadModel returns. In namespace footprint, beside the tests that call them:
// loader_test links nothing else that could define these names.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_LOADER_TEST_UTIL_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_LOADER_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/loader/model_loader.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// A fresh folder under the test's temporary directory.
std::string MakeTempDir();

void WriteFile(const std::string& path, std::string_view bytes);

// A FLOAT tensor of `dims` with raw_data filled with a pattern.
onnx::TensorProto FloatTensor(const std::string& name, std::vector<int64_t> dims);

// A 1-D INT64 tensor holding `values` in int64_data.
onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values);

// Appends an `op` node to `graph`, named after `op` and its first output.
onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& op, std::vector<std::string> inputs,
                         std::vector<std::string> outputs);

// Appends a Constant node with `value` producing `output`.
void AddConstant(onnx::GraphProto& graph, const std::string& output, onnx::TensorProto value);

// X[1,64] -> MatMul(W[64,64]) -> Reshape(shape) -> Add(Constant bias) -> Y.
onnx::ModelProto SmallModel();

// The first tensor named `name` that LoadModel recorded, or nullptr.
const StoredTensor* FindTensor(const LoadedModel& loaded, const std::string& name);

// Nests `depth` If nodes, the innermost graph holding a 64 KiB Constant; with
// `both_branches` each If has it in both branches (2^depth copies).
onnx::ModelProto NestedIfModel(int depth, bool both_branches = true);

// Moves every initializer's raw_data into `dir`/`file`, one after another.
onnx::ModelProto Externalize(const onnx::ModelProto& model, const std::string& dir, const std::string& file,
                             const std::string& location);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_LOADER_TEST_UTIL_H_
