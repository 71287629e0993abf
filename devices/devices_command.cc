#include "devices/devices_command.h"

#include <iostream>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/device_catalog.h"
#include "devices/tier_planner.h"
#include "nlohmann/json.hpp"

namespace footprint::devices {
namespace {

constexpr std::string_view kUsage = "usage: onnx-footprint devices [--format text|json]";

nlohmann::ordered_json ProfileJson(const DeviceProfile& profile) {
  auto optional_int = [](bool has, int64_t value) { return has ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); };
  nlohmann::ordered_json device;
  device["name"] = profile.name();
  device["description"] = profile.description();
  // The alignment the planner uses; alignment_is_default says the device publishes none.
  device["alignment_bytes"] = profile.has_alignment_bytes() ? profile.alignment_bytes() : kDefaultAlignmentBytes;
  device["alignment_is_default"] = !profile.has_alignment_bytes();
  device["allow_inplace"] = profile.allow_inplace();
  nlohmann::ordered_json memories = nlohmann::ordered_json::array();
  for (const Memory& memory : profile.memory()) {
    nlohmann::ordered_json tier;
    tier["name"] = memory.name();
    tier["description"] = memory.description();
    tier["capacity_bytes"] = optional_int(memory.has_capacity_bytes(), memory.capacity_bytes());
    tier["alignment_bytes"] = TierAlignment(profile, memory);
    tier["contiguous_bytes"] = optional_int(memory.has_contiguous_bytes(), memory.contiguous_bytes());
    tier["holds_weights"] = memory.holds_weights();
    tier["holds_activations"] = memory.holds_activations();
    memories.push_back(std::move(tier));
  }
  device["memory"] = std::move(memories);
  device["sources"] = nlohmann::ordered_json::array();
  for (const std::string& source : profile.sources()) device["sources"].push_back(source);
  return device;
}

std::string OptionalBytes(bool has, int64_t value) { return has ? FormatBytes(value) : "-"; }

void PrintText(const std::vector<DeviceProfile>& devices, std::ostream& out) {
  for (const DeviceProfile& profile : devices) {
    out << profile.name() << (profile.name() == kDefaultDeviceName ? " (default)" : "") << "\n";
    out << "  " << profile.description() << "\n";
    out << "  alignment: "
        << (profile.has_alignment_bytes() ? absl::StrCat(profile.alignment_bytes(), " B")
                                          : absl::StrCat(kDefaultAlignmentBytes, " B (not published; default)"))
        << ", in-place reuse: " << (profile.allow_inplace() ? "allowed" : "not allowed") << "\n";
    for (const Memory& memory : profile.memory()) {
      std::vector<std::string> holds;
      if (memory.holds_weights()) holds.push_back("weights");
      if (memory.holds_activations()) holds.push_back("activations");
      out << "  tier " << memory.name() << ": capacity " << OptionalBytes(memory.has_capacity_bytes(), memory.capacity_bytes())
          << ", contiguous " << OptionalBytes(memory.has_contiguous_bytes(), memory.contiguous_bytes())
          << ", alignment " << TierAlignment(profile, memory) << " B, holds " << absl::StrJoin(holds, " + ") << "\n";
    }
    out << "  sources: " << profile.sources_size() << "\n";
    for (const std::string& source : profile.sources()) out << "    - " << source << "\n";
    out << "\n";
  }
}

}  // namespace

std::string DeviceProfileToJson(const DeviceProfile& profile) {
  return ProfileJson(profile).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int RunDevicesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string format = "text";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out << kUsage << "\n";
      return 0;
    }
    std::string value;
    if (arg == "--format") {
      if (i + 1 >= args.size()) {
        err << "onnx-footprint devices: --format needs a value (text or json)\n";
        return 2;
      }
      value = args[++i];
    } else if (arg.rfind("--format=", 0) == 0) {
      value = arg.substr(9);
    } else {
      err << "onnx-footprint devices: unknown argument `" << arg << "`; " << kUsage << "\n";
      return 2;
    }
    if (value != "text" && value != "json") {
      err << "onnx-footprint devices: --format must be text or json, not `" << value << "`\n";
      return 2;
    }
    format = value;
  }
  const std::vector<DeviceProfile> devices = AllDevices();
  if (format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const DeviceProfile& profile : devices) list.push_back(ProfileJson(profile));
    out << list.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else {
    PrintText(devices, out);
  }
  return 0;
}

int RunDevicesCommand(const std::vector<std::string>& args) { return RunDevicesCommand(args, std::cout, std::cerr); }

}  // namespace footprint::devices
