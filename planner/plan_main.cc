// footprint-plan: the `plan` subcommand as a standalone tool.
#include <string>
#include <vector>

#include "planner/plan_command.h"

int main(int argc, char** argv) {
  return footprint::planner::RunPlanCommand(std::vector<std::string>(argv + 1, argv + argc));
}
