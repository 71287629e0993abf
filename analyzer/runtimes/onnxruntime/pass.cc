// The names of ORT's stages (pass.h).
#include "analyzer/runtimes/onnxruntime/pass.h"

#include "absl/strings/string_view.h"

namespace footprint::ort {

absl::string_view OrtStageName(OrtStage stage) {
  switch (stage) {
    case OrtStage::kLoad:
      return "load";
    case OrtStage::kBeforeLevel1:
      return "before level 1";
    case OrtStage::kLevel1:
      return "level 1";
    case OrtStage::kPartitioning:
      return "partitioning";
    case OrtStage::kInsertCast:
      return "insert casts";
    case OrtStage::kLevel2:
      return "level 2";
    case OrtStage::kLevel3:
      return "level 3";
    case OrtStage::kSessionState:
      return "session state";
  }
  return "";
}

}  // namespace footprint::ort
