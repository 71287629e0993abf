// MiniMalloc's CSV problem format, read and written.
//
//   id,lower,upper,size[,alignment][,offset]
//   conv1,0,3,4096
//
// A buffer is live on the half-open interval [lower, upper), that is on our
// closed Lifespan {lower, upper - 1}. `alignment` (default 1) and `offset`
// (a pinned offset) are optional columns; columns may come in any order but
// the header must name them.
#ifndef ONNX_FOOTPRINT_PLANNER_CSV_H_
#define ONNX_FOOTPRINT_PLANNER_CSV_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "planner/problem.h"

namespace footprint::planner {

// Errors name the line: "line 3: size is negative (-5)".
absl::StatusOr<Problem> ParseProblemCsv(std::string_view text);

// The problem with one `offset` column taken from the solution (an `alignment`
// column too when some buffer needs more than 1).
std::string WriteSolutionCsv(const Problem& problem, const Solution& solution);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_CSV_H_
