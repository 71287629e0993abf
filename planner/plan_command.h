// `onnx-footprint plan`: offset assignment for a problem given as CSV.
//
//   onnx-footprint plan FILE.csv [--time-limit SECONDS] [--output FILE]
//
// Reads MiniMalloc's CSV (see csv.h), plans it with Solve (planner.h) and
// prints the same CSV with an `offset` column to stdout (or FILE). A one-line
// summary (arena, lower bound, ratio, proven optimal or not, seconds) goes to
// stderr. Bad input: one line "FILE:LINE: problem" on stderr, exit code 2,
// nothing on stdout and no output file.
#ifndef ONNX_FOOTPRINT_PLANNER_PLAN_COMMAND_H_
#define ONNX_FOOTPRINT_PLANNER_PLAN_COMMAND_H_

#include <string>
#include <vector>

namespace footprint::planner {

// `args` are the words after `plan`. Returns the exit code: 0 ok, 1 internal
// error, 2 usage or input error.
int RunPlanCommand(const std::vector<std::string>& args);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_PLAN_COMMAND_H_
