// One rewrite ONNX Runtime makes to a graph while it creates a session, as a
// small object: its name, where ORT runs it, the ORT source it follows, and
// Apply(graph, context) -> what it changed. A target (targets.h) is an ordered
// table of these, read top to bottom like ORT's own optimizer levels.
//
// Usage (a pass file, e.g. passes/pad_fusion.cc):
//   PassChange ApplyPadFusion(IrGraph& graph, PassContext& context) {
//     PassChange change;
//     ... graph_editing.h's helpers, ++change.fused_nodes ...
//     return change;
//   }
//   const Pass kPadFusion = {.name = "PadFusion", .stage = OrtStage::kLevel1,
//                            .source = "core/optimizer/pad_fusion.cc", .apply = &ApplyPadFusion};
// and one row in a table of targets.cc: `{.pass = &kPadFusion}`.
//
// Why passes share one signature: what one pass tells a later one goes
// through the graph or a named field of the context (PassContext), so a
// pass can be read, tested and moved on its own. No pass includes the
// orchestrator (targets.h).
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASS_H_

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Where ORT applies a rewrite while it creates a session
// (core/session/inference_session.cc, Initialize and TransformGraph; the
// transformers of each level: core/optimizer/graph_transformer_utils.cc).
enum class OrtStage {
  kLoad,          // Graph construction: which initializers are constant (core/graph/graph.cc).
  kBeforeLevel1,  // Before any transformer: EnsureUniqueDQForNodeUnit.
  kLevel1,        // TransformerLevel::Level1 (basic): constant folding, CSE, eliminations.
  kPartitioning,  // Partitioning: the kernel each node gets, function bodies inlined where none.
  kInsertCast,    // InsertCastTransformer: float16 ops with no float16 kernel run in float32.
  kLevel2,        // TransformerLevel::Level2 (extended): QDQ groups and fusions of the CPU provider.
  kLevel3,        // TransformerLevel::Level3 (layout): NCHWc, NHWC.
  kSessionState,  // Not a transformer: what the session state and its planner see (order, static shapes).
};

// "level 1", "insert casts", ... as the target tables print them.
absl::string_view OrtStageName(OrtStage stage);

// What a target's kernels are, as its passes read it (ORT decides these at
// run time from the CPU: core/mlas/lib/platform.cpp).
struct TargetFacts {
  CpuIsa isa = CpuIsa::kAvx2;  // Whose kernels run.
  int64_t nchwc_block = 0;     // MlasNchwcGetBlockSize(): channels per NCHWc block; 0 when there is no NCHWc.
  bool int8_qdq = false;       // QDQIsInt8Allowed(): int8 QDQ groups run as is (ARM64); else made uint8 first.
};

// What InsertCastTransformer did (passes/fp16_casts.cc), read by the table's
// later rows: ORT 1.30 runs its level-2 and level-3 passes again after the
// Casts only when FuseInitializersTransformer converted a weight at load.
struct CastsInserted {
  bool casts = false;              // Some node runs in float32 behind Casts.
  bool converted_at_load = false;  // A float16 weight is converted at load: levels 2 and 3 run again.
};

// What every pass reads and what it tells the passes after it.
struct PassContext {
  const TargetFacts& target;     // The target's kernels.
  const RewriteInputs& model;    // IR version, opset, shapes, the file's own graph.
  GraphRewrite& rewrite;         // What the passes made so far: side tables, nodes made, fused tensors.
  CastsInserted float16;         // Set by InsertCastTransformer.
  // The Conv nodes (by the proto a fusion made for them) whose kernel
  // applies an activation, as ORT's FusedConv and NchwcConv do by their
  // `activation` attribute: no later fusion takes another activation or a
  // sum into them. Set by the Conv fusions and NCHWc.
  absl::flat_hash_set<const onnx::NodeProto*> activation_fused;
};

// What one pass changed; the orchestrator adds it to GraphRewrite's counts.
struct PassChange {
  int64_t fused_nodes = 0;    // Nodes that left the graph: fused into another, merged, cancelled.
  int64_t layout_nodes = 0;   // Nodes it runs in a blocked layout (NCHWc).
  int64_t reorder_nodes = 0;  // Layout conversions it added (ReorderInput/ReorderOutput, NHWC Transposes).
};

// One rewrite of ORT's, as a table row names it.
struct Pass {
  absl::string_view name;    // ORT's name for the transformer ("PadFusion"), or for what the step models.
  OrtStage stage;            // Where ORT runs it.
  absl::string_view source;  // The ORT source it follows (paths in github.com/microsoft/onnxruntime).
  PassChange (*apply)(IrGraph& graph, PassContext& context);  // Rewrites `graph` in place.
};

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_PASS_H_
