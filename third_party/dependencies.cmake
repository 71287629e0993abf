# Finds every dependency from the Debian 12 packages listed in debian-packages.txt.
# Nothing here downloads anything.

find_package(Protobuf REQUIRED)   # Must come before ONNX: onnx_proto links protobuf::libprotobuf.
find_package(ONNX REQUIRED)       # Targets onnx and onnx_proto (ONNX_NAMESPACE=onnx, ONNX_ML=1).
find_package(absl REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark QUIET)     # Only bench/ needs it.
find_package(Threads REQUIRED)
