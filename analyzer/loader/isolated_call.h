// Runs a piece of work in a child process, so that a crash in it cannot take
// the analyzer down.
//
// Why: ONNX 1.12's shape inference functions index attribute lists without
// checking them (ConvTranspose with a short output_shape, Shape of an untyped
// tensor...) and crash on damaged or unusual models. We cannot fix libonnx,
// and a CI gate must not die on an odd model: the work runs in a fork()ed
// child and sends its result back through a pipe; a crash, a hang past the
// deadline, or an exception becomes an error here, and the analysis goes on
// without that result.
//
// What it does not guarantee: that `work` is free of side effects in the
// parent (there are none: the child's memory is its own copy), nor fork's
// usual caveat with threads: only the calling thread exists in the child, so
// `work` must not wait for other threads.
#ifndef ONNX_FOOTPRINT_ANALYZER_LOADER_ISOLATED_CALL_H_
#define ONNX_FOOTPRINT_ANALYZER_LOADER_ISOLATED_CALL_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace footprint {

// Runs `work` in a child and returns the bytes it returned. Errors: Internal
// when the child crashed (naming the signal) or failed to start, and
// DeadlineExceeded when it ran past `deadline` (the child is killed).
// With FOOTPRINT_NO_FORK=1 in the environment, `work` runs in this process
// (for debuggers).
absl::StatusOr<std::string> RunIsolated(const std::function<std::string()>& work, absl::Duration deadline);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_LOADER_ISOLATED_CALL_H_
