# Finds every dependency from the Debian 12 packages listed in debian-packages.txt.
# Nothing here downloads anything.

find_package(Protobuf REQUIRED)   # Must come before ONNX: onnx_proto links protobuf::libprotobuf.
find_package(ONNX REQUIRED)       # Targets onnx and onnx_proto (ONNX_NAMESPACE=onnx, ONNX_ML=1).
find_package(absl REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark QUIET)     # Only bench/ needs it.
find_package(Threads REQUIRED)

# The onnx-footprint binary allocates through mimalloc: a large model's
# analysis makes hundreds of thousands of small allocations, and glibc's
# malloc spent a fifth of the time of an 18,000-node analysis (bench/).
# Not under the sanitizers, which bring their own allocator.
option(FOOTPRINT_MIMALLOC "Link the onnx-footprint binary with mimalloc" ON)
if(FOOTPRINT_MIMALLOC AND NOT FOOTPRINT_SANITIZE AND NOT FOOTPRINT_FUZZ)
  find_package(mimalloc 2.0 REQUIRED)
  set(FOOTPRINT_WITH_MIMALLOC ON)
endif()
