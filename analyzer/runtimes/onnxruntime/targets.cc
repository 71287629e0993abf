// The tables of onnxruntime-cpu's targets (targets.h) and the orchestrator
// that runs one. Paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/targets.h"

#include <cstdint>
#include <vector>

#include "analyzer/runtimes/onnxruntime/passes/passes.h"

namespace footprint::ort {
namespace {

// Registration, as graph_transformer_utils.cc decides it by the CPU:
// NchwcTransformer only where MLAS has a block (MlasNchwcGetBlockSize() > 1:
// x86-64), QDQS8ToU8Transformer only where int8 QDQ is not allowed (x86-64).
constexpr Registration kWhereMlasHasNchwc = {
    .holds = [](const TargetFacts& target) { return target.nchwc_block > 1; },
    .says = "where MLAS has an NCHWc block"};
constexpr Registration kWhereInt8QdqIsNotAllowed = {
    .holds = [](const TargetFacts& target) { return !target.int8_qdq; },
    .says = "where int8 QDQ is not allowed"};

// Conditions on what the rows before told the context. ORT 1.30 runs its
// level-2 and level-3 passes again after InsertCastTransformer only when a
// float16 weight was converted at load (passes/fp16_casts.cc, measured).
constexpr Condition kLevelsTwoAndThreeRun = {
    .holds = [](const PassContext& context) { return !context.float16.casts || context.float16.converted_at_load; },
    .says = "no Casts were inserted, or a float16 weight was converted at load"};
constexpr Condition kLevelTwoRunsAgainAfterCasts = {
    .holds = [](const PassContext& context) { return context.float16.casts && context.float16.converted_at_load; },
    .says = "Casts were inserted and a float16 weight was converted at load"};

// The CPU provider's table. ORT applies level 1's rules until none matches
// and each level after the one before; a row sits out of that order only
// where its comment says why, and the table as a whole reaches the graph
// ORT's optimized-model dump shows (bench/ground_truth/).
constexpr PassRow kCpuRows[] = {
    // Graph construction: which initializers a caller may override (no rule
    // that needs a constant applies to them).
    {.pass = &kOverridableInitializers},
    // The graph's inputs are the caller's buffers: ORT never frees or reuses
    // them during a run.
    {.pass = &kCallerOwnedInputs},
    // No figure for a model ORT refuses: a bfloat16 op without a kernel.
    {.pass = &kBfloat16WithoutKernel},
    // Before level 1: every reader of a DequantizeLinear gets its own copy,
    // new nodes ahead of any other rule's.
    {.pass = &kEnsureUniqueDQForNodeUnit},
    // Level 1.
    // Its rewrite rules run first (graph_transformer_utils.cc), NoopElimination
    // among them: before the CSE of the constants it reads, and before any
    // fusion below sees an Add of 0 or a Mul by 1.
    {.pass = &kNoopElimination},
    {.pass = &kSmallConstantsCse},
    {.pass = &kConstantsOfShapeCse},
    {.pass = &kPadFusion},
    // The quantized rules (level 1's CSE of quantizers, level 2's QDQ and
    // dynamic-quantization rules, the unfolded weight DequantizeLinear,
    // level 3's NHWC layout) run here, before the float fusions below can see
    // the float ops they replace.
    {.pass = &kQuantizerCse},
    {.pass = &kQdqS8ToU8, .registered = &kWhereInt8QdqIsNotAllowed},
    {.pass = &kQdqSelectorActions},
    {.pass = &kDynamicQuantizerCse},
    {.pass = &kDynamicQuantizeMatMulFusion},
    {.pass = &kUnfoldedDequantizeLinear},
    {.pass = &kNhwcTransformer},
    // Level 1's transpose optimizer.
    {.pass = &kTransposeOptimizer},
    // Partitioning, after level 1 and before the Casts: float16 ops with no
    // float16 kernel and a function body ORT takes at this opset become the
    // body's nodes, which no fusion below sees as the op.
    {.pass = &kInlineFloat16Functions},
    // Level 2's fusions (ORT 1.30 inserts the Casts after its level-1 passes;
    // the level-2 passes before them skip the float16 nodes that have no
    // kernel yet, so those fuse only after the Casts).
    {.pass = &kQuickGeluFusion},
    {.pass = &kGeluFusion},
    {.pass = &kMatMulScaleFusion},
    {.pass = &kConvFusions},
    {.pass = &kInsertCastTransformer},
    // Level 2 again on what the Casts made float32.
    {.pass = &kQuickGeluFusion, .runs = &kLevelTwoRunsAgainAfterCasts},
    {.pass = &kConvFusionsAfterCasts, .runs = &kLevelTwoRunsAgainAfterCasts},
    // Level 3.
    {.pass = &kNchwcTransformer, .registered = &kWhereMlasHasNchwc, .runs = &kLevelsTwoAndThreeRun},
    {.pass = &kConvAddActivationFusion, .runs = &kLevelsTwoAndThreeRun},
    // The session state: the order the graph runs in, and the values whose
    // shape ORT's planner cannot know.
    {.pass = &kExecutionOrder},
    {.pass = &kShapesOrtCannotInfer},
};

constexpr Target kCpuAvx2 = {
    .name = "cpu:avx2", .facts = {.isa = CpuIsa::kAvx2, .nchwc_block = 8, .int8_qdq = false}, .rows = kCpuRows};
constexpr Target kCpuAvx512 = {
    .name = "cpu:avx512", .facts = {.isa = CpuIsa::kAvx512, .nchwc_block = 16, .int8_qdq = false}, .rows = kCpuRows};
constexpr Target kCpuArm64 = {
    .name = "cpu:arm64", .facts = {.isa = CpuIsa::kArm64, .nchwc_block = 0, .int8_qdq = true}, .rows = kCpuRows};

}  // namespace

const Target& CpuTarget(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return kCpuAvx2;
    case CpuIsa::kAvx512:
      return kCpuAvx512;
    case CpuIsa::kArm64:
      return kCpuArm64;
  }
  return kCpuAvx2;
}

std::vector<const Target*> AllTargets() { return {&kCpuAvx2, &kCpuAvx512, &kCpuArm64}; }

std::vector<const PassRow*> RegisteredRows(const Target& target) {
  std::vector<const PassRow*> rows;
  for (const PassRow& row : target.rows) {
    if (row.registered == nullptr || row.registered->holds(target.facts)) rows.push_back(&row);
  }
  return rows;
}

GraphRewrite RunPasses(const Target& target, const RewriteInputs& inputs, IrGraph& graph,
                       std::vector<PassRecord>* trace) {
  GraphRewrite rewrite;
  PassContext context{.target = target.facts, .model = inputs, .rewrite = rewrite};
  for (const PassRow* row : RegisteredRows(target)) {
    if (row->runs != nullptr && !row->runs->holds(context)) continue;
    const int64_t nodes_before = static_cast<int64_t>(graph.nodes.size());
    const int64_t values_before = static_cast<int64_t>(graph.values.size());
    const int64_t made_before = static_cast<int64_t>(rewrite.made_nodes.size());
    const PassChange change = row->pass->apply(graph, context);
    rewrite.fused_nodes += change.fused_nodes;
    rewrite.layout_nodes += change.layout_nodes;
    rewrite.reorder_nodes += change.reorder_nodes;
    if (trace != nullptr) {
      trace->push_back({.pass = row->pass,
                        .change = change,
                        .nodes_before = nodes_before,
                        .nodes_after = static_cast<int64_t>(graph.nodes.size()),
                        .values_added = static_cast<int64_t>(graph.values.size()) - values_before,
                        .nodes_made = static_cast<int64_t>(rewrite.made_nodes.size()) - made_before});
    }
    if (!rewrite.refused.empty()) break;
  }
  return rewrite;
}

}  // namespace footprint::ort
