# The ground truth against ONNX Runtime (bench/ground_truth/README.md): the
# small ctest check. It installs onnxruntime-node into FOOTPRINT_ORT_NODE_DIR
# when it is not there yet (make test does it first) and skips only when the
# npm registry cannot be reached. The sanitizer build points this at the main
# build's folder, so that one install serves both.
set(FOOTPRINT_ORT_NODE_DIR "${CMAKE_BINARY_DIR}/ground-truth" CACHE PATH
    "Where node_modules/onnxruntime-node is installed for the ground-truth test")
add_test(NAME ground_truth_onnxruntime
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ground_truth/ground_truth_test.sh ${CMAKE_BINARY_DIR}
                 ${FOOTPRINT_SHARED_DIR}/models ${FOOTPRINT_ORT_NODE_DIR})
set_tests_properties(ground_truth_onnxruntime PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE)
add_test(NAME patch_onnxruntime
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ground_truth/patch_test.sh ${CMAKE_BINARY_DIR}
                 ${FOOTPRINT_SHARED_DIR}/models ${FOOTPRINT_ORT_NODE_DIR})
set_tests_properties(patch_onnxruntime PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE)
# The committed results pages (bench/ground_truth/results/*.md, linked from docs/ground-truth.md)
# are what write_results.sh makes of the committed results/*.jsonl.
add_test(NAME ground_truth_results
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ground_truth/write_results.sh --check)
set_tests_properties(ground_truth_results PROPERTIES TIMEOUT 60)
