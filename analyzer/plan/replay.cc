#include "analyzer/plan/replay.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/fp_arena.h"

namespace footprint {
namespace {

// Word k of tensor id's pattern: (Seed(id) + k) times an odd constant, so
// the words of one tensor all differ, and two tensors' words meet only if
// their random 64-bit seeds lie within a tensor's length of each other.
inline uint64_t Seed(uint64_t id) {
  uint64_t z = (id + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
inline uint64_t PatternWord(uint64_t seed, uint64_t k) { return (seed + k) * 0xD6E8FEB86659FD93ULL; }

void FillPattern(uint64_t id, unsigned char* bytes, int64_t size) {
  const uint64_t seed = Seed(id);
  const int64_t words = size / 8;
  for (int64_t k = 0; k < words; ++k) {
    const uint64_t word = PatternWord(seed, k);
    std::memcpy(bytes + k * 8, &word, 8);
  }
  if (words * 8 < size) {
    const uint64_t word = PatternWord(seed, words);
    std::memcpy(bytes + words * 8, &word, size - words * 8);
  }
}

// The first byte of `bytes` that is not id's pattern, or -1.
int64_t FirstWrongByte(uint64_t id, const unsigned char* bytes, int64_t size) {
  const uint64_t seed = Seed(id);
  const int64_t words = size / 8;
  int64_t k = 0;
  for (; k < words; ++k) {
    uint64_t word;
    std::memcpy(&word, bytes + k * 8, 8);
    if (word != PatternWord(seed, k)) break;
  }
  if (k == words && words * 8 == size) return -1;
  const uint64_t word = PatternWord(seed, k);
  const auto* expected = reinterpret_cast<const unsigned char*>(&word);
  for (int64_t b = 0; b < 8 && k * 8 + b < size; ++b) {
    if (bytes[k * 8 + b] != expected[b]) return k * 8 + b;
  }
  return -1;
}

struct FreeDeleter {
  void operator()(unsigned char* p) const { std::free(p); }
};

struct Violations {
  std::vector<std::string> lines;
  const fp_plan* plan = nullptr;
};

void OnViolation(void* user, fp_violation what, uint32_t tensor, int32_t step) {
  auto* violations = static_cast<Violations*>(user);
  const char* name = tensor < violations->plan->num_tensors ? violations->plan->tensor_name[tensor] : "?";
  switch (what) {
    case FP_VIOLATION_NOT_LIVE:
      violations->lines.push_back(absl::StrCat("tensor '", name, "' asked for at step ", step, " outside its live steps"));
      break;
    case FP_VIOLATION_GUARD:
      violations->lines.push_back(absl::StrCat("the guard bytes after the arena were written by step ", step,
                                               " (last-ending live tensor '", name, "')"));
      break;
    default:
      violations->lines.push_back(absl::StrCat("runtime violation ", static_cast<int>(what), " for tensor ", tensor));
  }
}

class Replayer {
 public:
  explicit Replayer(const ArenaPlan& plan) : plan_(plan) {}

  absl::StatusOr<ReplayResult> Run() {
    if (absl::Status s = BuildTables(); !s.ok()) return s;
    absl::StatusOr<std::optional<ReplayResult>> refused = InitArenas();
    if (!refused.ok()) return refused.status();
    if (refused->has_value()) return **refused;
    DeriveContentOwners();
    const int64_t steps = static_cast<int64_t>(plan_.schedule.size());
    std::vector<std::vector<int64_t>> inputs_at(std::max<int64_t>(steps, 1)), outputs_at(inputs_at.size()),
        dying_at(inputs_at.size());
    for (size_t id = 0; id < plan_.tensors.size(); ++id) {
      const PlanTensor& t = plan_.tensors[id];
      dying_at[t.last_step].push_back(id);
      if (t.sharing == "alias") continue;
      (t.producer.empty() ? inputs_at : outputs_at)[t.first_step].push_back(id);
    }
    for (int64_t s = 0; s < static_cast<int64_t>(inputs_at.size()); ++s) {
      for (fp_arena& arena : arenas_) fp_step(&arena, static_cast<int32_t>(s));
      if (!violations_.lines.empty()) return Failure(s, violations_.lines.front());
      for (int64_t id : inputs_at[s]) Write(id, WriteKey(id));
      // Pre-write: the node reads its dying inputs.
      for (int64_t id : dying_at[s]) {
        if (WriteKey(id) >= 2 * s + 1) continue;  // Written by this node: checked below.
        if (std::optional<ReplayResult> bad = Check(id, 2 * s); bad.has_value()) return *bad;
      }
      for (int64_t id : outputs_at[s]) Write(id, 2 * s + 1);
      if (!violations_.lines.empty()) return Failure(s, violations_.lines.front());
      // Post-write: nothing but a legitimate in-place output wrote over a tensor dying here.
      for (int64_t id : dying_at[s]) {
        if (OverwrittenInPlaceAt(id, s)) continue;
        if (std::optional<ReplayResult> bad = Check(id, 2 * s + 1); bad.has_value()) return *bad;
      }
      result_.steps = std::min<int64_t>(s + 1, steps);
    }
    for (fp_arena& arena : arenas_) fp_step(&arena, static_cast<int32_t>(inputs_at.size()));
    if (!violations_.lines.empty()) return Failure(steps - 1, violations_.lines.front());
    return result_;
  }

 private:
  // Writes are ordered by key: a graph input at 2*step (before its step's
  // node), a node output at 2*step+1.
  int64_t WriteKey(int64_t id) const {
    const PlanTensor& t = plan_.tensors[id];
    return t.producer.empty() ? 2 * t.first_step : 2 * t.first_step + 1;
  }

  int64_t Root(int64_t id) const {
    const int64_t source = plan_.tensors[id].shares_with;
    return source >= 0 ? source : id;
  }

  // An alias holds the bytes of the last non-alias member of its group
  // written before its step; everything else holds its own.
  void DeriveContentOwners() {
    const size_t n = plan_.tensors.size();
    content_of_.resize(n);
    std::vector<std::vector<int64_t>> writers_of_root(n);
    for (size_t id = 0; id < n; ++id) {
      content_of_[id] = id;
      if (plan_.tensors[id].sharing != "alias") writers_of_root[Root(id)].push_back(id);
    }
    for (size_t id = 0; id < n; ++id) {
      const PlanTensor& t = plan_.tensors[id];
      if (t.sharing != "alias") continue;
      int64_t best = Root(id);
      for (int64_t writer : writers_of_root[Root(id)]) {
        if (WriteKey(writer) < 2 * t.first_step + 1 && WriteKey(writer) >= WriteKey(best)) best = writer;
      }
      content_of_[id] = best;
    }
  }

  bool OverwrittenInPlaceAt(int64_t id, int64_t step) const {
    const int64_t root = Root(id);
    for (int64_t member : inplace_members_[root]) {
      if (member != id && plan_.tensors[member].first_step == step && WriteKey(member) > WriteKey(content_of_[id])) {
        return true;
      }
    }
    return false;
  }

  absl::Status BuildTables() {
    const size_t n = plan_.tensors.size();
    inplace_members_.resize(n);
    for (const PlanTier& tier : plan_.tiers) {
      tier_size_.push_back(static_cast<size_t>(tier.arena_bytes));
      tier_alignment_.push_back(static_cast<size_t>(tier.alignment));
      tier_name_.push_back(tier.name.c_str());
    }
    for (size_t id = 0; id < n; ++id) {
      const PlanTensor& t = plan_.tensors[id];
      tensor_tier_.push_back(static_cast<uint32_t>(t.tier));
      tensor_offset_.push_back(static_cast<size_t>(t.offset));
      tensor_size_.push_back(static_cast<size_t>(t.size));
      tensor_aligned_size_.push_back(static_cast<size_t>(t.aligned_size));
      tensor_first_step_.push_back(static_cast<int32_t>(t.first_step));
      tensor_last_step_.push_back(static_cast<int32_t>(t.last_step));
      tensor_shares_with_.push_back(static_cast<int32_t>(t.shares_with));
      tensor_sharing_.push_back(t.sharing == "alias"     ? FP_SHARING_ALIAS
                                : t.sharing == "inplace" ? FP_SHARING_INPLACE
                                                         : FP_SHARING_OWN);
      tensor_name_.push_back(t.name.c_str());
      if (t.sharing == "inplace") inplace_members_[Root(id)].push_back(id);
    }
    for (const std::string& node : plan_.schedule) node_name_.push_back(node.c_str());
    table_ = fp_plan{
        .num_tiers = static_cast<uint32_t>(plan_.tiers.size()),
        .tier_arena_size = tier_size_.data(),
        .tier_alignment = tier_alignment_.data(),
        .tier_name = tier_name_.data(),
        .num_tensors = static_cast<uint32_t>(n),
        .tensor_tier = tensor_tier_.data(),
        .tensor_offset = tensor_offset_.data(),
        .tensor_size = tensor_size_.data(),
        .tensor_aligned_size = tensor_aligned_size_.data(),
        .tensor_first_step = tensor_first_step_.data(),
        .tensor_last_step = tensor_last_step_.data(),
        .tensor_shares_with = tensor_shares_with_.data(),
        .tensor_sharing = tensor_sharing_.data(),
        .tensor_name = tensor_name_.data(),
        .num_steps = static_cast<uint32_t>(plan_.schedule.size()),
        .node_name = node_name_.data(),
    };
    violations_.plan = &table_;
    return absl::OkStatus();
  }

  // An error status: a buffer that cannot be had (the plan is not wrong,
  // this machine is too small for it). A result: the library refused the plan.
  absl::StatusOr<std::optional<ReplayResult>> InitArenas() {
    arenas_.resize(plan_.tiers.size());
    for (size_t t = 0; t < plan_.tiers.size(); ++t) {
      const size_t alignment = std::max<size_t>(tier_alignment_[t], alignof(std::max_align_t));
      const size_t wanted = fp_arena_required_bytes(&table_, static_cast<uint32_t>(t));
      if (wanted > (size_t{1} << 40) || alignment > (size_t{1} << 20)) {
        return absl::ResourceExhaustedError(absl::StrCat("tier '", plan_.tiers[t].name, "': an arena of ", wanted,
                                                         " bytes aligned to ", alignment, " is too large to replay"));
      }
      const size_t bytes = (wanted + alignment - 1) / alignment * alignment;
      buffers_.emplace_back(static_cast<unsigned char*>(std::aligned_alloc(alignment, std::max(bytes, alignment))));
      if (buffers_.back() == nullptr) {
        return absl::ResourceExhaustedError(
            absl::StrCat("cannot allocate the ", wanted, "-byte arena of tier '", plan_.tiers[t].name, "'"));
      }
      const fp_status status =
          fp_arena_init(&arenas_[t], &table_, static_cast<uint32_t>(t), buffers_.back().get(), wanted);
      if (status == FP_ERR_BAD_PLAN) return std::optional<ReplayResult>(Failure(-1, MisfitTensor(t)));
      if (status != FP_OK) {
        return absl::InternalError(absl::StrCat("tier '", plan_.tiers[t].name, "': ", fp_status_name(status)));
      }
      fp_arena_set_violation_handler(&arenas_[t], OnViolation, &violations_);
    }
    return std::optional<ReplayResult>();
  }

  std::string MisfitTensor(size_t tier) const {
    const PlanTier& t = plan_.tiers[tier];
    for (size_t id = 0; id < plan_.tensors.size(); ++id) {
      const PlanTensor& tensor = plan_.tensors[id];
      if (tensor.tier != static_cast<int>(tier)) continue;
      if (tensor.offset % t.alignment != 0) {
        return absl::StrCat("tensor '", tensor.name, "' at offset ", tensor.offset, " is not aligned to the ",
                            t.alignment, " bytes of tier '", t.name, "'");
      }
      if (tensor.offset > t.arena_bytes || tensor.aligned_size > t.arena_bytes - tensor.offset) {
        return absl::StrCat("tensor '", tensor.name, "' [", tensor.offset, ", ", tensor.offset + tensor.aligned_size,
                            ") ends past the ", t.arena_bytes, "-byte arena of tier '", t.name, "'");
      }
    }
    return absl::StrCat("tier '", t.name, "': ", fp_status_name(FP_ERR_BAD_PLAN));
  }

  unsigned char* Bytes(int64_t id) {
    return static_cast<unsigned char*>(fp_tensor(&arenas_[plan_.tensors[id].tier], static_cast<uint32_t>(id)));
  }

  void Write(int64_t id, int64_t key) {
    const PlanTensor& t = plan_.tensors[id];
    if (t.size == 0) return;
    FillPattern(id, Bytes(id), t.size);
    result_.bytes_written += t.size;
  }

  // Checks `id` at write-order time `now`; a failure names who wrote its
  // first wrong byte last.
  std::optional<ReplayResult> Check(int64_t id, int64_t now) {
    const PlanTensor& t = plan_.tensors[id];
    if (t.size == 0) return std::nullopt;
    const int64_t owner = content_of_[id];
    const int64_t wrong = FirstWrongByte(owner, Bytes(id), t.size);
    result_.bytes_checked += t.size;
    if (wrong < 0) return std::nullopt;
    const int64_t at = t.offset + wrong;
    int64_t culprit = -1;
    for (size_t w = 0; w < plan_.tensors.size(); ++w) {
      const PlanTensor& other = plan_.tensors[w];
      if (other.tier != t.tier || other.sharing == "alias" || static_cast<int64_t>(w) == owner) continue;
      const int64_t key = WriteKey(w);
      if (key > now || at < other.offset || at >= other.offset + other.size) continue;
      if (culprit < 0 || key >= WriteKey(culprit)) culprit = w;
    }
    const std::string tier = plan_.tiers[t.tier].name;
    const std::string victim = absl::StrCat("'", t.name, "' (id ", id, ", steps ", t.first_step, "-", t.last_step,
                                            ", bytes ", t.offset, "-", t.offset + t.size, " of tier '", tier, "')");
    if (culprit < 0) {
      return Failure(now / 2, absl::StrCat("step ", now / 2, ": tensor ", victim, " does not hold the bytes of '",
                                           plan_.tensors[owner].name, "' and no tensor wrote over them"),
                     id, -1);
    }
    const PlanTensor& c = plan_.tensors[culprit];
    const int64_t step = c.first_step;
    const std::string node = c.producer.empty() ? "(graph input)" : absl::StrCat("node '", plan_.schedule[step], "'");
    return Failure(step, absl::StrCat("step ", step, ", ", node, ": tensor '", c.name, "' (id ", culprit, ", bytes ",
                                      c.offset, "-", c.offset + c.size, ") overwrote live tensor ", victim),
                   id, culprit);
  }

  ReplayResult Failure(int64_t step, std::string line, int64_t overwritten = -1, int64_t overwriter = -1) {
    ReplayResult failed = result_;
    failed.ok = false;
    failed.failure = std::move(line);
    failed.step = step;
    failed.overwritten = overwritten;
    failed.overwriter = overwriter;
    return failed;
  }

  const ArenaPlan& plan_;
  ReplayResult result_;
  std::vector<size_t> tier_size_, tier_alignment_;
  std::vector<const char*> tier_name_, tensor_name_, node_name_;
  std::vector<uint32_t> tensor_tier_;
  std::vector<size_t> tensor_offset_, tensor_size_, tensor_aligned_size_;
  std::vector<int32_t> tensor_first_step_, tensor_last_step_, tensor_shares_with_;
  std::vector<uint8_t> tensor_sharing_;
  std::vector<std::vector<int64_t>> inplace_members_;  // Per group root: its in-place members.
  std::vector<int64_t> content_of_;                    // Whose pattern each tensor must hold.
  fp_plan table_{};
  std::vector<fp_arena> arenas_;
  std::vector<std::unique_ptr<unsigned char, FreeDeleter>> buffers_;
  Violations violations_;
};

}  // namespace

absl::StatusOr<ReplayResult> ReplayPlan(const ArenaPlan& plan) { return Replayer(plan).Run(); }

}  // namespace footprint
