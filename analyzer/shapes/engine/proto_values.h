// Internal to the shape engine: a SymValue from ONNX's protos (a declared
// type, an initializer, a Constant node) and back to a type, and the merge of
// what ONNX's whole-model pass or the model declares into what we found.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_PROTO_VALUES_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_PROTO_VALUES_H_

#include <set>
#include <string>

#include "analyzer/shapes/shape_engine.h"
#include "onnx/onnx_pb.h"

namespace footprint::symbolic {

// A declared type: kind, element type and dims ("unk__" dims unknown, a
// dim_param parsed as a formula); an unknown value "no type" for nullptr.
SymValue FromTypeProto(const onnx::TypeProto* type);
// Our value as ONNX's type, a symbolic dim as its printed expression.
void ToTypeProto(const SymValue& value, onnx::TypeProto& type);
// An initializer: its shape, and its values when kept and small.
SymValue FromTensorProto(const onnx::TensorProto& tensor);
// A Constant node's output, from whichever value attribute it has.
SymValue FromConstantNode(const onnx::NodeProto& node);
// Where ONNX's whole-model pass (or the model's own declarations) knows a
// value better than we do, take its dims: where ours is unknown, or a symbol
// we made up ourselves (an unnamed input dim, a trip count) against a number.
// A formula we derived from the input dims stands against a declared number
// (exporters write shapes traced at one size).
void MergeOnnxType(const onnx::TypeProto* type, SymValue& ours, const std::set<std::string>* made_up = nullptr);

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_PROTO_VALUES_H_
