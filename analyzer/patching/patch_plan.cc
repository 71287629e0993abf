#include "analyzer/patching/patch_plan.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/patching/chain.h"
#include "analyzer/patching/multi_input_search.h"
#include "analyzer/patching/plan_candidates.h"
#include "analyzer/patching/second_segment.h"
#include "analyzer/runtimes/registry.h"

namespace footprint::patching {
namespace {

constexpr int kMultiInputSegments = 4;  // Segments with several inputs added at most, one after another (a U-Net's decoder stages).

std::string NodeName(const onnx::NodeProto& node) { return node.name().empty() ? node.output(0) : node.name(); }

int64_t Position(const GraphFacts& facts, int node) {
  return std::find(facts.order.begin(), facts.order.end(), node) - facts.order.begin();
}

// The search of PlanPatches, step by step: the prefix segments ranked by a
// bound on their patched arena, the best prefix plan, then a second segment
// around the peak that remains.
class PatchSearcher {
 public:
  PatchSearcher(const LoadedModel& loaded, const AnalyzeOptions& options, const Analysis& given,
                const PatchSearchOptions& search, const GraphFacts& facts, int64_t model_macs)
      : loaded_(loaded),
        options_(options),
        given_(given),
        search_(search),
        facts_(facts),
        graph_(*facts.graph),
        alignment_(given.device.alignment_bytes > 0 ? given.device.alignment_bytes : 64),
        side_bytes_(SideBytes(facts, alignment_)),
        allowed_macs_(search.max_overhead_percent / 100.0 * static_cast<double>(model_macs)),
        rewrite_(search.stream_input ? RewriteWithStreamedInput : RewriteWithPatches),
        quick_(options) {
    // Candidates are compared by the planner's heuristics (no exact search,
    // whose result depends on the machine's load) and a short schedule search
    // (none when the user asks for none, so that `--schedule-time-limit 0`
    // gives the same choice on every run); the finalists are planned again
    // with the user's budgets.
    quick_.planner_time_limit = absl::ZeroDuration();
    quick_.schedule_time_limit = std::min(options.schedule_time_limit, absl::Milliseconds(10));
    quick_.sample_unbound_dims = false;
  }

  // The segments from each graph input, by a bound on their patched arena
  // (the assembly's pieces and T, and the larger side of each node left
  // whole), lowest first.
  void RankPrefixSegments() {
    std::string reasons;
    for (const onnx::ValueInfoProto& input : graph_.input()) {
      if (facts_.IsStatic(input.name())) continue;
      SegmentSearch found = SegmentsFrom(facts_, input.name());
      if (found.segments.empty()) absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", found.reason);
      for (Segment& segment : found.segments) {
        absl::flat_hash_set<int> members(segment.nodes.begin(), segment.nodes.end());
        int64_t bound = 2 * AlignedBytes(facts_.shapes.at(segment.output), alignment_);  // Pieces + T at the assembly.
        for (int node : facts_.order) {
          if (!members.contains(node)) bound = std::max(bound, side_bytes_[node]);
        }
        segments_.emplace_back(bound, std::move(segment));
      }
    }
    no_prefix_reason_ = segments_.empty() ? (reasons.empty() ? "the model has no NCHW graph input" : reasons) : "";
    std::stable_sort(segments_.begin(), segments_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  // The best plan of one prefix segment into `plan`. `reason` says why there
  // is none; `gave_up` when a rewrite refused the search (its message in
  // `reason`, nothing more to try).
  absl::Status SearchPrefix(PatchPlan& plan, std::string& reason, bool& gave_up) {
    std::optional<Candidate> best;
    std::vector<Candidate> finalists;  // The best few, planned again with the user's options.
    int64_t within_budget = 0;
    int64_t planned_candidates = 0;
    for (const auto& [bound, segment] : segments_) {
      if (bound >= given_.memory.arena_bytes) break;
      if (best.has_value() && bound >= best->arena_bytes) break;
      if (planned_candidates >= search_.max_planned_candidates) break;
      std::vector<PatchGeometry> admissible = PrefixGrids(segment);
      within_budget += admissible.empty() ? 0 : 1;
      const size_t counted = admissible.size();  // The finer grid below is planned beside the cap.
      if (std::optional<PatchGeometry> finer = FinerGrid(segment); finer.has_value()) admissible.push_back(*std::move(finer));
      for (size_t g = 0; g < admissible.size(); ++g) {
        PatchGeometry& geometry = admissible[g];
        PlannedSegment planned{.segment = segment, .geometry = std::move(geometry)};
        absl::StatusOr<onnx::ModelProto> rewritten = rewrite_(*loaded_.model, facts_, {planned});
        if (absl::IsFailedPrecondition(rewritten.status())) {
          reason = std::string(rewritten.status().message());
          gave_up = true;
          return absl::OkStatus();
        }
        if (!rewritten.ok()) return rewritten.status();
        LoadedModel candidate_model = loaded_;
        candidate_model.model = std::move(*rewritten);
        absl::StatusOr<Analysis> analysis = AnalyzeModel(candidate_model, quick_);
        if (!analysis.ok()) return analysis.status();
        if (g < counted) ++planned_candidates;
        const int64_t extra = planned.geometry.macs_after - planned.geometry.macs_before;
        Candidate candidate{.planned = std::move(planned), .arena_bytes = analysis->memory.arena_bytes, .extra_macs = extra};
        if (!best.has_value() || Better(candidate, *best)) best = candidate;
        KeepFinalist(std::move(candidate), finalists);
      }
    }
    if (!no_prefix_reason_.empty()) {
      reason = no_prefix_reason_;
    } else if (!best.has_value()) {
      reason = within_budget == 0 && segments_.front().first < given_.memory.arena_bytes
                   ? absl::StrCat("every patch grid costs more than ", search_.max_overhead_percent,
                                  "% extra MACs (--max-overhead)")
                   : kPeakOutside;
    }
    if (!best.has_value()) return absl::OkStatus();
    absl::StatusOr<std::optional<Finalist>> chosen = PlanFinalists(loaded_, facts_, options_, finalists, rewrite_);
    if (!chosen.ok()) return chosen.status();
    if (chosen->has_value() && (*chosen)->analysis.memory.arena_bytes < given_.memory.arena_bytes) {
      TakePlan(std::move(**chosen), plan);
    } else {
      reason = kPeakOutside;
    }
    return absl::OkStatus();
  }

  // A second segment, around the node whose tensors make the peak once the
  // best prefix segment is patched (a detector's head, a later stage),
  // paired with each prefix segment (the best alone may end where its
  // assembly is as large as the head) or none; pairs by a lower bound on
  // their arena, lowest first, each planned. Replaces `plan` when a pair
  // gives a lower arena.
  absl::Status AddSecondSegment(PatchPlan& plan) {
    const Analysis& single = plan.planned.empty() ? given_ : plan.analysis;
    absl::flat_hash_set<int> best_nodes;
    absl::flat_hash_set<std::string> best_inner;
    for (const PlannedSegment& planned : plan.planned) {
      const Half half = MakeHalf(facts_, planned, alignment_);
      best_nodes.insert(half.nodes.begin(), half.nodes.end());
      best_inner.insert(half.inner.begin(), half.inner.end());
    }
    const std::optional<int> peak = PeakNode(single, facts_, best_nodes);
    std::vector<Half> seconds;
    if (peak.has_value() && SpatialOpIn(facts_, graph_.node(*peak)).ok()) {
      for (Segment& segment : SegmentsAround(facts_, *peak, best_nodes, best_inner)) {
        for (PatchGeometry& geometry : AdmissibleGrids(facts_, segment, allowed_macs_, search_)) {
          seconds.push_back(MakeHalf(facts_, {.segment = segment, .geometry = std::move(geometry)}, alignment_));
        }
      }
    }
    if (seconds.empty()) return absl::OkStatus();
    std::vector<std::optional<Half>> firsts = FirstHalves();
    std::vector<Pair> pairs = RankPairs(firsts, seconds, single.memory.arena_bytes);
    std::vector<Candidate> pair_finalists;
    int64_t pair_arena = single.memory.arena_bytes;  // The best heuristic arena so far.
    int64_t planned_pairs = 0;
    for (const Pair& candidate : pairs) {
      if (candidate.bound >= pair_arena || planned_pairs >= kPlannedPairs) break;
      std::vector<PlannedSegment> both;
      int64_t extra = seconds[candidate.second].extra_macs;
      if (firsts[candidate.first].has_value()) {
        both.push_back(firsts[candidate.first]->planned);
        extra += firsts[candidate.first]->extra_macs;
      }
      both.push_back(seconds[candidate.second].planned);
      LoadedModel model;
      absl::StatusOr<std::optional<Analysis>> planned = PlanWith(loaded_, facts_, quick_, both, rewrite_, model);
      if (!planned.ok()) return planned.status();
      ++planned_pairs;
      if (!planned->has_value()) continue;
      const int64_t arena = (*planned)->memory.arena_bytes;
      if (arena >= single.memory.arena_bytes) continue;
      pair_arena = std::min(pair_arena, arena);
      KeepFinalist(Candidate{.segments = std::move(both), .arena_bytes = arena, .extra_macs = extra}, pair_finalists);
    }
    absl::StatusOr<std::optional<Finalist>> chosen = PlanFinalists(loaded_, facts_, options_, pair_finalists, rewrite_);
    if (!chosen.ok()) return chosen.status();
    if (chosen->has_value() && (*chosen)->analysis.memory.arena_bytes < single.memory.arena_bytes) {
      TakePlan(std::move(**chosen), plan);
    }
    return absl::OkStatus();
  }

  // Chains (chain.h): after a segment of `plan`, the segments that read
  // its T, then theirs, each T but the last kept in pieces. The segment on
  // its plan's grid or another admissible one (its patches, no longer
  // beside an assembly, may then be what peaks), the chain on that grid or
  // a finer one (each link's grid capped at its T's size), every length
  // within the MAC budget; by a lower bound (each segment's patches, the
  // last T assembled, the largest node left whole), lowest first, each
  // planned. Replaces `plan` when a chain gives a lower arena.
  absl::Status ChainSegments(PatchPlan& plan) {
    // With no plan (every prefix segment's assembly as large as the model's
    // peak: a wide residual stage), the best-ranked prefix segments that
    // a chain can follow, each alone.
    std::vector<std::pair<std::vector<PlannedSegment>, size_t>> starts;  // (segments, the one chained)
    if (!plan.planned.empty()) {
      for (size_t s = 0; s < plan.planned.size(); ++s) starts.emplace_back(plan.planned, s);
      // A segment of a pair alone too: the other may hold the nodes its chain needs (a second
      // segment read from the first's T), and the chain may do better than the pair.
      for (size_t s = 0; plan.planned.size() > 1 && s < plan.planned.size(); ++s) {
        starts.push_back({{plan.planned[s]}, 0});
      }
    } else {
      for (const auto& [bound, segment] : segments_) {
        if (starts.size() >= kChainHeads || bound >= given_.memory.arena_bytes * 2) break;
        if (!NextSegment(facts_, segment.output, {segment.nodes.begin(), segment.nodes.end()}).has_value()) continue;
        std::vector<PatchGeometry> grids = AdmissibleGrids(facts_, segment, allowed_macs_, search_);
        if (grids.empty()) continue;
        starts.push_back({{PlannedSegment{.segment = segment, .geometry = std::move(grids.back())}}, 0});
      }
    }
    const int64_t single = plan.planned.empty() ? given_.memory.arena_bytes : plan.analysis.memory.arena_bytes;
    struct Chain {
      std::vector<PlannedSegment> base;   // The plan's segments (or one prefix segment).
      size_t from = 0;                    // The one it follows.
      PlannedSegment head;                // That segment on its grid here, T in pieces.
      std::vector<PlannedSegment> links;  // The segments after it, on one grid.
      std::vector<int64_t> extra;         // Extra MACs with the first k + 1 links.
    };
    struct Try {
      int64_t bound = 0;   // A lower bound on the arena.
      size_t chain = 0;    // Index in `chains`.
      size_t length = 0;   // Links taken.
    };
    std::vector<Chain> chains;
    std::vector<Try> tries;
    // A peak at a node no segment holds stays unless a chain takes it in.
    const std::optional<int> peak_outside = plan.planned.empty() ? std::nullopt : PeakOutsideSegments(facts_, plan);
    std::vector<int> by_side = facts_.order;
    std::stable_sort(by_side.begin(), by_side.end(), [&](int a, int b) { return side_bytes_[a] > side_bytes_[b]; });
    for (const auto& [base, s] : starts) {
      absl::flat_hash_set<int> taken;
      int64_t plan_extra = 0;
      for (const PlannedSegment& planned : base) {
        taken.insert(planned.segment.nodes.begin(), planned.segment.nodes.end());
        plan_extra += planned.geometry.macs_after - planned.geometry.macs_before;
      }
      const PlannedSegment& chosen = base[s];
      const std::vector<Segment> after =
          ChainAfter(facts_, chosen.segment.output, taken, static_cast<size_t>(search_.max_chain_segments));
      if (after.empty()) continue;
      const int64_t others_extra = plan_extra - (chosen.geometry.macs_after - chosen.geometry.macs_before);
      std::vector<PatchGeometry> heads{chosen.geometry};
      for (PatchGeometry& geometry : AdmissibleGrids(facts_, chosen.segment, allowed_macs_ - others_extra, search_)) {
        if (geometry.rows != chosen.geometry.rows || geometry.cols != chosen.geometry.cols) heads.push_back(std::move(geometry));
      }
      for (PatchGeometry& head_geometry : heads) {
        // A head of more than 128 patches (a prefix's 16 x 16 grid) leaves hundreds of pieces live:
        // the planner's bounded search on such models took a minute; its chains are not tried.
        const int64_t most = search_.max_patches_per_axis * search_.max_patches_per_axis * 2;
        if (head_geometry.rows * head_geometry.cols > most) continue;
        PlannedSegment head{.segment = chosen.segment, .geometry = std::move(head_geometry), .output_in_pieces = true};
        const int64_t head_bound = InnerBound(facts_, head, alignment_);
        const int64_t head_extra = others_extra + head.geometry.macs_after - head.geometry.macs_before;
        for (const Grid& grid : ChainGrids(head.geometry, after.front())) {
          Chain chain{.base = base, .from = s, .head = head};
          absl::flat_hash_set<int> patched = taken;  // Nodes of the plan and of the links so far.
          int64_t extra = head_extra;
          int64_t links_bound = head_bound;
          bool holds_peak = !peak_outside.has_value();
          int64_t copies = static_cast<int64_t>(head.geometry.patches.size() * head.segment.nodes.size());
          constexpr int64_t kPieceNodes = 4;  // About the Slices and Concats a patch reads its pieces with.
          for (const Segment& link : after) {
            const std::vector<int64_t>& out = facts_.shapes.at(link.output);
            const Grid capped{.rows = std::min(grid.rows, out[2]), .cols = std::min(grid.cols, out[3])};
            if (capped.rows * capped.cols < 2) break;  // One patch: nothing left to cut.
            copies += capped.rows * capped.cols * (static_cast<int64_t>(link.nodes.size()) + kPieceNodes);
            if (copies > search_.max_chain_copies) break;  // A model too large to plan quickly (and to run).
            PlannedSegment planned{.segment = link, .geometry = GeometryOf(facts_, link, capped), .output_in_pieces = true};
            extra += planned.geometry.macs_after - planned.geometry.macs_before;
            if (planned.geometry.empty_read || static_cast<double>(extra) > allowed_macs_) break;
            patched.insert(link.nodes.begin(), link.nodes.end());
            links_bound = std::max(links_bound, InnerBound(facts_, planned, alignment_));
            int64_t bound = std::max(links_bound, 2 * AlignedBytes(out, alignment_));  // The last T assembled.
            for (int node : by_side) {
              if (!patched.contains(node)) {
                bound = std::max(bound, side_bytes_[node]);
                break;
              }
            }
            holds_peak |= std::find(link.nodes.begin(), link.nodes.end(), *peak_outside) != link.nodes.end();
            chain.links.push_back(std::move(planned));
            chain.extra.push_back(extra);
            if (holds_peak) tries.push_back({.bound = bound, .chain = chains.size(), .length = chain.links.size()});
          }
          if (!chain.links.empty()) chains.push_back(std::move(chain));
        }
      }
    }
    std::stable_sort(tries.begin(), tries.end(), [](const Try& a, const Try& b) { return a.bound < b.bound; });
    int64_t best = single;
    int64_t planned_chains = 0;
    std::vector<Candidate> finalists;
    for (const Try& attempt : tries) {
      if (attempt.bound >= best || planned_chains >= search_.max_planned_chains) break;
      const Chain& chain = chains[attempt.chain];
      std::vector<PlannedSegment> segments = chain.base;
      segments[chain.from] = chain.head;
      for (size_t k = 0; k < attempt.length; ++k) {
        segments.push_back(chain.links[k]);
        segments.back().output_in_pieces = k + 1 < attempt.length;
      }
      LoadedModel model;
      absl::StatusOr<std::optional<Analysis>> planned = PlanWith(loaded_, facts_, quick_, segments, rewrite_, model);
      if (!planned.ok()) return planned.status();
      ++planned_chains;
      if (!planned->has_value() || (*planned)->memory.arena_bytes >= single) continue;
      best = std::min(best, (*planned)->memory.arena_bytes);
      KeepFinalist(Candidate{.segments = std::move(segments),
                             .arena_bytes = (*planned)->memory.arena_bytes,
                             .extra_macs = chain.extra[attempt.length - 1]},
                   finalists);
    }
    absl::StatusOr<std::optional<Finalist>> chosen = PlanFinalists(loaded_, facts_, options_, finalists, rewrite_);
    if (!chosen.ok()) return chosen.status();
    if (chosen->has_value() && (*chosen)->analysis.memory.arena_bytes < single) TakePlan(std::move(**chosen), plan);
    return absl::OkStatus();
  }

  // What the segments with several inputs are searched with (multi_input_search.h).
  SearchContext context() const {
    return {.loaded = loaded_, .options = options_, .quick = quick_, .given = given_, .search = search_,
            .facts = facts_, .alignment = alignment_, .allowed_macs = allowed_macs_, .rewrite = rewrite_};
  }

 private:
  static constexpr const char* kPeakOutside =
      "the peak is outside every patchable segment: patching cannot lower the arena";
  static constexpr size_t kFirstSegments = 24;  // Prefix segments paired, by their bound.
  static constexpr int64_t kPlannedPairs = 16;  // Pairs planned at most.
  static constexpr size_t kChainHeads = 4;      // Prefix segments a chain may follow when there is no plan.

  struct Pair {
    int64_t bound = 0;  // A lower bound on the pair's arena.
    size_t first = 0;   // Index in the first halves (0: no first segment).
    size_t second = 0;  // Index in the second halves.
  };

  // A prefix segment's grids within the MAC budget, coarsest first until one
  // is over (finer grids along both axes only recompute more); the
  // grids_per_segment with the most patches.
  std::vector<PatchGeometry> PrefixGrids(const Segment& segment) const {
    const std::vector<int64_t>& out = facts_.shapes.at(segment.output);
    std::vector<PatchGeometry> admissible;
    for (const Grid& grid : GridsFor(out[2], out[3], search_.max_patches_per_axis)) {
      PatchGeometry geometry = GeometryOf(facts_, segment, grid);
      if (geometry.empty_read) continue;
      if (static_cast<double>(geometry.macs_after - geometry.macs_before) > allowed_macs_) break;
      admissible.push_back(std::move(geometry));
    }
    std::sort(admissible.begin(), admissible.end(), [](const PatchGeometry& a, const PatchGeometry& b) {
      const int64_t patches_a = a.rows * a.cols, patches_b = b.rows * b.cols;
      return patches_a != patches_b ? patches_a > patches_b : a.macs_after < b.macs_after;
    });
    if (admissible.size() > static_cast<size_t>(search_.grids_per_segment)) {
      admissible.resize(search_.grids_per_segment);
    }
    return admissible;
  }

  // The finest grid of `segment` with more than max_patches_per_axis patches
  // along an axis (up to max_fine_patches_per_axis) within the MAC budget,
  // coarsest first until one is over; nullopt when there is none.
  std::optional<PatchGeometry> FinerGrid(const Segment& segment) const {
    const std::vector<int64_t>& out = facts_.shapes.at(segment.output);
    std::optional<PatchGeometry> finest;
    for (const Grid& grid : GridsFor(out[2], out[3], search_.max_fine_patches_per_axis)) {
      if (std::max(grid.rows, grid.cols) <= search_.max_patches_per_axis) continue;
      PatchGeometry geometry = GeometryOf(facts_, segment, grid);
      if (geometry.empty_read) continue;
      if (static_cast<double>(geometry.macs_after - geometry.macs_before) > allowed_macs_) break;
      finest = std::move(geometry);
    }
    return finest;
  }

  // The grids a chain after a segment on `grid` tries: that grid (its
  // pieces then line up with the next segment's patches where the size
  // stays) and a middle one of `first`'s finer grids (fewer pieces live
  // beside each patch; the finest cost many node copies, each a few
  // Slices and Concats of pieces more).
  std::vector<Grid> ChainGrids(const PatchGeometry& grid, const Segment& first) const {
    std::vector<Grid> grids{{.rows = grid.rows, .cols = grid.cols}};
    const std::vector<int64_t>& out = facts_.shapes.at(first.output);
    std::vector<Grid> finer;
    for (const Grid& candidate : GridsFor(out[2], out[3], search_.max_patches_per_axis)) {
      if (candidate.rows * candidate.cols > grid.rows * grid.cols) finer.push_back(candidate);
    }
    if (!finer.empty()) grids.push_back(finer[finer.size() / 2]);
    return grids;
  }

  // No first segment, then the admissible grids of the best-ranked prefix segments.
  std::vector<std::optional<Half>> FirstHalves() const {
    std::vector<std::optional<Half>> firsts{std::nullopt};
    for (size_t k = 0; k < segments_.size() && k < kFirstSegments; ++k) {
      for (PatchGeometry& geometry : AdmissibleGrids(facts_, segments_[k].second, allowed_macs_, search_)) {
        firsts.push_back(MakeHalf(facts_, {.segment = segments_[k].second, .geometry = std::move(geometry)}, alignment_));
      }
    }
    return firsts;
  }

  // The pairs that fit the MAC budget and do not overlap, whose bound is
  // below `arena_bytes`, lowest bound first.
  std::vector<Pair> RankPairs(const std::vector<std::optional<Half>>& firsts, const std::vector<Half>& seconds,
                              int64_t arena_bytes) const {
    std::vector<int> by_side = facts_.order;
    std::stable_sort(by_side.begin(), by_side.end(), [&](int a, int b) { return side_bytes_[a] > side_bytes_[b]; });
    std::vector<Pair> pairs;
    for (size_t f = 0; f < firsts.size(); ++f) {
      const Half* first = firsts[f].has_value() ? &*firsts[f] : nullptr;
      for (size_t k = 0; k < seconds.size(); ++k) {
        const Half& second = seconds[k];
        if (first != nullptr) {
          if (first->extra_macs + second.extra_macs > allowed_macs_) continue;
          const std::vector<std::string> inputs = InputsOf(second.planned.segment);
          if (std::any_of(inputs.begin(), inputs.end(), [&](const std::string& v) { return first->inner.contains(v); })) continue;
          if (std::any_of(second.nodes.begin(), second.nodes.end(),
                          [&](int node) { return first->nodes.contains(node); })) {
            continue;
          }
        }
        int64_t bound = std::max(first == nullptr ? 0 : first->inner_bound, second.inner_bound);
        for (int node : by_side) {
          if ((first == nullptr || !first->nodes.contains(node)) && !second.nodes.contains(node)) {
            bound = std::max(bound, side_bytes_[node]);
            break;
          }
        }
        if (bound < arena_bytes) pairs.push_back({.bound = bound, .first = f, .second = k});
      }
    }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.bound < b.bound; });
    return pairs;
  }

  const LoadedModel& loaded_;
  const AnalyzeOptions& options_;
  const Analysis& given_;
  const PatchSearchOptions& search_;
  const GraphFacts& facts_;
  const onnx::GraphProto& graph_;
  const int64_t alignment_;
  const std::vector<int64_t> side_bytes_;
  const double allowed_macs_;
  const RewriteFunction rewrite_;
  AnalyzeOptions quick_;
  std::vector<std::pair<int64_t, Segment>> segments_;  // (a bound on the patched arena, segment)
  std::string no_prefix_reason_;                       // Why there is no prefix segment.
};

// The plan's segments in the order they run, named, with their MACs.
void DescribeSegments(const GraphFacts& facts, int64_t model_macs, PatchPlan& plan) {
  std::sort(plan.planned.begin(), plan.planned.end(), [&](const PlannedSegment& a, const PlannedSegment& b) {
    return Position(facts, a.segment.nodes.back()) < Position(facts, b.segment.nodes.back());
  });
  const onnx::GraphProto& graph = *facts.graph;
  for (const PlannedSegment& planned : plan.planned) {
    const Segment& segment = planned.segment;
    plan.segments.push_back({.input = segment.input,
                             .other_inputs = segment.other_inputs,
                             .output = segment.output,
                             .first_node = NodeName(graph.node(segment.nodes.front())),
                             .last_node = NodeName(graph.node(segment.nodes.back())),
                             .nodes = static_cast<int64_t>(segment.nodes.size()),
                             .rows = planned.geometry.rows,
                             .cols = planned.geometry.cols,
                             .macs_before = planned.geometry.macs_before,
                             .macs_after = planned.geometry.macs_after,
                             .output_in_pieces = planned.output_in_pieces});
    plan.extra_macs += planned.geometry.macs_after - planned.geometry.macs_before;
  }
  plan.extra_macs_percent = 100.0 * static_cast<double>(plan.extra_macs) / static_cast<double>(model_macs);
}

// The NCHWc block of the runtime a patched model is written for: the
// --runtime model's, else kDefaultLayoutChannelBlock.
absl::StatusOr<int64_t> LayoutChannelBlockOf(const std::string& runtime) {
  if (runtime.empty()) return kDefaultLayoutChannelBlock;
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> model = MakeRuntimeModel(runtime);
  if (!model.ok()) return model.status();
  return *model == nullptr ? kDefaultLayoutChannelBlock : (*model)->LayoutChannelBlock();
}

}  // namespace

absl::StatusOr<PatchSearch> PlanPatches(const LoadedModel& loaded, const AnalyzeOptions& options,
                                        const Analysis& given, const PatchSearchOptions& search) {
  PatchSearch result;
  if (!given.memory.complete) {
    result.reason = "some tensor has no known size (bind the input dims)";
    return result;
  }
  absl::StatusOr<TensorShapes> shapes = ShapesOf(loaded, options);
  if (!shapes.ok()) return shapes.status();
  absl::StatusOr<int64_t> block = LayoutChannelBlockOf(options.runtime);
  if (!block.ok()) return block.status();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(loaded.model->graph(), *shapes, *block);
  if (!facts.ok()) return facts.status();
  const int64_t model_macs = ModelMacs(*facts);
  if (model_macs == 0) {
    result.reason = "the model has no Conv, Gemm or MatMul: nothing to patch";
    return result;
  }
  PatchSearcher searcher(loaded, options, given, search, *facts, model_macs);
  searcher.RankPrefixSegments();
  PatchPlan plan;
  plan.model_macs = model_macs;
  plan.stream_input = search.stream_input;
  plan.layout_channel_block = facts->layout_channel_block;
  std::string reason;  // Why the prefix search gives no option.
  bool gave_up = false;
  if (absl::Status status = searcher.SearchPrefix(plan, reason, gave_up); !status.ok()) return status;
  if (gave_up) {
    result.reason = reason;
    return result;
  }
  if (absl::Status status = searcher.AddSecondSegment(plan); !status.ok()) return status;
  if (absl::Status status = searcher.ChainSegments(plan); !status.ok()) return status;
  for (int added = 0; added < kMultiInputSegments; ++added) {
    absl::StatusOr<bool> lower = AddMultiInputSegment(searcher.context(), plan);
    if (!lower.ok()) return lower.status();
    if (!*lower) break;
  }
  for (int added = 0; added < kMultiInputSegments; ++added) {
    absl::StatusOr<bool> lower = AddRuntimeSegment(searcher.context(), plan);
    if (!lower.ok()) return lower.status();
    if (!*lower) break;
  }
  if (plan.planned.empty()) {
    result.reason = reason;
    return result;
  }
  plan.shapes = std::move(*shapes);
  DescribeSegments(*facts, model_macs, plan);
  result.plan = std::move(plan);
  return result;
}

absl::StatusOr<onnx::ModelProto> RewriteFullModel(const onnx::ModelProto& full, const PatchPlan& plan) {
  if (plan.stream_input) return absl::InvalidArgumentError("a plan with the input streamed is a figure, not a model to write");
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(full.graph(), plan.shapes, plan.layout_channel_block);
  if (!facts.ok()) return facts.status();
  return RewriteWithPatches(full, *facts, plan.planned);
}

}  // namespace footprint::patching

