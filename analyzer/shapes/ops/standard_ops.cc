// The default domain's table of shape functions, filled by every op family
// (ops/standard_ops.h), behind FindStandardShapeFunction.
#include "analyzer/shapes/ops/standard_ops.h"

#include <string>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"

namespace footprint::symbolic {
namespace {

const ShapeFunctionTable& StandardFunctions() {
  static const auto* functions = [] {
    // Each op is in one family only (a second registration would override
    // the first, in the order of these calls).
    auto* m = new ShapeFunctionTable();
    AddShapeTensorFunctions(*m);
    AddElementwiseFunctions(*m);
    AddReshapeFunctions(*m);
    AddReduceNormFunctions(*m);
    AddConvPoolFunctions(*m);
    AddSequenceFunctions(*m);
    return m;
  }();
  return *functions;
}

}  // namespace

const ShapeFunction* FindStandardShapeFunction(const std::string& op_type) {
  return FindInTable(StandardFunctions(), op_type);
}

}  // namespace footprint::symbolic
