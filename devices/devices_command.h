// `onnx-footprint devices`: lists the built-in hardware profiles.
//
// Usage (args are what follows the word `devices` on the command line):
//   onnx-footprint devices                 # a text table per device
//   onnx-footprint devices --format json   # [{"name", "description", "alignment_bytes",
//                                          #   "alignment_is_default",
//                                          #   "allow_inplace", "memory": [...], "sources"}]
// Unset figures print as "-" in text and null in JSON: unknown is not zero.
#ifndef ONNX_FOOTPRINT_DEVICES_DEVICES_COMMAND_H_
#define ONNX_FOOTPRINT_DEVICES_DEVICES_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "devices/device_profile.pb.h"

namespace footprint::devices {

// Returns the exit code: 0, or 2 for a bad argument (one line on stderr).
int RunDevicesCommand(const std::vector<std::string>& args);
int RunDevicesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One profile as the JSON object `devices --format json` prints (also usable
// by the analyzer's report).
std::string DeviceProfileToJson(const DeviceProfile& profile);

}  // namespace footprint::devices

#endif  // ONNX_FOOTPRINT_DEVICES_DEVICES_COMMAND_H_
