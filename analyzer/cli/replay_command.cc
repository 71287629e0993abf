#include "analyzer/cli/replay_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzer/cli/cli.h"
#include "analyzer/plan/plan_file.h"
#include "analyzer/plan/replay.h"
#include "analyzer/report/format.h"

namespace footprint {
namespace {

constexpr const char* kReplayUsage = R"(Usage: onnx-footprint replay PLAN.json [--model FILE]

Allocates each memory tier's arena of a plan (from `analyze --emit-plan PLAN.json`) as a real
buffer, served by the runtime library (runtime/fp_arena.h, checked build), and walks the
schedule: before each node, every tensor dying there must still hold the bytes its producer
wrote (a pattern of its id, compared in full); then the node's outputs are written. Aliases
hold their source's bytes; an in-place output may overwrite only its dying input.

Options:
  --model FILE   The model the plan must match (content hash); default: the plan's model path,
                 checked when that file exists.
  -h, --help     This help.

Exit codes: 0 no live tensor was ever overwritten; 1 one was (the line names the step, the node,
the overwritten tensor and the one that overwrote it); 2 malformed plan, unsupported
plan_version, or a plan that does not match the model.
)";

int Bad(const std::string& line) {
  std::cerr << "onnx-footprint: " << line << "\n";
  return kExitBadInput;
}

}  // namespace

int RunReplayCommand(const std::vector<std::string>& args) {
  std::string plan_path;
  std::string model_path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "-h" || word == "--help") {
      std::cout << kReplayUsage;
      return kExitOk;
    }
    if (word == "--model" || absl::StartsWith(word, "--model=")) {
      if (word == "--model") {
        if (i + 1 >= args.size()) return Bad("--model needs a file name (see `onnx-footprint replay --help`)");
        model_path = args[++i];
      } else {
        model_path = word.substr(8);
      }
      if (model_path.empty()) return Bad("--model needs a file name (see `onnx-footprint replay --help`)");
      continue;
    }
    if (absl::StartsWith(word, "-")) return Bad(absl::StrCat("unknown option ", word, " (see `onnx-footprint replay --help`)"));
    if (!plan_path.empty()) return Bad("replay takes one PLAN.json (see `onnx-footprint replay --help`)");
    plan_path = word;
  }
  if (plan_path.empty()) return Bad("replay needs a PLAN.json (see `onnx-footprint replay --help`)");
  std::ifstream file(plan_path, std::ios::binary);
  if (!file) return Bad(absl::StrCat(plan_path, ": cannot read the plan"));
  std::stringstream text;
  text << file.rdbuf();
  absl::StatusOr<ArenaPlan> plan = ParsePlanJson(text.str());
  if (!plan.ok()) return Bad(absl::StrCat(plan_path, ": ", plan.status().message()));

  const bool model_given = !model_path.empty();
  if (!model_given) model_path = plan->model_path;
  std::error_code error;
  if (model_given || std::filesystem::is_regular_file(model_path, error)) {
    absl::StatusOr<std::string> hash = ModelHash(model_path);
    if (!hash.ok()) return Bad(absl::StrCat(plan_path, ": ", hash.status().message()));
    if (*hash != plan->model_hash) {
      return Bad(absl::StrCat(plan_path, ": the plan does not match the model ", model_path, " (plan hash ",
                              plan->model_hash, ", model hash ", *hash, ")"));
    }
  }

  absl::StatusOr<ReplayResult> result = ReplayPlan(*plan);
  if (!result.ok()) return Bad(absl::StrCat(plan_path, ": ", result.status().message()));
  if (!result->ok) {
    std::cerr << "onnx-footprint: " << plan_path << ": " << result->failure << "\n";
    return kExitNotWithinLimits;
  }
  int64_t arena_bytes = 0;
  for (const PlanTier& tier : plan->tiers) arena_bytes += tier.arena_bytes;
  std::cout << plan_path << ": replayed " << result->steps << " steps, " << plan->tensors.size() << " tensors in "
            << plan->tiers.size() << (plan->tiers.size() == 1 ? " tier" : " tiers") << " ("
            << HumanBytes(arena_bytes) << "): no live tensor was overwritten\n";
  return kExitOk;
}

}  // namespace footprint
