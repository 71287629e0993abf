// The memory a loaded model lives on (internal to the loader): one protobuf
// arena, its blocks from 2 MiB up mapped for transparent huge pages. Why:
// SharedModel in model_loader.h.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_ARENA_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_ARENA_H_

#include <cstdint>

#include "google/protobuf/arena.h"
#include "onnx/onnx_pb.h"

namespace footprint {

// The arena's options for a model read from a file of `file_bytes`.
google::protobuf::ArenaOptions ModelArenaOptions(uint64_t file_bytes);

// What a SharedModel of LoadModel owns.
struct ArenaModel {
  explicit ArenaModel(uint64_t file_bytes) : arena(ModelArenaOptions(file_bytes)) {}

  google::protobuf::Arena arena;  // Holds the model and all its parts.
  onnx::ModelProto* model = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);  // On `arena`.
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_ARENA_H_
