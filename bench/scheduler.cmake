# The schedule optimizer's timing program (a plain executable: it reports
# quality figures next to the time, which Google Benchmark does not print).
add_executable(scheduler_bench ${CMAKE_CURRENT_LIST_DIR}/scheduler_bench.cc)
target_link_libraries(scheduler_bench PRIVATE footprint_scheduler footprint_scheduler_testing)
