// Writes report files whole or not at all.
//
// Why: a CI step that fails half way must not leave a truncated report that
// a later step uploads or diffs as if it were real.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_OUTPUT_FILE_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_OUTPUT_FILE_H_

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace footprint {

// Writes `contents` to a temporary file beside `path`, then renames it over
// `path`. On any error the temporary file is removed and `path` is untouched.
absl::Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Where output made piece by piece goes, one piece per call.
using OutputSink = absl::FunctionRef<void(std::string_view)>;

// The same for output too big to hold whole first: `produce` hands its
// pieces to the sink it is given, in order. `path` gets them all or is
// untouched.
absl::Status WriteFileAtomically(const std::string& path, absl::FunctionRef<void(OutputSink)> produce);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_OUTPUT_FILE_H_
