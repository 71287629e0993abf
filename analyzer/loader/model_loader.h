// Loads an ONNX model's structure without keeping its weights' bytes.
//
// Why: users analyze LLM exports with many GiB of weights in CI containers
// with little memory. The analysis needs each weight's dims and data type,
// never its values, except for small integer tensors that feed shape
// computations (Reshape's shape, Slice's starts...), which are kept.
//
// How (why not just ParseFromArray):
// - the file's protobuf wire format is walked field by field (ModelProto ->
//   graph -> nodes -> attributes -> subgraphs, training graphs and functions
//   included), read with pread in small windows (see wire::Source): skipping
//   a length-delimited field reads only its length, so the weights are never
//   read and memory does not grow with them;
// - every TensorProto (initializers, Constant values, tensor attributes,
//   sparse tensors) goes into the model without its data fields when it
//   holds more than keep_data_up_to_bytes;
// - everything else is parsed by protobuf from the bytes read, in runs of
//   adjacent fields (consecutive nodes without a tensor or graph attribute
//   make one run); the 2 GiB protobuf limit applies to the structure (as if
//   serialized), not to the file;
// - the bytes read are freed (their buffer reused) every 1 MiB;
// - external data is never opened: each location is checked to stay inside
//   the model's folder (see external_data.h), and a missing or short file is a
//   warning.
// Every pass is linear in the file's structure (not its weights); subgraph
// nesting is limited to kMaxGraphDepth, so malformed input is an error, never
// a crash, a hang or unbounded recursion. A read that fails, or a file that
// another process cuts short while it is read, is an error too.
// Not guaranteed:
// - memory still grows with the structure: nodes, names and the small
//   tensors that are kept (about 1.4 KiB per node on bench's blocks model);
// - values stored externally are never read, even small ones: a shape tensor
//   saved as external data has dims and type but no values.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_LOADER_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace footprint {

inline constexpr int kMaxGraphDepth = 64;  // Subgraphs (If/Loop/Scan bodies) nested deeper are refused.

struct LoadOptions {
  int64_t keep_data_up_to_bytes = 4096;  // Tensors with more data than this lose their values.
};

// One tensor value stored in the model: an initializer, a Constant's value or
// another tensor attribute, in the main graph, a subgraph or a function.
struct StoredTensor {
  std::string name;            // TensorProto.name, or the node's first output when it has none.
  int32_t data_type = 0;       // onnx::TensorProto::DataType.
  std::vector<int64_t> dims;   // As stored.
  int64_t stored_bytes = -1;   // Bytes of values in the file (inline, or the external length); -1 unknown.
  bool data_dropped = false;   // Its values were left out of LoadedModel::model.
  bool external = false;       // data_location == EXTERNAL.
  std::string external_path;   // The model folder joined with the normalized location (external only).
  bool external_present = false;  // That file exists and holds offset + length bytes (external only).
};

// A read-only onnx::ModelProto with the memory it lives in.
//
// Why an arena: the structure of an 18,000-node model is about half a million
// protobuf objects (messages, strings, repeated fields). LoadModel parses them
// onto one google::protobuf::Arena: allocated from a few large blocks, freed
// with the blocks, not one by one. The blocks from 2 MiB up are mapped for
// transparent huge pages, so that the kernel faults them in 2 MiB at a time
// (page faults were most of the parse's time on large models).
//
// Read it as a `const onnx::ModelProto&` (it converts implicitly), or through
// `->` and `*`. Copies share one model. It converts from an onnx::ModelProto
// too, so that `LoadedModel{.model = builder.Build()}` holds a model made in
// memory.
class SharedModel {
 public:
  SharedModel() : model_(std::shared_ptr<void>(), &onnx::ModelProto::default_instance()) {}
  SharedModel(onnx::ModelProto model)  // NOLINT(google-explicit-constructor): see above.
      : model_(std::make_shared<const onnx::ModelProto>(std::move(model))) {}
  // `model` stays valid as long as `owner` lives.
  SharedModel(std::shared_ptr<const void> owner, const onnx::ModelProto* model) : model_(std::move(owner), model) {}

  const onnx::ModelProto& get() const { return *model_; }
  operator const onnx::ModelProto&() const { return *model_; }  // NOLINT(google-explicit-constructor)
  const onnx::ModelProto& operator*() const { return *model_; }
  const onnx::ModelProto* operator->() const { return model_.get(); }

 private:
  std::shared_ptr<const onnx::ModelProto> model_;
};

struct LoadedModel {
  SharedModel model;                  // Initializers and Constant values keep dims and data_type.
  std::string path;                   // As given by the caller.
  std::vector<std::string> warnings;  // Non-fatal findings (e.g. a missing external data file).
  std::vector<StoredTensor> tensors;  // Every stored tensor met, in file order.
  int64_t file_bytes = 0;             // Size of the model file itself.
  int64_t dropped_bytes = 0;          // Inline payload bytes left out of `model`.
};

// Errors (InvalidArgument / NotFound) carry a one-line message that does not
// repeat the path; the caller prefixes it.
absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const LoadOptions& options = {});

// Parses a model from bytes already in memory (tests, fuzzing). External data
// locations are resolved against `model_dir`.
absl::StatusOr<LoadedModel> LoadModelFromBytes(std::string_view bytes, const std::string& model_dir,
                                               const LoadOptions& options = {});

// Bits per element of an ONNX data type as in the memory model (float 32,
// int4 4, ...); 0 for strings and unknown types, which have no byte size.
int ElementBits(int32_t data_type);

// ceil(element count x bits / 8) for dense dims; -1 when the type has no
// byte size, a dim is negative or the size overflows int64.
int64_t DenseByteSize(int32_t data_type, const std::vector<int64_t>& dims);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_LOADER_H_
