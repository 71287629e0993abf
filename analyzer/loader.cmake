# The model loader: maps a model and parses its structure without its weights.
add_library(footprint_loader
  model_loader.cc
  proto_wire.cc
  external_data.cc
)
target_include_directories(footprint_loader PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(footprint_loader PUBLIC
  onnx_proto protobuf::libprotobuf absl::status absl::statusor absl::strings)

add_executable(model_loader_test model_loader_test.cc)
target_link_libraries(model_loader_test PRIVATE footprint_loader GTest::gtest_main)
gtest_discover_tests(model_loader_test)
