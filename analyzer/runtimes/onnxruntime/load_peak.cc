// The replay of session creation's weights (load_peak.h).
#include "analyzer/runtimes/onnxruntime/load_peak.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analyzer/runtimes/onnxruntime/arena_run.h"
#include "analyzer/runtimes/onnxruntime/bfc_arena.h"

namespace footprint::ort {
namespace {

constexpr LoadStage kPassStages[] = {LoadStage::kFolding, LoadStage::kFusion, LoadStage::kFloat16,
                                     LoadStage::kNchwc};

// When each buffer goes: the stage of the last buffer replacing it and, in
// that stage, that buffer's index (-1 and kReading: never replaced).
struct Release {
  LoadStage stage = LoadStage::kReading;
  int last = -1;
};

std::vector<Release> Releases(const std::vector<LoadBuffer>& buffers) {
  std::vector<Release> releases(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (int replaced : buffers[i].replaces) {
      if (replaced < 0 || static_cast<size_t>(replaced) >= buffers.size()) continue;
      Release& release = releases[replaced];
      if (release.last < 0 || buffers[i].made_at > release.stage ||
          (buffers[i].made_at == release.stage && static_cast<int>(i) > release.last)) {
        release = {.stage = buffers[i].made_at, .last = static_cast<int>(i)};
      }
    }
  }
  return releases;
}

class Replay {
 public:
  explicit Replay(const std::vector<LoadBuffer>& buffers)
      : buffers_(buffers), releases_(Releases(buffers)), alive_(buffers.size(), false) {}

  void Consider(int64_t bytes, LoadStage stage) {
    if (bytes > peak_.bytes) peak_ = {.bytes = bytes, .stage = stage};
  }

  // Every buffer of the file at once, then one more copy of the largest.
  void Read() {
    int64_t largest = 0;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].made_at != LoadStage::kReading) continue;
      Hold(i);
      largest = std::max(largest, buffers_[i].bytes);
    }
    Consider(AddBytesSaturated(live_, largest), LoadStage::kReading);
  }

  // One pass: everything it makes, then what it replaced goes at its end.
  void Pass(LoadStage stage) {
    int64_t transient = 0;
    bool made = false;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (buffers_[i].made_at != stage) continue;
      Hold(i);
      transient = std::max(transient, buffers_[i].transient_bytes);
      made = true;
    }
    if (!made) return;
    Consider(AddBytesSaturated(live_, transient), stage);
    for (size_t i = 0; i < buffers_.size(); ++i) {
      if (releases_[i].stage == stage && releases_[i].last >= 0) Drop(i);
    }
  }

  // Kernel by kernel: a pack beside its original, which goes after its last packer.
  void PrePack(bool arena_on) {
    BfcArena arena;
    int64_t regions = 0;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const LoadBuffer& buffer = buffers_[i];
      if (buffer.made_at != LoadStage::kPrePack) continue;
      if (arena_on && buffer.arena) {
        arena.Alloc(buffer.bytes);
        regions = ArenaRegionHeapBytes(arena.region_bytes());
      } else {
        Hold(i);
      }
      int64_t transient = buffer.transient_bytes;
      if (arena_on && buffer.transient_in_arena && transient > 0) {
        arena.Free(arena.Alloc(transient));  // Taken before the pack, given back after it: its region stays.
        regions = ArenaRegionHeapBytes(arena.region_bytes());
        transient = 0;
      }
      Consider(AddBytesSaturated(AddBytesSaturated(live_, regions), transient), LoadStage::kPrePack);
      for (int replaced : buffer.replaces) {
        if (releases_[replaced].stage == LoadStage::kPrePack && releases_[replaced].last == static_cast<int>(i)) {
          Drop(replaced);
        }
      }
    }
  }

  LoadPeak peak() const { return peak_; }

 private:
  void Hold(size_t i) {
    alive_[i] = true;
    live_ = AddBytesSaturated(live_, buffers_[i].bytes);
  }
  void Drop(size_t i) {
    if (!alive_[i] || buffers_[i].kept) return;
    alive_[i] = false;
    live_ -= buffers_[i].bytes;
  }

  const std::vector<LoadBuffer>& buffers_;
  const std::vector<Release> releases_;
  std::vector<bool> alive_;
  int64_t live_ = 0;  // Heap bytes of the buffers alive, arena chunks aside.
  LoadPeak peak_;
};

}  // namespace

std::string_view LoadStageName(LoadStage stage) {
  switch (stage) {
    case LoadStage::kReading:
      return "reading the weights";
    case LoadStage::kFolding:
      return "constant folding";
    case LoadStage::kFusion:
      return "Conv fusions";
    case LoadStage::kFloat16:
      return "float16 weights to float32";
    case LoadStage::kNchwc:
      return "NCHWc filters";
    case LoadStage::kPrePack:
      return "pre-packing";
  }
  return "";
}

LoadPeak ReplayLoad(const std::vector<LoadBuffer>& buffers, bool arena, int64_t session_bytes) {
  Replay replay(buffers);
  replay.Read();
  for (LoadStage stage : kPassStages) replay.Pass(stage);
  replay.PrePack(arena);
  LoadPeak peak = replay.peak();
  peak.bytes = AddBytesSaturated(peak.bytes, session_bytes);
  return peak;
}

}  // namespace footprint::ort
