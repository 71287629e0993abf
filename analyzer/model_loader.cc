#include "analyzer/model_loader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

int64_t StoredDataBytes(const onnx::TensorProto& tensor) {
  return static_cast<int64_t>(tensor.raw_data().size()) + tensor.float_data_size() * 4 +
         tensor.int32_data_size() * 4 + tensor.int64_data_size() * 8 + tensor.double_data_size() * 8 +
         tensor.uint64_data_size() * 8;
}

void DropLargeData(onnx::TensorProto& tensor, const LoadOptions& options) {
  if (StoredDataBytes(tensor) <= options.keep_data_up_to_bytes) return;
  tensor.clear_raw_data();
  tensor.clear_float_data();
  tensor.clear_int32_data();
  tensor.clear_int64_data();
  tensor.clear_double_data();
  tensor.clear_uint64_data();
}

void DropLargeData(onnx::GraphProto& graph, const LoadOptions& options) {
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) DropLargeData(tensor, options);
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) DropLargeData(*attribute.mutable_t(), options);
      if (attribute.has_g()) DropLargeData(*attribute.mutable_g(), options);
      for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) DropLargeData(subgraph, options);
    }
  }
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModelFromBytes(std::string_view bytes, const std::string& model_dir,
                                               const LoadOptions& options) {
  LoadedModel loaded;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !loaded.model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not an ONNX model (protobuf parse failed)");
  }
  if (!loaded.model.has_graph()) return absl::InvalidArgumentError("not an ONNX model (no graph)");
  DropLargeData(*loaded.model.mutable_graph(), options);
  return loaded;
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const LoadOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError("cannot open the file");
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(contents.str(), dir, options);
  if (loaded.ok()) loaded->path = path;
  return loaded;
}

}  // namespace footprint
