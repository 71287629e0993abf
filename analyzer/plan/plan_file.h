// The arena plan of one analysis as a file a runtime reads: JSON (read back
// by `replay`) or a C99 header of constants and tables (runtime/fp_arena.h
// serves it). The plan carries exactly what the analysis planned: each
// tensor's tier offset, aligned size, live steps and the tensor whose bytes
// it shares (shares_with, as the memory model defines it).
#ifndef ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_FILE_H_
#define ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/memory/analysis_result.h"
#include "nlohmann/json.hpp"

namespace footprint {

inline constexpr int kPlanVersion = 1;

struct PlanTier {
  std::string name;         // The device profile's memory name.
  int64_t arena_bytes = 0;  // The tier's activation arena.
  int64_t alignment = 1;    // Every offset in it, and its buffer, is a multiple of this.
};

struct PlanTensor {
  std::string name;           // ONNX value name ("<node>/body" for a subgraph's workspace).
  std::string role;           // TensorRoleName: graph_input, activation, graph_output, subgraph_workspace.
  std::string producer;       // The node writing it; "" for a graph input (written before step 0).
  int tier = 0;               // Index into ArenaPlan::tiers.
  int64_t offset = 0;         // Offset in its tier's arena.
  int64_t size = 0;           // Exact bytes.
  int64_t aligned_size = 0;   // size rounded up to the tier's alignment.
  int64_t first_step = 0;     // Live steps [first_step, last_step], closed.
  int64_t last_step = 0;
  int64_t shares_with = -1;   // Id of the tensor whose bytes it occupies (its group's first); -1: its own.
  std::string sharing;        // "alias" or "inplace" when shares_with >= 0, else "".
};

struct ArenaPlan {
  int plan_version = kPlanVersion;  // Bumped when a field changes meaning.
  std::string generator;            // "onnx-footprint 0.1.0".
  std::string model_path;           // As given to analyze.
  std::string model_hash;           // ModelHash() of the model file.
  int64_t model_nodes = 0;          // Nodes of the main graph.
  nlohmann::json options;           // Device, modes and bindings that produced the plan.
  std::vector<std::string> schedule;  // Node names; step k runs schedule[k].
  std::vector<PlanTier> tiers;        // Tiers holding activations, in profile order.
  std::vector<PlanTensor> tensors;    // Id = index.
};

// "mx64:<16 hex digits>": a 64-bit multiply-xor hash of the model file's
// bytes (the graph and any inline weights; not a cryptographic hash: it
// tells a plan from another model's, it does not resist forgery). A file
// that cannot be read is an error naming it.
absl::StatusOr<std::string> ModelHash(const std::string& path);

// The plan of an analysis whose arena tensors are all sized; otherwise an
// error naming the unsized tensors and the flag that sizes them.
// `model_hash` is ModelHash(analysis.model.path).
absl::StatusOr<ArenaPlan> PlanFromAnalysis(const Analysis& analysis, const std::string& model_hash);

// The plan file for `path` by its extension: ".json" or ".h"; anything else
// is an error.
absl::StatusOr<std::string> RenderPlanFile(const ArenaPlan& plan, const std::string& path);

// ModelHash, PlanFromAnalysis and RenderPlanFile in one: the text of the
// plan file at `path` for this analysis.
absl::StatusOr<std::string> PlanFileFor(const Analysis& analysis, const std::string& path);

std::string RenderPlanJson(const ArenaPlan& plan);

// A C99 header (only <stdint.h> and <stddef.h>); `guard_stem` names its
// include guard (the file's stem).
std::string RenderPlanHeader(const ArenaPlan& plan, const std::string& guard_stem);

// A plan read back from RenderPlanJson's text; malformed text, a field of the
// wrong type and a plan_version other than kPlanVersion are errors naming
// the field.
absl::StatusOr<ArenaPlan> ParsePlanJson(std::string_view text);

// `name` as a C identifier: letters, digits and '_' kept (upper-cased),
// anything else '_'.
std::string CIdentifier(std::string_view name);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_FILE_H_
