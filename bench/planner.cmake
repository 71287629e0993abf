# The planner on MiniMalloc's "challenging" suite (see bench/planner.bench.sh).
add_executable(planner_bench ${CMAKE_CURRENT_LIST_DIR}/planner_bench.cc)
target_link_libraries(planner_bench PRIVATE footprint_planner)
