// Time sections of a problem: the shared preprocessing of the searches.
//
// Why sections: buffer lifespans start and end at a few distinct steps. Between
// two consecutive such steps the set of live buffers does not change, so the
// searches reason per section (a few hundred) instead of per step (millions in
// the MiniMalloc traces).
#ifndef ONNX_FOOTPRINT_PLANNER_SECTIONS_H_
#define ONNX_FOOTPRINT_PLANNER_SECTIONS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "planner/problem.h"

namespace footprint::planner {

struct SectionRange {
  int begin = 0;  // First section (included).
  int end = 0;    // One past the last section.
};

struct Sections {
  int count = 0;                           // Number of sections.
  std::vector<SectionRange> buffer_range;  // buffer_range[i]: the sections buffer i is live in.
  std::vector<std::vector<int>> members;   // members[s]: the buffers live in section s (only sized ones).
  std::vector<Bytes> live_bytes;           // live_bytes[s]: the sum of sizes of members[s].
};

// Zero-size buffers get an empty range and belong to no section.
Sections ComputeSections(const Problem& problem);

// For each buffer, the other sized buffers whose lifespans intersect its own
// (zero-size buffers have none). Returns nullopt when there are more than
// `max_pairs` intersecting pairs, so that callers never blow up on dense problems.
std::optional<std::vector<std::vector<int>>> ComputeOverlaps(const Problem& problem, const Sections& sections,
                                                             int64_t max_pairs);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_SECTIONS_H_
