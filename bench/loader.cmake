# The loader's benchmark (bench/loader.bench.sh) and the large-model generator
# others use for end-to-end timings (footprint-make-model).
add_library(footprint_make_models ${CMAKE_CURRENT_LIST_DIR}/make_large_models.cc)
target_include_directories(footprint_make_models PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(footprint_make_models PUBLIC footprint_loader onnx_proto protobuf::libprotobuf absl::status absl::strings)

add_executable(footprint-make-model ${CMAKE_CURRENT_LIST_DIR}/make_large_models_main.cc)
target_link_libraries(footprint-make-model PRIVATE footprint_make_models)

add_executable(footprint-loader-bench ${CMAKE_CURRENT_LIST_DIR}/loader_bench.cc)
target_link_libraries(footprint-loader-bench PRIVATE footprint_loader protobuf::libprotobuf)
