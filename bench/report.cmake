# The report renderers alone, in process (see bench/report.bench.sh for whole runs).
add_executable(report_bench ${CMAKE_CURRENT_LIST_DIR}/report_bench.cc)
target_link_libraries(report_bench PRIVATE footprint_report)
