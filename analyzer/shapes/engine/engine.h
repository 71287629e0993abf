// Internal to the shape engine: the Engine that walks a model's graphs and
// bodies (engine/graph.cc), sends each node to our shape function or ONNX's
// (engine/onnx_fallback.cc) and infers If/Loop/Scan bodies
// (engine/control_flow.cc); and the Scope a body sees its outer values in.
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_ENGINE_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_ENGINE_H_

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/shape_engine.h"
#include "onnx/onnx_pb.h"

namespace footprint::symbolic {

// The values a node sees: its graph's, then those of the graphs around it.
struct Scope {
  GraphShapes* table = nullptr;
  const Scope* outer = nullptr;

  const SymValue* Find(const std::string& name) const {
    for (const Scope* s = this; s != nullptr; s = s->outer) {
      if (const SymValue* value = s->table->Find(name)) return value;
    }
    return nullptr;
  }
};

// Infers a model's graphs and bodies in one pass, filling `tables`.
class Engine {
 public:
  Engine(const onnx::ModelProto& model, const TensorShapes& tensor_shapes, const SymbolValues& symbol_values,
         bool onnx_fallback, ShapeTables& tables, const InputValues& input_values)
      : onnx_fallback_(onnx_fallback),
        tables_(tables),
        tensor_shapes_(tensor_shapes),
        symbol_values_(symbol_values),
        input_values_(input_values) {
    for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
      opsets_[OpsetKey(opset.domain())] = static_cast<int>(opset.version());
    }
  }

  // Infers `graph`; `input_values` (for bodies) overrides the types of its inputs.
  void InferGraph(const onnx::GraphProto& graph, const Scope* outer, const std::vector<SymValue>* input_values,
                  int depth);

  // Infers a body again, returning its output values.
  std::vector<SymValue> InferBody(const onnx::GraphProto& body, const Scope* outer,
                                  const std::vector<SymValue>& inputs, int depth) {
    InferGraph(body, outer, &inputs, depth);
    std::vector<SymValue> outputs;
    const GraphShapes& table = tables_.graphs[&body];
    for (const auto& output : body.output()) {
      const SymValue* value = table.Find(output.name());
      outputs.push_back(value == nullptr ? UnknownValue("body output not produced") : *value);
    }
    return outputs;
  }

  void Finish() {
    if (!unknown_ops_.empty()) {
      std::vector<std::string> names;
      for (const auto& [op, count] : unknown_ops_) names.push_back(absl::StrCat(op, " (", count, ")"));
      std::sort(names.begin(), names.end());
      tables_.warnings.push_back(absl::StrCat("no shape function for: ", absl::StrJoin(names, ", ")));
    }
  }

 private:
  // The graph's inputs in `table`: a body's from the node that runs it,
  // the main graph's from --input-value or their declared types (unnamed
  // dims get a name of their own).
  void SetGraphInputs(const onnx::GraphProto& graph, const Scope* outer, const std::vector<SymValue>* input_values,
                      const absl::flat_hash_set<std::string>& initializers, GraphShapes& table);
  // producers_ and readers_ for the graph's nodes.
  void IndexProducersAndReaders(const onnx::GraphProto& graph);
  // Output `o` of `node` once inferred: the model's declared type merged in,
  // --tensor-shape applied, and the reason of an unsized output saying what
  // to bind.
  void FinishOutput(const onnx::NodeProto& node, int o, const onnx::GraphProto& graph, const Scope& scope,
                    const onnx::TypeProto* declared, SymValue& v);
  void InferNode(const onnx::NodeProto& node, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  // Inside an undecided If's branch: a Slice whose ends are not known keeps
  // its input's extent on the axes left unknown (extent_bound).
  void BoundSliceByExtent(const onnx::NodeProto& node, const Scope& scope, std::vector<SymValue>& outputs) const;
  // Inside an undecided If's branch: a broadcast of bounds whose constant
  // dims disagree (a bound against an exact dim) takes the larger dim.
  void BroadcastBounds(const onnx::NodeProto& node, const Scope& scope, std::vector<SymValue>& outputs) const;
  bool InferIf(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  // The first node of `graph` whose output contradicts (tables_.contradictions).
  void RecordContradiction(const onnx::GraphProto& graph, const onnx::NodeProto& node, const std::string& reason);
  bool InferLoop(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferScan(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs);
  bool InferWithOnnx(const OpContext& ctx, std::vector<SymValue>& outputs);
  // The bindings that would make `value` known: --input-value for main-graph
  // inputs it is computed from, --dim (or --input-shape) for those whose
  // shape it reads.
  std::vector<std::string> DecidingBindings(const std::string& value, const Scope& scope) const;
  void RecordIf(const onnx::NodeProto& node, IfDecision decision);
  // An undecided If whose branches' outputs differ: true to take the then
  // branch's values where both are sized and equally large (or their order
  // depends on unbound dims). The branch with more bytes over those outputs,
  // then larger numbers (trip counts, Reshape targets); once per If node.
  bool ChooseBoundBranch(const onnx::NodeProto& node, const std::vector<SymValue>& then_out,
                         const std::vector<SymValue>& else_out, size_t paired);
  // For a node that needs a value not known: "; Pad needs the value of 'pads',
  // computed from 'sr', a graph input: bind it with --input-value sr=...".
  std::string UnknownValueChain(const onnx::NodeProto& node, const onnx::GraphProto& graph, const Scope& scope);

  bool onnx_fallback_;  // Ask ONNX's per-node shape functions for ops we have none for.
  ShapeTables& tables_;
  const TensorShapes& tensor_shapes_;
  const SymbolValues& symbol_values_;
  const InputValues& input_values_;  // --input-value: main-graph inputs with known values.
  bool model_has_if_ = false;                                           // Set by the main graph's InferGraph.
  absl::flat_hash_map<std::string, const onnx::NodeProto*> producers_;  // Node outputs, when model_has_if_.
  // Each value's readers (node, input index), when model_has_if_.
  absl::flat_hash_map<std::string, std::vector<std::pair<const onnx::NodeProto*, int>>> readers_;
  // Whether every reader of `value` makes larger tensors from larger numbers
  // in it (a Loop's trip count, ConstantOfShape's, Expand's, Tile's and
  // Resize's sizes), so that the larger branch's numbers bound what follows.
  bool LargerValuesBoundTheReaders(const std::string& value) const;
  absl::flat_hash_set<std::string> main_inputs_;                        // The main graph's inputs (no initializers).
  absl::flat_hash_map<const onnx::NodeProto*, size_t> if_index_;        // Into tables_.if_decisions.
  absl::flat_hash_map<const onnx::NodeProto*, bool> bound_branches_;    // ChooseBoundBranch's choices (true: then).
  int undecided_branches_ = 0;  // Depth of undecided Ifs' branches being inferred: their Slices may take bounds.
  // Per graph, its node outputs' writers: built at the first value a node needs and lacks.
  absl::flat_hash_map<const onnx::GraphProto*, absl::flat_hash_map<std::string, const onnx::NodeProto*>>
      graph_producers_;
 public:
  std::set<std::string> used_tensor_shapes_;  // Names of tensor_shapes_ some node writes.
  std::set<std::string> used_symbol_values_;  // Names of symbol_values_ the engine's own symbols have.
  // A symbol the engine makes up, or its value when the user bound it.
  std::set<std::string> made_up_symbols_;  // Symbols no input names: unnamed dims, trip counts.
  Expr MadeUpSymbol(const std::string& name) {
    auto it = symbol_values_.find(name);
    made_up_symbols_.insert(name);
    if (it == symbol_values_.end()) return Expr::Symbol(name);
    used_symbol_values_.insert(name);
    return Expr(it->second);
  }
 private:
  const bool trace_ = std::getenv("FOOTPRINT_SHAPES_TRACE") != nullptr;  // Each output to stderr.
  std::map<std::string, int> opsets_;
  std::map<std::string, int> unknown_ops_;
};

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_ENGINE_ENGINE_H_
