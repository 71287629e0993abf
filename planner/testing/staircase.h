// The planner tests' smallest hard problem: six buffers where greedy by size
// needs 10 bytes, and the optimum (found by exhaustive search, exact_test.cc)
// is the lower bound, 7. Skyline by start reaches it; the exact search proves it.
#ifndef ONNX_FOOTPRINT_PLANNER_TESTING_STAIRCASE_H_
#define ONNX_FOOTPRINT_PLANNER_TESTING_STAIRCASE_H_

#include "planner/problem.h"

namespace footprint::planner {

inline const Problem kStaircase = {.buffers = {
                                       {.id = "a", .lifespan = {1, 1}, .size = 4},
                                       {.id = "b", .lifespan = {1, 3}, .size = 2},
                                       {.id = "c", .lifespan = {1, 3}, .size = 1},
                                       {.id = "d", .lifespan = {3, 4}, .size = 3},
                                       {.id = "e", .lifespan = {4, 5}, .size = 4},
                                       {.id = "f", .lifespan = {2, 2}, .size = 2},
                                   }};

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_TESTING_STAIRCASE_H_
