// The loader's checks of the tensors its wire walk reads (internal to the
// loader; model_loader.cc walks, this checks).
//
// The walk reads each tensor's dims, type and bytes of values; this checks
// them: that its external data location stays inside the model's folder
// (external_data.h), how many bytes its external file holds for it, and that
// the bytes agree with its dims and type. Malformed external data entries are
// errors naming the tensor; disagreements, and missing or short external
// files, are warnings (one per external file: FinishWarnings).
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_CHECKS_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_CHECKS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/loader/external_data.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/loader/proto_wire.h"

namespace footprint {

class TensorChecker {
 public:
  // External data entries are read from `source`; their locations resolved
  // against `model_dir`. Warnings are added to `warnings`.
  TensorChecker(wire::Source& source, std::string model_dir, std::vector<std::string>& warnings)
      : source_(source), checker_(std::move(model_dir)), warnings_(warnings) {}

  // For a tensor whose data_location is EXTERNAL (its name set;
  // `expected_bytes` is what its dims and type say): reads its external_data
  // `entries` (StringStringEntryProto fields), checks the location and sets
  // stored_bytes, external_path and external_present. A malformed entry or a
  // location outside the model folder is an error naming the tensor.
  absl::Status CheckExternal(StoredTensor& tensor, const std::vector<wire::Span>& entries,
                             int64_t expected_bytes);

  // For a tensor stored inline: warns when the bytes of values it holds
  // differ from `expected_bytes`, what its dims and type say. Inline: the
  // walk calls it for every tensor, and it warns only on a mismatch.
  void CheckInlineBytes(const StoredTensor& tensor, int64_t expected_bytes) {
    if (!tensor.external && tensor.stored_bytes >= 0 && expected_bytes >= 0 &&
        tensor.stored_bytes != expected_bytes) {
      WarnInlineBytesDiffer(tensor, expected_bytes);
    }
  }

  // Call after the walk: warns of each missing or short external file, once
  // per file, in the order they were met.
  void FinishWarnings();

 private:
  // A missing or short external file, reported once per file.
  struct ExternalFinding {
    std::string location;      // As the first tensor naming it wrote it.
    std::string first_tensor;  // The first tensor stored in it.
    std::string problem;       // Empty when the file exists but is short.
    int64_t file_size = 0;     // Its size, when it exists.
    int64_t needed = 0;        // offset + length of the first tensor reading past the end.
    int tensors = 0;           // Tensors that find it missing or short.
  };

  void WarnInlineBytesDiffer(const StoredTensor& tensor, int64_t expected_bytes);

  wire::Source& source_;
  ExternalDataChecker checker_;
  std::vector<std::string>& warnings_;
  std::map<std::string, ExternalFinding> findings_;
  std::vector<std::string> finding_order_;
};

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_MODEL_CHECKS_H_
