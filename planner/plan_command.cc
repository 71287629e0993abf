#include "planner/plan_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/csv.h"
#include "planner/planner.h"

namespace footprint::planner {
namespace {

constexpr char kUsage[] =
    "usage: onnx-footprint plan FILE.csv [--time-limit SECONDS] [--output FILE]\n"
    "\n"
    "Assigns an offset to every buffer of FILE.csv (MiniMalloc's format: id,lower,upper,size\n"
    "[,alignment][,offset]; a buffer is live on [lower, upper); an offset column pins it) and\n"
    "prints the same CSV with an offset column.\n"
    "\n"
    "  --time-limit SECONDS  time for the exact search after the heuristics (default 1;\n"
    "                        0: heuristics only). It stops earlier once the arena is\n"
    "                        proven optimal.\n"
    "  --output FILE         write the CSV to FILE instead of stdout\n"
    "  --help                show this help\n"
    "\n"
    "A summary goes to stderr: arena, lower bound, their ratio, whether the arena is proven\n"
    "optimal, and the time taken.\n";

int UsageError(const std::string& message) {
  std::cerr << "onnx-footprint plan: " << message << " (see --help)\n";
  return 2;
}

// "line N: problem" from the CSV reader becomes "FILE:N: problem".
std::string WithFile(const std::string& file, absl::string_view message) {
  constexpr absl::string_view kLine = "line ";
  if (message.substr(0, kLine.size()) == kLine) {
    const size_t colon = message.find(':');
    if (colon != absl::string_view::npos) {
      return absl::StrCat(file, ":", message.substr(kLine.size(), colon - kLine.size()), message.substr(colon));
    }
  }
  return absl::StrCat(file, ": ", message);
}

}  // namespace

int RunPlanCommand(const std::vector<std::string>& args) {
  std::string input;
  std::string output;
  double time_limit = absl::ToDoubleSeconds(SolveOptions().time_limit);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    // --flag VALUE or --flag=VALUE, as every other command takes them.
    std::string flag = arg;
    std::optional<std::string> inline_value;
    if (const size_t equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      flag = arg.substr(0, equals);
      inline_value = arg.substr(equals + 1);
    }
    if (flag == "--time-limit" || flag == "--output") {
      if (!inline_value.has_value() && i + 1 >= args.size()) return UsageError(flag + " needs a value");
      const std::string value = inline_value.has_value() ? *inline_value : args[++i];
      if (flag == "--output") {
        output = value;
      } else if (!absl::SimpleAtod(value, &time_limit) || !std::isfinite(time_limit) || time_limit < 0) {
        return UsageError("--time-limit must be a number of seconds >= 0, not '" + value + "'");
      }
      continue;
    }
    if (!arg.empty() && arg[0] == '-' && arg != "-") return UsageError("unknown option '" + arg + "'");
    if (!input.empty()) return UsageError("one input file only ('" + input + "' and '" + arg + "')");
    input = arg;
  }
  if (input.empty()) return UsageError("missing FILE.csv");

  std::stringstream text;
  if (input == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(input, std::ios::binary);
    if (!in || std::filesystem::is_directory(input)) {
      std::cerr << "onnx-footprint plan: " << input << ": cannot read the file\n";
      return 2;
    }
    text << in.rdbuf();
  }
  absl::StatusOr<Problem> problem = ParseProblemCsv(text.str());
  if (!problem.ok()) {
    std::cerr << WithFile(input, problem.status().message()) << "\n";
    return 2;
  }
  absl::StatusOr<PlanResult> plan = Solve(*problem, {.time_limit = absl::Seconds(time_limit)});
  if (!plan.ok()) {
    // The reader already checks everything Solve validates; an error here is ours.
    std::cerr << WithFile(input, plan.status().message()) << "\n";
    return plan.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  const std::string csv = WriteSolutionCsv(*problem, plan->solution);
  if (output.empty()) {
    std::cout << csv << std::flush;
  } else {
    // Write next to the target, then rename: no half-written file on failure.
    const std::string temporary = output + ".tmp";
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << csv;
      out.close();
      if (!out) {
        std::error_code ignored;
        std::filesystem::remove(temporary, ignored);
        std::cerr << output << ": cannot write the file\n";
        return 2;
      }
    }
    std::error_code error;
    std::filesystem::rename(temporary, output, error);
    if (error) {
      std::filesystem::remove(temporary, error);
      std::cerr << output << ": cannot write the file\n";
      return 2;
    }
  }
  const double ratio =
      plan->lower_bound > 0 ? static_cast<double>(plan->arena_bytes) / static_cast<double>(plan->lower_bound) : 1.0;
  std::cerr << absl::StrFormat(
      "%s: %d buffers, arena %d bytes, lower bound %d bytes, ratio %.3f, %s, %.3f s (%s)\n", input,
      problem->buffers.size(), plan->arena_bytes, plan->lower_bound, ratio,
      plan->proven_optimal ? "proven optimal" : "not proven optimal", plan->seconds, plan->algorithm);
  return 0;
}

}  // namespace footprint::planner
