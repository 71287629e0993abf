# The ground truth against ONNX Runtime (bench/ground_truth/README.md): the
# small ctest check, skipped where onnxruntime-node is not installed.
add_test(NAME ground_truth_onnxruntime
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ground_truth/ground_truth_test.sh ${CMAKE_BINARY_DIR}
                 ${FOOTPRINT_SHARED_DIR}/models)
set_tests_properties(ground_truth_onnxruntime PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 RUN_SERIAL TRUE)
