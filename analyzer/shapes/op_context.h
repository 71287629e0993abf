// Internal to the shape engine: what an op's shape function sees, and the
// helpers the shape functions share.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_OP_CONTEXT_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_OP_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "analyzer/shapes/shape_engine.h"

namespace footprint::symbolic {

class Engine;

struct OpContext {
  const onnx::NodeProto& node;
  int opset = 0;                          // Version of the node's domain.
  absl::InlinedVector<const SymValue*, 4> inputs;  // nullptr for an absent (empty-named) input.
  Engine* engine = nullptr;               // For bodies.
  const void* scope = nullptr;            // The engine's scope of this node (for bodies).

  const SymValue* Input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // The node's attributes, read by analyzer/loader/onnx_attributes.h's
  // Optional... forms: `fallback` when the attribute is missing or holds no
  // value of the type; Ints is nullopt only when it is missing.
  const onnx::AttributeProto* Attribute(const std::string& name) const;
  int64_t Int(const std::string& name, int64_t fallback) const;
  float Float(const std::string& name, float fallback) const;
  std::string String(const std::string& name, const std::string& fallback) const;
  std::optional<std::vector<int64_t>> Ints(const std::string& name) const;
};

// Returns true when the op is ours (outputs filled, possibly with unknown
// dims and a reason); false hands the node to ONNX's per-node inference.
using ShapeFunction = std::function<bool(const OpContext&, std::vector<SymValue>&)>;

// Default-domain ops with data propagation or symbolic shapes.
const ShapeFunction* FindStandardShapeFunction(const std::string& op_type);
// com.microsoft ops of exported transformers and quantized models.
const ShapeFunction* FindContribShapeFunction(const std::string& op_type);
// ai.onnx.ml ops ONNX 1.12 leaves without a shape function, and
// com.microsoft.extensions' DecodeImage/EncodeImage.
const ShapeFunction* FindMlShapeFunction(const std::string& op_type);

// LayerNormalization-style (Y, Mean, InvStdDev), shared with the default domain
// where onnxruntime registers SimplifiedLayerNormalization.
bool LayerNormShapeFunction(const OpContext& ctx, std::vector<SymValue>& out);

// Conv and pooling output shapes (auto_pad, pads, strides, dilations,
// ceil_mode), for symbolic spatial dims and for contrib pools.
bool PoolShapeFunction(const OpContext& ctx, std::vector<SymValue>& out);

// Helpers.
SymValue TensorOf(int32_t elem_type, std::vector<Expr> shape);

// Gemm's (M, N) from its A and B operands and transA/transB; nullopt unless
// both are ranked 2-D. Shared by Gemm and com.microsoft's QGemm.
std::optional<std::vector<Expr>> GemmOutputShape(const OpContext& ctx, const SymValue* a, const SymValue* b);
SymValue UnknownValue(const std::string& reason);
Expr ElementCount(const std::vector<Expr>& shape);
// Numpy-style broadcast; a dim pair it cannot decide becomes Unknown.
std::vector<Expr> Broadcast(const std::vector<Expr>& a, const std::vector<Expr>& b);
// "dims 8 and 16 do not broadcast ..." when two constants clash, else "".
std::string BroadcastConflict(const std::vector<Expr>& a, const std::vector<Expr>& b);
// Normalizes a possibly negative axis against rank; nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
// The integer values of an input, all known and constant.
std::optional<std::vector<int64_t>> ConstantInts(const SymValue* value);
bool IsIntegerType(int32_t elem_type);
bool IsFloatType(int32_t elem_type);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_OP_CONTEXT_H_
