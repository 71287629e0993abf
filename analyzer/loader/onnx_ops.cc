#include "analyzer/loader/onnx_ops.h"

#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"

namespace footprint {

bool IsInferenceBatchNorm(const onnx::NodeProto& node) {
  return IsDefaultDomain(node) && node.op_type() == "BatchNormalization" &&
         IntAttribute(node, "training_mode", 0) == 0;
}

}  // namespace footprint
