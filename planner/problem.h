// The offset-assignment problem that every planner in this library solves.
//
// A problem is a set of buffers, each live over a closed interval of steps; a
// solution gives each buffer a byte offset so that buffers live at the same
// step never share a byte. This library knows nothing of ONNX: the analyzer
// turns tensors into buffers, and anyone else can do the same (see csv.h).
#ifndef ONNX_FOOTPRINT_PLANNER_PROBLEM_H_
#define ONNX_FOOTPRINT_PLANNER_PROBLEM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace footprint::planner {

using Bytes = int64_t;  // A size or an offset, in bytes.
using Step = int64_t;   // A position in the schedule (0-based).

// A closed interval of steps: the buffer's bytes are in use from `first` to
// `last`, both included. Two lifespans intersect when they share a step.
struct Lifespan {
  Step first = 0;  // The step that writes the buffer.
  Step last = 0;   // The last step that reads it (>= first).

  bool Intersects(const Lifespan& other) const {
    return first <= other.last && other.first <= last;
  }
  bool operator==(const Lifespan&) const = default;
};

struct Buffer {
  std::string id;                      // Shown in reports and CSV files.
  Lifespan lifespan;                   // When its bytes must stay untouched.
  Bytes size = 0;                      // Bytes it occupies (already rounded by the caller).
  Bytes alignment = 1;                 // Its offset must be a multiple of this (>= 1).
  std::optional<Bytes> pinned_offset;  // When set, the only offset allowed.

  bool operator==(const Buffer&) const = default;
};

struct Problem {
  std::vector<Buffer> buffers;    // In any order; solutions follow the same order.
  std::optional<Bytes> capacity;  // When set, offset + size must stay within it.
};

struct Solution {
  std::vector<Bytes> offsets;  // offsets[i] belongs to problem.buffers[i].

  bool operator==(const Solution&) const = default;
};

// The arena a solution needs: max over buffers of offset + size (0 if none).
Bytes ArenaSize(const Problem& problem, const Solution& solution);

// `value` rounded up to a multiple of `alignment` (alignment <= 1: unchanged).
inline Bytes AlignUp(Bytes value, Bytes alignment) {
  if (alignment <= 1) return value;
  const Bytes remainder = value % alignment;
  return remainder == 0 ? value : value + (alignment - remainder);
}

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_PROBLEM_H_
