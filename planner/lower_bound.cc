#include "planner/lower_bound.h"

#include <algorithm>
#include <utility>

namespace footprint::planner {

Bytes LowerBound(const Problem& problem) {
  // Sweep over +size at first and -size after last; at equal steps the
  // additions come first because lifespans are closed intervals.
  std::vector<std::pair<Step, Bytes>> events;
  events.reserve(problem.buffers.size() * 2);
  for (const Buffer& buffer : problem.buffers) {
    if (buffer.size == 0) continue;
    events.emplace_back(buffer.lifespan.first, buffer.size);
    events.emplace_back(buffer.lifespan.last + 1, -buffer.size);
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.second < b.second;  // Releases (negative) before the next step's allocations.
  });
  Bytes live = 0;
  Bytes peak = 0;
  for (const auto& [step, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

LiveProfile ComputeLiveProfile(const Problem& problem) {
  LiveProfile profile;
  if (problem.buffers.empty()) return profile;
  Step lo = problem.buffers[0].lifespan.first;
  Step hi = problem.buffers[0].lifespan.last;
  for (const Buffer& buffer : problem.buffers) {
    lo = std::min(lo, buffer.lifespan.first);
    hi = std::max(hi, buffer.lifespan.last);
  }
  profile.first_step = lo;
  std::vector<Bytes> delta(static_cast<size_t>(hi - lo + 2), 0);
  for (const Buffer& buffer : problem.buffers) {
    delta[buffer.lifespan.first - lo] += buffer.size;
    delta[buffer.lifespan.last - lo + 1] -= buffer.size;
  }
  profile.live_bytes.resize(static_cast<size_t>(hi - lo + 1));
  Bytes live = 0;
  for (size_t k = 0; k < profile.live_bytes.size(); ++k) {
    live += delta[k];
    profile.live_bytes[k] = live;
  }
  return profile;
}

}  // namespace footprint::planner
