// The field numbers of onnx.proto that the loader's wire walk and its checks
// read (internal to the loader), checked against onnx.proto (ONNX 1.12).
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_FIELDS_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_FIELDS_H_

#include <cstdint>

namespace footprint::field {

inline constexpr uint32_t kModelGraph = 7, kModelTrainingInfo = 20, kModelFunctions = 25;
inline constexpr uint32_t kTrainingInitialization = 1, kTrainingAlgorithm = 2;
inline constexpr uint32_t kFunctionNode = 7;
inline constexpr uint32_t kGraphNode = 1, kGraphInitializer = 5, kGraphSparseInitializer = 15;
inline constexpr uint32_t kNodeOutput = 2, kNodeAttribute = 5;
inline constexpr uint32_t kAttributeT = 5, kAttributeG = 6, kAttributeTensors = 10, kAttributeGraphs = 11,
                          kAttributeSparseTensor = 22, kAttributeSparseTensors = 23;
inline constexpr uint32_t kSparseValues = 1, kSparseIndices = 2;
inline constexpr uint32_t kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorInt32Data = 5,
                          kTensorStringData = 6, kTensorInt64Data = 7, kTensorName = 8, kTensorRawData = 9,
                          kTensorDoubleData = 10, kTensorUint64Data = 11, kTensorExternalData = 13,
                          kTensorDataLocation = 14;
inline constexpr uint32_t kEntryKey = 1, kEntryValue = 2;  // StringStringEntryProto (external_data).

}  // namespace footprint::field

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_ONNX_FIELDS_H_
