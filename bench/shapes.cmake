# Shape coverage benchmark: ours against ONNX's own inference (see shapes.bench.sh).
add_executable(shape_coverage ${CMAKE_CURRENT_LIST_DIR}/shape_coverage.cc)
target_link_libraries(shape_coverage PRIVATE footprint_memory footprint_test_util)
set_target_properties(shape_coverage PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
