// `onnx-footprint replay PLAN.json [--model FILE]`: replays a plan emitted by
// `analyze --emit-plan` against real memory (analyzer/plan/replay.h).
// Exit 0: no live tensor was ever overwritten; 1: one was (one line naming
// the step, the node, the overwritten tensor and the overwriter); 2: the
// plan is malformed, of another plan_version, or does not match the model.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_REPLAY_COMMAND_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_REPLAY_COMMAND_H_

#include <string>
#include <vector>

namespace footprint {

// `args` are the words after `replay`; returns the exit code.
int RunReplayCommand(const std::vector<std::string>& args);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_REPLAY_COMMAND_H_
