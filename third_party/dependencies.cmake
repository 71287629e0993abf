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

# python/: the onnx_footprint module, built with Debian's pybind11-dev against
# Debian's python3 (the interpreter that has python3-pytest and python3-onnx),
# when both are found. Not under the sanitizers: an ASan-built extension cannot
# be loaded into an uninstrumented python3 without preloading the runtime.
if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python 3 COMPONENTS Interpreter Development.Module QUIET)
find_package(pybind11 CONFIG QUIET)
set(FOOTPRINT_PYTHON_DEFAULT OFF)
if(Python_FOUND AND pybind11_FOUND AND NOT FOOTPRINT_SANITIZE AND NOT FOOTPRINT_FUZZ)
  set(FOOTPRINT_PYTHON_DEFAULT ON)
endif()
option(FOOTPRINT_PYTHON "Build the onnx_footprint Python module (python/)" ${FOOTPRINT_PYTHON_DEFAULT})
if(FOOTPRINT_PYTHON)
  if(NOT Python_FOUND OR NOT pybind11_FOUND)
    message(FATAL_ERROR "FOOTPRINT_PYTHON needs pybind11-dev and python3-dev")
  endif()
endif()
