// Tensor shapes: binding the user's dims, running ONNX's shape inference, and
// turning each value's type into a byte size or the reason it has none.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPES_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// One dimension as the report shows it: a number, a symbol, or unknown.
struct Dim {
  std::optional<int64_t> value;  // Set when the dim is known.
  std::string symbol;            // The dim_param when the dim is symbolic.

  bool operator==(const Dim&) const = default;
};

// What we know of a value's size.
struct SizedType {
  int32_t data_type = 0;              // TensorProto.DataType (0: unknown).
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown.
  std::optional<int64_t> bytes;       // Set when the size is known.
  std::string unsized_reason;         // Why `bytes` is unset.
};

// The user's --dim NAME=VALUE bindings.
using DimBindings = std::map<std::string, int64_t>;

// Replaces every dim_param named in `dims` by its value in the main graph's
// inputs, outputs and value_info. A name that no graph input uses is an error
// (a typo would otherwise bind nothing in silence).
absl::Status BindDims(const DimBindings& dims, onnx::ModelProto& model);

// Runs ONNX's own shape inference (data propagation on) on the whole model,
// subgraphs included. ONNX throws; this is the one place we catch it. A
// failure is not fatal: the shapes found so far stay, and the returned
// warning names the node and op where inference stopped.
std::vector<std::string> RunOnnxShapeInference(onnx::ModelProto& model);

// ONNX's inference runs in a child process (isolated_call.h) for at most
// this long: it takes well under a second on 100,000-node graphs, and a
// damaged model can make it spin.
inline constexpr absl::Duration kOnnxInferenceDeadline = absl::Seconds(8);

// Builds ONNX's operator schema registry now (call before starting threads
// that may fork: see batch.cc).
void PrepareOnnxSchemas();

// The types known in one graph after inference: inputs, outputs, value_info.
using TypeIndex = absl::flat_hash_map<std::string, const onnx::TypeProto*>;
TypeIndex IndexTypes(const onnx::GraphProto& graph);

// Sizing. Errors only on overflow or negative dims (malformed model).
absl::StatusOr<SizedType> SizeOfType(const onnx::TypeProto* type);
absl::StatusOr<SizedType> SizeOfTensorProto(const onnx::TensorProto& tensor);
absl::StatusOr<SizedType> SizeOfConstantValue(const onnx::NodeProto& constant);

// "1x3x224x224", "batchx3x?x?", "scalar", "?" (unknown rank).
std::string ShapeToString(const std::optional<std::vector<Dim>>& shape);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_SHAPES_H_
