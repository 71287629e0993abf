// The engine's walk of one graph: its initializers and inputs, then its nodes
// in order, each to the shape function of its op (or ONNX's), merged with
// what ONNX's whole-model pass declares.
#include <forward_list>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/engine/engine.h"
#include "analyzer/shapes/engine/proto_values.h"
#include "analyzer/shapes/op_context.h"

namespace footprint::symbolic {
namespace {

constexpr int kMaxDepth = 64;

// True when `graph` or a body in it has an If node.
bool HasIf(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "If") return true;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g() && HasIf(attribute.g())) return true;
    }
  }
  return false;
}

}  // namespace

// "float32 [batch,3] ints=[..]" for FOOTPRINT_SHAPES_TRACE.
std::string Describe(const SymValue& v) {
  std::string out = absl::StrCat("kind=", static_cast<int>(v.kind), " type=", v.elem_type, " shape=");
  if (v.shape.has_value()) {
    absl::StrAppend(&out, "[", absl::StrJoin(*v.shape, ",", [](std::string* o, const Expr& e) { o->append(e.ToString()); }), "]");
  } else {
    absl::StrAppend(&out, "?");
  }
  if (v.ints.has_value() && v.ints->size() <= 16) {
    absl::StrAppend(&out, " ints=[", absl::StrJoin(*v.ints, ",", [](std::string* o, const Expr& e) { o->append(e.ToString()); }), "]");
  }
  if (!v.reason.empty()) absl::StrAppend(&out, " (", v.reason, ")");
  return out;
}

void Engine::SetGraphInputs(const onnx::GraphProto& graph, const Scope* outer,
                            const std::vector<SymValue>* input_values,
                            const absl::flat_hash_set<std::string>& initializers, GraphShapes& table) {
  for (int i = 0; i < graph.input_size(); ++i) {
    const onnx::ValueInfoProto& input = graph.input(i);
    if (input_values != nullptr && i < static_cast<int>(input_values->size())) {
      SymValue v = (*input_values)[i];
      // The body's own declaration can only add what the outer node does not say.
      MergeOnnxType(input.has_type() ? &input.type() : nullptr, v);
      table.Set(input.name(), std::move(v));
      continue;
    }
    if (initializers.contains(input.name())) continue;  // An input with a default value.
    if (auto given = input_values_.find(input.name()); outer == nullptr && given != input_values_.end()) {
      table.Set(input.name(), given->second);  // --input-value: known like a Constant's.
      continue;
    }
    SymValue v = FromTypeProto(input.has_type() ? &input.type() : nullptr);
    if (v.shape.has_value() && outer == nullptr) {
      // An unnamed dim of a main-graph input gets a name of its own, so that
      // the figures can still be formulas.
      for (size_t d = 0; d < v.shape->size(); ++d) {
        if (!(*v.shape)[d].known()) {
          (*v.shape)[d] = MadeUpSymbol(absl::StrCat(input.name(), "_dim", d));
        }
      }
    }
    table.Set(input.name(), std::move(v));
  }
}

void Engine::IndexProducersAndReaders(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) producers_[output] = &node;
    for (int i = 0; i < node.input_size(); ++i) {
      if (!node.input(i).empty()) readers_[node.input(i)].push_back({&node, i});
    }
  }
}

void Engine::FinishOutput(const onnx::NodeProto& node, int o, const onnx::GraphProto& graph, const Scope& scope,
                          const onnx::TypeProto* declared, SymValue& v) {
  if (declared != nullptr) MergeOnnxType(declared, v, &made_up_symbols_);
  if (v.kind == SymValue::Kind::kTensor && v.HasConcreteShape() && v.elem_type != 0) {
    v.reason.clear();  // Sized after all (ONNX's pass or the model's declarations filled it in).
  }
  if (!v.HasFullShape() && v.reason.empty()) {
    for (const std::string& input : node.input()) {
      const SymValue* in = input.empty() ? nullptr : scope.Find(input);
      if (in != nullptr && in->kind != SymValue::Kind::kSequence && !in->HasFullShape()) {
        v.reason = absl::StrCat("depends on '", input, "', whose shape is not known");
        break;
      }
    }
  }
  if (auto given = tensor_shapes_.find(node.output(o)); given != tensor_shapes_.end()) {
    used_tensor_shapes_.insert(given->first);
    v.kind = SymValue::Kind::kTensor;
    v.shape = std::vector<Expr>(given->second.begin(), given->second.end());
    v.ints.reset();
    v.floats.reset();
    v.reason = v.elem_type == 0 ? "element type unknown (the op has no shape function)" : "";
  } else if (!v.HasFullShape() && !v.reason.empty() && v.reason.find("--tensor-shape") == std::string::npos &&
             (v.reason.find("values not known before running") != std::string::npos ||
              v.reason.rfind("Range bounds not known", 0) == 0)) {
    // Which value the op needs, and the first unknown one upstream: what to bind.
    const std::string chain = UnknownValueChain(node, graph, scope);
    absl::StrAppend(&v.reason, chain, chain.empty() ? " (give" : " (or give", " it with --tensor-shape ",
                    node.output(o), "=DIMS)");
  } else if (!v.HasFullShape() && !v.reason.empty() && v.reason.find("--tensor-shape") == std::string::npos &&
             (v.reason.find("data-dependent") != std::string::npos ||
              v.reason.find("before running") != std::string::npos ||
              v.reason.find("no shape function") != std::string::npos)) {
    absl::StrAppend(&v.reason, " (give it with --tensor-shape ", node.output(o), "=DIMS)");
  }
  if (trace_) std::cerr << node.op_type() << " " << node.name() << " -> " << node.output(o) << " " << Describe(v) << "\n";
}

void Engine::InferGraph(const onnx::GraphProto& graph, const Scope* outer, const std::vector<SymValue>* input_values,
                        int depth) {
  GraphShapes& table = tables_.graphs[&graph];
  table.values.clear();
  table.index.clear();
  tables_.contradictions.erase(&graph);  // A Loop body inferred again: the last pass counts.
  Scope scope{.table = &table, .outer = outer};
  if (depth > kMaxDepth) return;
  size_t value_count = graph.initializer_size() + graph.input_size();
  for (const onnx::NodeProto& node : graph.node()) value_count += node.output_size();
  table.values.reserve(value_count);
  table.index.reserve(value_count);
  for (const onnx::TensorProto& tensor : graph.initializer()) table.Set(tensor.name(), FromTensorProto(tensor));
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& tensor : graph.initializer()) initializers.insert(tensor.name());
  SetGraphInputs(graph, outer, input_values, initializers, table);
  absl::flat_hash_map<std::string, const onnx::TypeProto*> onnx_types;
  for (const auto& info : graph.value_info()) onnx_types[info.name()] = &info.type();
  for (const auto& info : graph.output()) {
    if (info.has_type()) onnx_types[info.name()] = &info.type();
  }

  // File order, deferring a node whose inputs are not defined yet (files are
  // nearly always in order, so this stays linear).
  std::vector<const onnx::NodeProto*> pending;
  for (const onnx::NodeProto& node : graph.node()) pending.push_back(&node);
  if (outer == nullptr) {
    model_has_if_ = HasIf(graph);
    for (const onnx::ValueInfoProto& input : graph.input()) {
      if (!initializers.contains(input.name())) main_inputs_.insert(input.name());
    }
  }
  // Only models with an If ask which inputs a value comes from, and what
  // reads an undecided If's outputs.
  if (model_has_if_) IndexProducersAndReaders(graph);
  std::vector<SymValue> outputs;
  bool progress = true;
  while (!pending.empty()) {
    std::vector<const onnx::NodeProto*> later;
    for (const onnx::NodeProto* node : pending) {
      bool ready = true;
      if (progress) {
        for (const std::string& input : node->input()) {
          if (!input.empty() && scope.Find(input) == nullptr) {
            ready = false;
            break;
          }
        }
      }
      if (!ready) {
        later.push_back(node);
        continue;
      }
      // Shape functions may write out[0] unchecked: a (damaged) node that
      // lists no output has nothing to infer.
      if (node->output_size() == 0) continue;
      outputs.assign(node->output_size(), SymValue{});
      InferNode(*node, scope, depth, outputs);
      if (undecided_branches_ > 0) BoundSliceByExtent(*node, scope, outputs);
      if (undecided_branches_ > 0) BroadcastBounds(*node, scope, outputs);
      // What follows from an undecided If's bound (its larger branch) is a bound too, all the way down.
      bool follows_bound = false;
      bool follows_extent = false;  // Likewise for a Slice sized at its input's extent.
      for (const std::string& input : node->input()) {
        const SymValue* in = input.empty() ? nullptr : scope.Find(input);
        follows_bound = follows_bound || (in != nullptr && in->max_over_branches);
        follows_extent = follows_extent || (in != nullptr && in->extent_bound);
      }
      for (int o = 0; o < node->output_size(); ++o) {
        if (node->output(o).empty()) continue;
        SymValue& v = outputs[o];
        v.max_over_branches = v.max_over_branches || follows_bound;
        v.extent_bound = v.extent_bound || follows_extent;
        // Two dims of bounds may clash where the real ones agree: only exact shapes contradict.
        v.contradiction = v.contradiction && !follows_bound && !follows_extent;
        if (v.contradiction) RecordContradiction(graph, *node, v.reason);
        auto type = onnx_types.find(node->output(o));
        FinishOutput(*node, o, graph, scope, type != onnx_types.end() ? type->second : nullptr, v);
        table.Set(node->output(o), std::move(v));
      }
    }
    progress = later.size() < pending.size();
    pending.swap(later);
  }
}

void Engine::RecordContradiction(const onnx::GraphProto& graph, const onnx::NodeProto& node,
                                 const std::string& reason) {
  if (tables_.contradictions.contains(&graph)) return;
  // An If's outputs contradict when the branch it takes cannot run: that branch's node is the one named.
  if (IsDefaultDomain(node) && node.op_type() == "If") {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      auto inner = attribute.has_g() ? tables_.contradictions.find(&attribute.g()) : tables_.contradictions.end();
      if (inner == tables_.contradictions.end()) continue;
      Contradiction taken = inner->second;  // Copied before the map may rehash.
      tables_.contradictions.emplace(&graph, std::move(taken));
      return;
    }
  }
  tables_.contradictions.emplace(
      &graph, Contradiction{.node = &node,
                            .line = absl::StrCat(node.op_type(), " '", node.name().empty() ? node.output(0) : node.name(),
                                                 "': ", reason)});
}

namespace {

// True for a value the op reads as numbers (shapes, pads, indices, scales)
// that the engine does not know.
bool UnknownNumbers(const SymValue* v) {
  return v != nullptr && v->kind == SymValue::Kind::kTensor && (IsIntegerType(v->elem_type) || v->elem_type == onnx::TensorProto::BOOL || IsFloatType(v->elem_type)) &&
         !v->ints.has_value() && !v->floats.has_value();
}

}  // namespace

std::string Engine::UnknownValueChain(const onnx::NodeProto& node, const onnx::GraphProto& graph, const Scope& scope) {
  auto& producers = graph_producers_[&graph];
  if (producers.empty()) {
    for (const onnx::NodeProto& n : graph.node()) {
      for (const std::string& output : n.output()) producers[output] = &n;
    }
  }
  // The needed value: the first input after the data input (Range and
  // ConstantOfShape have none) whose numbers are unknown.
  std::string needed;
  const int first_value = node.op_type() == "Range" || node.op_type() == "ConstantOfShape" ? 0 : 1;
  for (int i = first_value; i < node.input_size() && needed.empty(); ++i) {
    if (!node.input(i).empty() && UnknownNumbers(scope.Find(node.input(i)))) needed = node.input(i);
  }
  if (needed.empty()) return "";
  // Upstream while some input's numbers are unknown too; bounded, as a chain is a few ops long.
  std::string first = needed;
  const onnx::NodeProto* writer = nullptr;
  for (int hops = 0; hops < 256; ++hops) {
    auto it = producers.find(first);
    if (it == producers.end()) {
      writer = nullptr;
      break;
    }
    writer = it->second;
    if (writer->op_type() == "Shape" || writer->op_type() == "Size") break;  // Its input's shape is what is unknown.
    std::string next;
    for (const std::string& input : writer->input()) {
      if (!input.empty() && UnknownNumbers(scope.Find(input))) {
        next = input;
        break;
      }
    }
    if (next.empty()) break;
    first = next;
  }
  std::string where;
  if (writer == nullptr && main_inputs_.contains(first)) {
    where = absl::StrCat(", a graph input: bind it with --input-value ", first, "=...");
  } else if (writer == nullptr) {
    where = ", from outside this graph";
  } else if (writer->op_type() == "Shape" || writer->op_type() == "Size") {
    where = absl::StrCat(", the ", writer->op_type() == "Shape" ? "shape" : "size", " of '",
                         writer->input_size() > 0 ? writer->input(0) : "", "'");
  } else {
    where = absl::StrCat(", written by ", writer->op_type(), writer->name().empty() ? "" : absl::StrCat(" '", writer->name(), "'"));
  }
  return absl::StrCat("; ", node.op_type(), " needs the value of '", needed, "'",
                      first == needed ? absl::StrCat(", not known", where)
                                      : absl::StrCat(", computed from '", first, "'", where));
}

void Engine::BoundSliceByExtent(const onnx::NodeProto& node, const Scope& scope,
                                std::vector<SymValue>& outputs) const {
  const bool default_domain = IsDefaultDomain(node);
  if (!default_domain || node.op_type() != "Slice" || node.input_size() == 0 || outputs.empty()) return;
  const SymValue* input = scope.Find(node.input(0));
  SymValue& sliced = outputs[0];
  if (input == nullptr || !input->shape.has_value() || sliced.kind != SymValue::Kind::kTensor ||
      !sliced.shape.has_value() || sliced.shape->size() != input->shape->size()) {
    return;
  }
  bool bounded = false;
  for (size_t a = 0; a < sliced.shape->size(); ++a) {
    const Expr& extent = (*input->shape)[a];
    if ((*sliced.shape)[a].known() || !extent.known()) continue;
    (*sliced.shape)[a] = extent;  // A Slice never yields more than its input's extent on an axis.
    bounded = true;
  }
  if (!bounded) return;
  sliced.extent_bound = true;
  if (sliced.HasFullShape()) sliced.reason.clear();
}

void Engine::BroadcastBounds(const onnx::NodeProto& node, const Scope& scope, std::vector<SymValue>& outputs) const {
  static const auto* const kBroadcasting = new absl::flat_hash_set<std::string>{
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "And", "Or", "Equal", "Greater", "Less"};
  const bool default_domain = IsDefaultDomain(node);
  if (!default_domain || !kBroadcasting->contains(node.op_type()) || outputs.empty()) return;
  SymValue& result = outputs[0];
  if (result.kind != SymValue::Kind::kTensor || !result.shape.has_value() || result.HasFullShape()) return;
  std::vector<const std::vector<Expr>*> shapes;
  bool reads_bound = false;
  for (const std::string& input : node.input()) {
    const SymValue* in = input.empty() ? nullptr : scope.Find(input);
    if (in == nullptr || !in->shape.has_value()) return;
    shapes.push_back(&*in->shape);
    reads_bound = reads_bound || in->extent_bound || in->max_over_branches;
  }
  if (!reads_bound) return;
  const size_t rank = result.shape->size();
  for (size_t i = 0; i < rank; ++i) {
    if ((*result.shape)[i].known()) continue;
    int64_t largest = 1;  // Dims of bounds that disagree: the real ones agree and are at most the larger.
    bool constant = true;
    for (const std::vector<Expr>* shape : shapes) {
      if (i + shape->size() < rank) continue;
      const std::optional<int64_t> d = (*shape)[i + shape->size() - rank].AsConstant();
      constant = constant && d.has_value();
      if (d.has_value()) largest = std::max(largest, *d);
    }
    if (constant) (*result.shape)[i] = Expr(largest);
  }
  if (result.HasFullShape()) result.reason.clear();
}

void Engine::InferNode(const onnx::NodeProto& node, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const std::string domain = OpsetKey(node.domain());
  auto opset = opsets_.find(domain);
  OpContext ctx{.node = node, .opset = opset == opsets_.end() ? 0 : opset->second, .engine = this, .scope = &scope};
  std::forward_list<SymValue> missing;  // Keeps the "undefined input" values alive (and in place).
  for (const std::string& input : node.input()) {
    if (input.empty()) {
      ctx.inputs.push_back(nullptr);
      continue;
    }
    const SymValue* v = scope.Find(input);
    if (v == nullptr) {
      missing.push_front(UnknownValue(absl::StrCat("input '", input, "' is not defined")));
      v = &missing.front();
    }
    ctx.inputs.push_back(v);
  }
  const bool default_domain = IsDefaultDomain(node.domain());
  if (default_domain && node.op_type() == "Constant") {
    outputs[0] = FromConstantNode(node);
    return;
  }
  if (default_domain && node.op_type() == "If" && InferIf(ctx, scope, depth, outputs)) return;
  if (default_domain && node.op_type() == "Loop" && InferLoop(ctx, scope, depth, outputs)) return;
  if (default_domain && node.op_type() == "Scan" && InferScan(ctx, scope, depth, outputs)) return;
  const ShapeFunction* function = nullptr;
  if (default_domain) {
    function = FindStandardShapeFunction(node.op_type());
  } else if (node.domain() == "com.microsoft") {
    function = FindContribShapeFunction(node.op_type());
  }
  if (function != nullptr && (*function)(ctx, outputs)) return;
  if (InferWithOnnx(ctx, outputs)) {
    ++tables_.onnx_fallback_nodes;
    return;
  }
  if (node.domain() == "ai.onnx.ml" || node.domain() == "com.microsoft.extensions") {
    // After ONNX's: it has shape functions for some ml ops, not these.
    function = FindMlShapeFunction(node.op_type());
    if (function != nullptr && (*function)(ctx, outputs)) return;
  }
  const std::string op_name = default_domain ? node.op_type() : absl::StrCat(node.domain(), ".", node.op_type());
  bool any_unknown = false;
  for (SymValue& out : outputs) {
    if (out.kind == SymValue::Kind::kUnknown || !out.HasFullShape()) {
      any_unknown = true;
      if (out.reason.empty()) {
        out.reason = function != nullptr || default_domain
                         ? absl::StrCat("op ", op_name, ": output shape depends on values not known before running")
                         : absl::StrCat("no shape function for op ", op_name);
      }
    }
  }
  if (any_unknown && function == nullptr && !default_domain) ++unknown_ops_[op_name];
}

}  // namespace footprint::symbolic
