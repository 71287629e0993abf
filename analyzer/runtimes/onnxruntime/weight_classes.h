// Facts about the weights of a graph ORT's load rules share
// (loaded_weights.cc): a weight's dims and bytes, where its bytes live (the
// file's inline data or an external file ORT maps), and which weights ORT's
// common subexpression elimination makes one value.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_WEIGHT_CLASSES_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_WEIGHT_CLASSES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// A weight's dims and bytes, when known.
struct KnownWeight {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  int64_t bytes = 0;
};

// `id`'s dims and bytes as the runtime holds it (nullopt: not all known).
std::optional<KnownWeight> Known(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                 ValueId id);

// An initializer, Constant or folded value.
bool IsWeight(const IrValue& value);

// Whether weight `value` is kept in an external data file (ORT maps it).
bool InExternalFile(const IrValue& value);

// The bytes of weight `id` in the file's own element type.
int64_t FileBytes(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id);

// Which weights hold one value after ORT's common subexpression elimination
// (common_subexpression_elimination.cc), which runs before constant folding:
// small constants of equal value are one, and nodes of one op, equal
// attributes and the same inputs are one node, so two ConstantOfShape of
// equal shapes and value fold into one weight that every reader shares.
class WeightClasses {
 public:
  explicit WeightClasses(const IrGraph& graph) : graph_(graph), class_of_(graph.values.size(), -1) {}

  // The first weight of `id`'s class (`id` itself when it has no twin).
  ValueId Of(ValueId id) {
    if (class_of_[id] >= 0) return class_of_[id];
    class_of_[id] = id;  // Guards against a cycle while the key is made.
    const std::optional<std::string> key = Key(id);
    if (key.has_value()) {
      class_of_[id] = representative_.try_emplace(*key, id).first->second;
    }
    return class_of_[id];
  }

 private:
  std::optional<std::string> Key(ValueId id);

  const IrGraph& graph_;
  std::vector<ValueId> class_of_;                           // Per value, -1 until asked.
  absl::flat_hash_map<std::string, ValueId> representative_;  // By value key: the first weight with it.
};


}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_WEIGHT_CLASSES_H_
