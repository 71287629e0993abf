// The built-in profiles' text, compiled into the library.
//
// Why embed: `onnx-footprint --device stm32h743` must work from an installed
// binary, with no source tree next to it. The .cc behind this header is
// generated at build time from devices/*.textproto (embed_profiles.cmake).
#ifndef ONNX_FOOTPRINT_DEVICES_EMBEDDED_PROFILES_H_
#define ONNX_FOOTPRINT_DEVICES_EMBEDDED_PROFILES_H_

#include <string_view>
#include <vector>

namespace footprint::devices {

struct EmbeddedProfile {
  std::string_view path;  // "devices/<name>.textproto": named in parse errors.
  std::string_view text;  // The file's contents, verbatim.
};

// In catalog order (generic-cpu first).
const std::vector<EmbeddedProfile>& EmbeddedProfiles();

}  // namespace footprint::devices

#endif  // ONNX_FOOTPRINT_DEVICES_EMBEDDED_PROFILES_H_
