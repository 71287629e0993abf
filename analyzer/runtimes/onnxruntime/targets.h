// The targets of onnxruntime-cpu: each an ordered table of passes (pass.h)
// and the facts of its kernels, read top to bottom like ORT's own optimizer
// levels (core/optimizer/graph_transformer_utils.cc registers a level's
// transformers by what the CPU has; targets.cc does the same per row).
//
// Usage:
//   const ort::Target& target = ort::CpuTarget(ort::CpuIsa::kAvx512);  // "cpu:avx512"
//   GraphRewrite rewrite = ort::RunPasses(target, inputs, graph);       // every row, in order
//
// The orchestrator runs a table and nothing else: a row runs when its target
// registers it and its condition on the context holds; a pass that refuses
// the model (GraphRewrite::refused) ends the table.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TARGETS_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TARGETS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/pass.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// Whether a target registers a pass (ORT's GenerateTransformers: by the
// CPU's NCHWc block, by QDQIsInt8Allowed).
struct Registration {
  bool (*holds)(const TargetFacts& target);
  absl::string_view says;  // As the tables print it ("where MLAS has an NCHWc block").
};

// Whether a registered pass runs, given what the rows before it told the
// context.
struct Condition {
  bool (*holds)(const PassContext& context);
  absl::string_view says;  // As the tables print it.
};

// One row of a target's table.
struct PassRow {
  const Pass* pass = nullptr;
  const Registration* registered = nullptr;  // nullptr: every target registers it.
  const Condition* runs = nullptr;           // nullptr: it always runs.
};

// A target: the facts of its kernels and its table.
struct Target {
  absl::string_view name;         // "cpu:avx512", as reports and the table's golden file name it.
  TargetFacts facts;              // Its ISA, NCHWc block, int8 QDQ.
  absl::Span<const PassRow> rows;  // In ORT's order.
};

// The CPU provider's target on `isa`.
const Target& CpuTarget(CpuIsa isa);

// Every target, in the order --help lists their ISAs.
std::vector<const Target*> AllTargets();

// What one row did (testdata/rewrites' golden files print it).
struct PassRecord {
  const Pass* pass = nullptr;
  PassChange change;          // What the pass says it changed.
  int64_t nodes_before = 0;   // graph.nodes before it ran.
  int64_t nodes_after = 0;    // ... and after.
  int64_t values_added = 0;   // Values it added to the graph.
  int64_t nodes_made = 0;     // Node protos it made (new nodes, or nodes run as another op).
};

// Runs `target`'s rows on `graph` in order and returns what they made of it.
// With `trace`, one record per row that ran.
GraphRewrite RunPasses(const Target& target, const RewriteInputs& inputs, IrGraph& graph,
                       std::vector<PassRecord>* trace = nullptr);

// The rows `target` registers, in order (the passes its table runs when
// every condition holds).
std::vector<const PassRow*> RegisteredRows(const Target& target);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_TARGETS_H_
