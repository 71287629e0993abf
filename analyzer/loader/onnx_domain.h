// ONNX names its own operator domain two ways: "" and "ai.onnx". Every stage
// that asks "is this ONNX's op?" or keys a map by opset domain asks here, so
// that a model written either way gets the same answer everywhere.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_DOMAIN_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_DOMAIN_H_

#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace footprint {

// True for ONNX's own domain, however the model spells it.
inline bool IsDefaultDomain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }
inline bool IsDefaultDomain(const onnx::NodeProto& node) { return IsDefaultDomain(node.domain()); }

// The key of `domain` in an opset map: "" for ONNX's own, else the domain.
inline std::string OpsetKey(std::string_view domain) { return std::string(domain == "ai.onnx" ? "" : domain); }

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_DOMAIN_H_
