// The device catalog: built-in hardware profiles and user profile files.
//
// Usage:
//   absl::StatusOr<footprint::devices::DeviceProfile> device =
//       footprint::devices::FindDevice("stm32h743");              // built in
//   absl::StatusOr<footprint::devices::DeviceProfile> custom =
//       footprint::devices::LoadDeviceFile("boards/my_board.textproto");  // a user's
//
// Why profiles are data: a board is a handful of cited figures (alignment,
// tiers, capacities), and users must be able to describe their own board
// without rebuilding the tool. The built-in files (devices/*.textproto) are
// compiled into the library and go through the same parser and checks as a
// user's file, so a broken built-in fails the tests exactly like a user's
// file fails the CLI.
#ifndef ONNX_FOOTPRINT_DEVICES_DEVICE_CATALOG_H_
#define ONNX_FOOTPRINT_DEVICES_DEVICE_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "devices/device_profile.pb.h"

namespace footprint::devices {

inline constexpr std::string_view kDefaultDeviceName = "generic-cpu";
inline constexpr int64_t kDefaultAlignmentBytes = 64;  // When a profile sets none (memory model).

// The built-in profile named `name`. Unknown name: NotFound, "unknown device
// `NAME`; known devices: a, b, ...".
absl::StatusOr<DeviceProfile> FindDevice(std::string_view name);

// Every built-in profile, in catalog order (generic-cpu first). The built-in
// files are checked by the tests; if one were broken anyway, this aborts with
// its file and line rather than silently leaving it out.
std::vector<DeviceProfile> AllDevices();

// Every built-in profile, or the first built-in file's error.
absl::StatusOr<std::vector<DeviceProfile>> LoadBuiltinDevices();

// Reads and checks a text-format profile. Errors are InvalidArgument (or
// NotFound when the file cannot be read) with a one-line message
// "PATH:LINE:COL: what is wrong" (LINE and COL 1-based): syntax errors from
// protobuf's parser, and the semantic checks of CheckDeviceProfile located
// at the offending field.
absl::StatusOr<DeviceProfile> LoadDeviceFile(const std::string& path);

// Parses profile text; `path` only names it in errors.
absl::StatusOr<DeviceProfile> ParseDeviceProfile(std::string_view text, std::string_view path);

// The semantic checks, without locations: a name; alignments powers of two
// >= 1; at least one memory; memory names non-empty and unique; capacities and
// contiguous sizes > 0 where set, contiguous <= capacity; at least one tier
// holding activations. Sources are not required here (a user's own board
// needs none); the tests require them of every built-in profile.
absl::Status CheckDeviceProfile(const DeviceProfile& profile);

// The alignment of tier `memory` of `profile`: the tier's, else the profile's,
// else kDefaultAlignmentBytes.
int64_t TierAlignment(const DeviceProfile& profile, const Memory& memory);

}  // namespace footprint::devices

#endif  // ONNX_FOOTPRINT_DEVICES_DEVICE_CATALOG_H_
