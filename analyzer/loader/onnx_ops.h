// What an ONNX op does, where more than one stage must agree on it.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_OPS_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_OPS_H_

#include "onnx/onnx_pb.h"

namespace footprint {

// A BatchNormalization of ONNX's domain run for inference: no
// `training_mode`, or 0. Such a node is elementwise in X with per-channel
// constants; in training mode it reads all of X for the batch statistics
// first, and updates the running ones. Callers that need more (its optional
// outputs unused, its statistics weights) check that themselves.
bool IsInferenceBatchNorm(const onnx::NodeProto& node);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_OPS_H_
