// Byte sizes and growth thresholds as users type them on the command line
// (formatting them for people is report/format.h).
//
// SIZE grammar (exactly; one optional space between number and unit):
//   NUMBER [UNIT]
//   NUMBER  digits, optionally with a fraction: 512, 1.5, 0.25
//   UNIT    B               bytes (the default when no unit is given)
//           KiB MiB GiB TiB binary: 1024, 1024^2, 1024^3, 1024^4 bytes
//           K   M   G   T   the same binary units, written short (as GNU tools do)
//           Ki  Mi  Gi  Ti  the same binary units, written as Kubernetes does
//           KB  MB  GB  TB  decimal: 1000, 1000^2, 1000^3, 1000^4 bytes
//   The prefix letter may be lower case (k, m, g, t); the B must be upper case,
//   because a lower-case b means bits. A fraction is rounded down to whole bytes
//   (a limit of 1.1 KiB = 1126.4 bytes admits 1126 bytes, and so does 1126).
//   Examples: 4096, 512KiB, 1.5MiB (1572864), 100MB (100000000), 2GB (2e9), 8G.
// THRESHOLD (diff --max-increase): PCT, a non-negative number followed by %
// (5%, 0.5%), or a SIZE.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_SIZE_FLAGS_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_SIZE_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "analyzer/report/diff.h"

namespace footprint {

// Parses a SIZE. Errors (InvalidArgument) quote the text and say what is wrong.
absl::StatusOr<int64_t> ParseByteSize(const std::string& text);

// Parses a THRESHOLD into the diff's GrowthThreshold (report/diff.h).
absl::StatusOr<GrowthThreshold> ParseGrowthThreshold(const std::string& text);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_SIZE_FLAGS_H_
