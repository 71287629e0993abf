// Replay: the proof that a plan is right. Each tier's arena is a real buffer
// served by runtime/fp_arena (its checked build); the schedule is walked
// step by step. At each step every tensor that dies there is first checked
// to still hold the bytes its producer wrote (a pattern derived from the
// tensor id, compared in full), then the node's outputs are filled with
// their own patterns, then every tensor dying at the step is checked again,
// except one an in-place output of this step legitimately wrote over. An
// alias writes nothing: it must hold the bytes of the tensor it views. A
// tensor overwritten while live is found at its last step at the latest,
// and the last writer of its first wrong byte is named.
#ifndef ONNX_FOOTPRINT_ANALYZER_PLAN_REPLAY_H_
#define ONNX_FOOTPRINT_ANALYZER_PLAN_REPLAY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/plan/plan_file.h"

namespace footprint {

struct ReplayResult {
  bool ok = true;              // No live tensor was overwritten and the library saw no violation.
  std::string failure;         // When !ok: one line naming the step, node, overwritten tensor and overwriter.
  int64_t step = -1;           // When !ok: the step of the overwrite (-1: before the first node).
  int64_t overwritten = -1;    // When !ok: id of the tensor that lost its bytes (-1: none).
  int64_t overwriter = -1;     // When !ok: id of the tensor whose write did it (-1: none found).
  int64_t steps = 0;           // Steps walked.
  int64_t bytes_written = 0;   // Pattern bytes written.
  int64_t bytes_checked = 0;   // Bytes compared against their pattern.
};

// Replays `plan`. An error status: the plan is inconsistent in a way no
// replay can run (a tier the buffers cannot be allocated for, ...). A plan
// whose tensors overlap while live, or do not fit their arena, is a result
// with ok == false.
absl::StatusOr<ReplayResult> ReplayPlan(const ArenaPlan& plan);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_PLAN_REPLAY_H_
