// Loads an ONNX model's structure without keeping its weights' bytes.
//
// Why: users analyze LLM exports with many GiB of weights in CI containers
// with little memory. The analysis needs each weight's dims and data type,
// never its values, except for small integer tensors that feed shape
// computations (Reshape's shape, Slice's starts...), which are kept.
#ifndef ONNX_FOOTPRINT_ANALYZER_MODEL_LOADER_H_
#define ONNX_FOOTPRINT_ANALYZER_MODEL_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace footprint {

struct LoadOptions {
  int64_t keep_data_up_to_bytes = 4096;  // Tensors with more data than this lose their values.
};

struct LoadedModel {
  onnx::ModelProto model;             // Initializers and Constant values keep dims and data_type.
  std::string path;                   // As given by the caller.
  std::vector<std::string> warnings;  // Non-fatal findings (e.g. a missing external data file).
};

// Errors (InvalidArgument / NotFound) carry a one-line message that does not
// repeat the path; the caller prefixes it.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const LoadOptions& options = {});

// Parses a model from bytes already in memory (tests, fuzzing). External data
// locations are resolved against `model_dir`.
absl::StatusOr<LoadedModel> LoadModelFromBytes(std::string_view bytes, const std::string& model_dir,
                                               const LoadOptions& options = {});

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MODEL_LOADER_H_
