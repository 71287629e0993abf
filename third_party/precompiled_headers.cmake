# Precompiled headers for the static libraries the onnx-footprint binary links
# (issue 39: `make demo` builds them from scratch in minutes). Most of their
# sources include onnx's generated protobuf classes, abseil and the standard
# library, and parsing those headers was about half of every compile; each set
# below is parsed once and reused by the libraries of its group (REUSE_FROM:
# same compiler flags, GCC rejects a header built with other ones, loudly
# under the -Winvalid-pch CMake adds).
#
# Each set stays within what its libraries may include (the "Never includes"
# of their READMEs): no onnx/ for the planner, the scheduler and devices.
# FOOTPRINT_PCH=OFF builds without them, e.g. to check that every source
# includes what it uses. With ccache, PCH compiles are cached only under
# CCACHE_SLOPPINESS=pch_defines,time_macros.
option(FOOTPRINT_PCH "Precompiled headers for the onnx-footprint libraries" ON)

set(FOOTPRINT_PCH_STD
  <algorithm> <cstdint> <cstring> <functional> <map> <memory> <optional> <set> <string>
  <string_view> <utility> <vector>)
set(FOOTPRINT_PCH_ABSL
  <absl/container/flat_hash_map.h> <absl/container/flat_hash_set.h> <absl/status/status.h>
  <absl/status/statusor.h> <absl/strings/str_cat.h> <absl/strings/str_join.h>
  <absl/strings/string_view.h> <absl/time/time.h>)

# footprint_precompile_headers(FIRST <target> [HEADERS ...] [REUSED_BY <target>...])
function(footprint_precompile_headers)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "FIRST" "HEADERS;REUSED_BY")
  if(NOT FOOTPRINT_PCH)
    return()
  endif()
  target_precompile_headers(${arg_FIRST} PRIVATE ${arg_HEADERS})
  foreach(target IN LISTS arg_REUSED_BY)
    target_precompile_headers(${target} REUSE_FROM ${arg_FIRST})
  endforeach()
endfunction()
