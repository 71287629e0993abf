// Control flow: If, Loop and Scan, their bodies inferred recursively with the
// outer graph's values in scope.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/shapes/engine/engine.h"
#include "analyzer/shapes/op_context.h"

namespace footprint::symbolic {
namespace {

const onnx::GraphProto* Body(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* body = FindAttribute(node, name);
  return body != nullptr && body->has_g() ? &body->g() : nullptr;
}

// The value either branch may produce when the condition is not known:
// equal shapes stay; otherwise the branch with more elements sizes it (an
// If's output is one branch's, so the larger is an upper bound that sizes
// the arena safely), or, with symbolic dims, each dim's larger.
SymValue JoinBranches(const SymValue& a, const SymValue& b) {
  if (a.kind != b.kind || a.kind == SymValue::Kind::kUnknown) {
    return UnknownValue("If branches disagree on the output type");
  }
  SymValue out;
  out.kind = a.kind;
  out.elem_type = a.elem_type != 0 ? a.elem_type : b.elem_type;
  if (a.kind == SymValue::Kind::kSequence) {
    out.shape = a.shape;
    out.reason = "sequence from an If";
    return out;
  }
  if (!a.shape.has_value() || !b.shape.has_value()) {
    out.reason = "If branch output of unknown rank";
    return out;
  }
  if (*a.shape == *b.shape) {
    out.shape = a.shape;
    if (a.ints.has_value() && b.ints.has_value() && *a.ints == *b.ints) out.ints = a.ints;
    out.reason = !a.reason.empty() ? a.reason : b.reason;
    out.max_over_branches = a.max_over_branches || b.max_over_branches;
    out.extent_bound = a.extent_bound || b.extent_bound;
    return out;
  }
  out.max_over_branches = true;
  out.extent_bound = a.extent_bound || b.extent_bound;
  std::optional<int64_t> count_a = ElementCount(*a.shape).AsConstant();
  std::optional<int64_t> count_b = ElementCount(*b.shape).AsConstant();
  if (count_a.has_value() && count_b.has_value()) {
    out.shape = *count_a >= *count_b ? a.shape : b.shape;
    return out;
  }
  if (a.shape->size() != b.shape->size()) {
    out.reason = "If branches give different ranks";
    return out;
  }
  out.shape.emplace();
  for (size_t i = 0; i < a.shape->size(); ++i) {
    const Expr& x = (*a.shape)[i];
    const Expr& y = (*b.shape)[i];
    out.shape->push_back(x == y ? x : Expr::Max(x, y));
  }
  return out;
}

// A value either branch gives alike as far as sizes go: same kind, shape and
// integer values (float values, data rather than sizes, are not carried past an If).
bool SameOutput(const SymValue& a, const SymValue& b) {
  if (a.kind == SymValue::Kind::kSequence || b.kind == SymValue::Kind::kSequence) {
    // Sequences: the same known elements, else sized by the larger below.
    if (a.kind != b.kind || !a.elements_known || !b.elements_known || a.elements.size() != b.elements.size()) {
      return false;
    }
    for (size_t k = 0; k < a.elements.size(); ++k) {
      if (!SameOutput(a.elements[k], b.elements[k]) || a.elements[k].elem_type != b.elements[k].elem_type) return false;
    }
    return true;
  }
  return a.kind == b.kind && a.kind != SymValue::Kind::kUnknown && a.shape == b.shape && a.ints == b.ints;
}

// A tensor whose byte count is known, as a number or a formula, or a
// sequence whose elements are all known (its bytes are theirs).
bool Sized(const SymValue& v) {
  const bool sequence = v.kind == SymValue::Kind::kSequence && v.elements_known;
  return (v.kind == SymValue::Kind::kTensor || sequence) && BytesOf(v).known();
}

// The sum of a value's known numbers (0 when it has none): what decides
// between branches whose outputs have the same byte count but different
// values, such as a trip count or a Reshape target (the larger numbers give
// the larger tensors downstream).
double ValueSum(const SymValue& v) {
  double sum = 0;
  if (v.ints.has_value()) {
    for (const Expr& e : *v.ints) {
      if (std::optional<int64_t> c = e.AsConstant()) sum += static_cast<double>(*c);
    }
  }
  if (v.floats.has_value()) {
    for (double f : *v.floats) sum += f;
  }
  return sum;
}

// 1 when a >= b for every binding of their symbols, -1 when a <= b, 0 when
// that depends on the binding (or either is unknown).
int CompareBytes(const Expr& a, const Expr& b) {
  if (!a.known() || !b.known()) return 0;
  const Expr difference = a - b;
  if (difference.ProvablyNonNegative()) return 1;
  if ((-difference).ProvablyNonNegative()) return -1;
  return 0;
}

SymValue ScalarOf(int32_t elem_type) { return TensorOf(elem_type, {}); }

// The If's condition where it is known; a condition computed from a Slice's
// extent bound is a bound's, not the value's: undecided.
std::optional<bool> KnownCondition(const SymValue* cond) {
  if (cond == nullptr || cond->extent_bound) return std::nullopt;
  if (cond->ints.has_value() && cond->ints->size() == 1) {
    if (std::optional<int64_t> c = (*cond->ints)[0].AsConstant()) return *c != 0;
  } else if (cond->floats.has_value() && cond->floats->size() == 1) {
    return (*cond->floats)[0] != 0;
  }
  return std::nullopt;
}

// One output of an undecided If, from its then (`a`) and else (`b`) values.
struct UndecidedOutput {
  SymValue value;
  bool one_branch = false;  // The value is one branch's (the larger, or the only sized one).
};

UndecidedOutput JoinUndecided(const SymValue& a, const SymValue& b, bool take_then, const std::string& output,
                              std::vector<std::string>& unsized_notes) {
  if (SameOutput(a, b)) return {.value = a.kind == SymValue::Kind::kSequence ? a : JoinBranches(a, b)};
  const bool sized_a = Sized(a);
  const bool sized_b = Sized(b);
  if (!sized_a && !sized_b) return {.value = JoinBranches(a, b)};
  if (sized_a != sized_b) {
    // The sized branch bounds the output alone: the other's size is not known.
    const SymValue& unsized = sized_a ? b : a;
    unsized_notes.push_back(absl::StrCat("output '", output, "' is the ", sized_a ? "then" : "else",
                                         " branch's alone (the ", sized_a ? "else" : "then",
                                         " branch's has no known size",
                                         unsized.reason.empty() ? "" : absl::StrCat(": ", unsized.reason), ")"));
    return {.value = sized_a ? a : b, .one_branch = true};
  }
  // The larger byte count; equal counts (different shapes or values) or
  // counts whose order depends on unbound dims: the If's one choice.
  const int order = BytesOf(a) == BytesOf(b) ? 0 : CompareBytes(BytesOf(a), BytesOf(b));
  const bool comparable = order != 0 || BytesOf(a) == BytesOf(b);
  if (comparable) return {.value = order > 0 || (order == 0 && take_then) ? a : b, .one_branch = true};
  if (a.kind == SymValue::Kind::kTensor && b.kind == SymValue::Kind::kTensor && a.shape->size() == b.shape->size()) {
    return {.value = JoinBranches(a, b), .one_branch = true};  // Each dim's larger: above both whatever the binding.
  }
  UndecidedOutput unknown{
      .value = UnknownValue(
          "If branches give different ranks, and which has more bytes depends on the unbound dims (bind them)"),
      .one_branch = true};
  unknown.value.elem_type = a.elem_type;
  return unknown;
}

// The outputs of an If whose branch cannot run: unknown, and the line of
// the node that cannot run (the graph around it records it).
void MarkCannotRun(const std::string& why, std::vector<SymValue>& outputs) {
  for (SymValue& out : outputs) {
    out = UnknownValue(why);
    out.contradiction = true;
  }
}

}  // namespace

bool Engine::InferIf(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* then_branch = Body(ctx.node, "then_branch");
  const onnx::GraphProto* else_branch = Body(ctx.node, "else_branch");
  if (then_branch == nullptr || else_branch == nullptr) return false;
  const SymValue* cond = ctx.Input(0);
  const std::optional<bool> condition = KnownCondition(cond);
  // Both branches are inferred whatever the condition: the memory stage
  // plans each (the spec holds the larger branch's peak at the If's step).
  if (!condition.has_value()) ++undecided_branches_;
  std::vector<SymValue> then_out = InferBody(*then_branch, &scope, {}, depth + 1);
  std::vector<SymValue> else_out = InferBody(*else_branch, &scope, {}, depth + 1);
  if (!condition.has_value()) --undecided_branches_;
  IfDecision decision{.node = ctx.node.name().empty() && ctx.node.output_size() > 0 ? ctx.node.output(0)
                                                                                    : ctx.node.name()};
  const size_t paired = std::min({outputs.size(), then_out.size(), else_out.size()});
  auto then_cannot = tables_.contradictions.find(then_branch);
  auto else_cannot = tables_.contradictions.find(else_branch);
  const bool then_runs = then_cannot == tables_.contradictions.end();
  const bool else_runs = else_cannot == tables_.contradictions.end();
  std::optional<bool> taken = condition;
  if (!taken.has_value() && then_runs != else_runs) {
    // A branch that cannot run with these shapes is never taken: the If is
    // decided by the other (PyTorch's exports test a rank or a dim that
    // only one branch can serve).
    taken = then_runs;
    const std::string& why = (then_runs ? else_cannot : then_cannot)->second.line;
    decision.ruled_out = absl::StrCat(then_runs ? "else" : "then", ": ", why);
    tables_.warnings.push_back(absl::StrCat("If '", decision.node,
                                            "': its condition is not known before running, but its ",
                                            then_runs ? "else" : "then", " branch cannot run with these shapes (",
                                            why, "): only the ", then_runs ? "then" : "else", " branch is counted"));
  }
  if (taken.has_value()) {
    for (size_t o = 0; o < paired; ++o) outputs[o] = *taken ? then_out[o] : else_out[o];
    if (!(*taken ? then_runs : else_runs)) MarkCannotRun((*taken ? then_cannot : else_cannot)->second.line, outputs);
    decision.branch = *taken ? "then" : "else";
    RecordIf(ctx.node, std::move(decision));
    return true;
  }
  decision.branch = "undecided";
  if (!then_runs && !else_runs) MarkCannotRun(then_cannot->second.line, outputs);
  if (ctx.node.input_size() > 0) decision.decided_by = absl::StrJoin(DecidingBindings(ctx.node.input(0), scope), " ");
  const bool take_then = ChooseBoundBranch(ctx.node, then_out, else_out, paired);
  bool any_differs = false;
  std::vector<std::string> unsized_notes;  // Outputs bounded by one branch alone.
  for (size_t o = 0; o < paired; ++o) {
    const std::string output = o < static_cast<size_t>(ctx.node.output_size()) ? ctx.node.output(o) : "";
    UndecidedOutput joined = JoinUndecided(then_out[o], else_out[o], take_then, output, unsized_notes);
    outputs[o] = std::move(joined.value);
    if (!joined.one_branch) {
      any_differs = any_differs || outputs[o].max_over_branches;
      continue;
    }
    // The chosen branch's numbers bound what follows only where larger
    // numbers make larger tensors; elsewhere (a Slice's start, a divisor, an
    // index) they could make them smaller: not carried, so what depends on
    // them stays unsized and names the value that decides it.
    if ((outputs[o].ints.has_value() || outputs[o].floats.has_value()) &&
        o < static_cast<size_t>(ctx.node.output_size()) && !LargerValuesBoundTheReaders(ctx.node.output(o))) {
      outputs[o].ints.reset();
      outputs[o].floats.reset();
    }
    outputs[o].max_over_branches = true;
    any_differs = true;
  }
  if (any_differs) {
    decision.bound_branch = take_then ? "then" : "else";
    tables_.warnings.push_back(absl::StrCat(
        "If '", decision.node, "': its condition is not known before running; both branches analyzed, and outputs "
        "that differ are sized as the larger branch's (an upper bound)",
        decision.decided_by.empty() ? "" : absl::StrCat("; decide it with ", decision.decided_by),
        unsized_notes.empty() ? "" : absl::StrCat("; ", absl::StrJoin(unsized_notes, "; "))));
  }
  RecordIf(ctx.node, std::move(decision));
  return true;
}

bool Engine::LargerValuesBoundTheReaders(const std::string& value) const {
  auto it = readers_.find(value);
  if (it == readers_.end()) return false;  // A graph output, or read inside a body: not known.
  for (const auto& [node, input] : it->second) {
    const std::string& op = node->op_type();
    const bool sizes = (op == "Loop" && input == 0) || (op == "ConstantOfShape" && input == 0) ||
                       (op == "Expand" && input == 1) || (op == "Tile" && input == 1) ||
                       (op == "Resize" && input == 3);
    if (!sizes || !IsDefaultDomain(*node)) return false;
  }
  return true;
}

void Engine::RecordIf(const onnx::NodeProto& node, IfDecision decision) {
  decision.proto = &node;
  auto [it, inserted] = if_index_.try_emplace(&node, tables_.if_decisions.size());
  if (inserted) {
    tables_.if_decisions.push_back(std::move(decision));
  } else {
    tables_.if_decisions[it->second] = std::move(decision);  // A Loop body inferred again: the last pass counts.
  }
}

bool Engine::ChooseBoundBranch(const onnx::NodeProto& node, const std::vector<SymValue>& then_out,
                               const std::vector<SymValue>& else_out, size_t paired) {
  // One choice per If: a Loop body inferred again, or a body whose inputs
  // changed, keeps the branch first chosen.
  if (auto it = bound_branches_.find(&node); it != bound_branches_.end()) return it->second;
  Expr then_bytes = 0, else_bytes = 0;
  double then_values = 0, else_values = 0;
  for (size_t o = 0; o < paired; ++o) {
    if (SameOutput(then_out[o], else_out[o]) || !Sized(then_out[o]) || !Sized(else_out[o])) continue;
    then_bytes = then_bytes + BytesOf(then_out[o]);
    else_bytes = else_bytes + BytesOf(else_out[o]);
    then_values += ValueSum(then_out[o]);
    else_values += ValueSum(else_out[o]);
  }
  bool take_then = true;
  if (then_bytes == else_bytes) {
    take_then = then_values >= else_values;
  } else if (const int order = CompareBytes(then_bytes, else_bytes); order != 0) {
    take_then = order > 0;
  } else {
    return true;  // Depends on unbound dims: not recorded, a later pass with them known may decide.
  }
  bound_branches_.emplace(&node, take_then);
  return take_then;
}

std::vector<std::string> Engine::DecidingBindings(const std::string& value, const Scope& scope) const {
  // Backwards from the value over producers; through Shape and Size only
  // the input's shape matters. Bounded: a condition is a few ops deep.
  constexpr int kMaxVisits = 4096;
  std::set<std::string> by_value, by_shape;
  std::vector<std::pair<std::string, bool>> stack = {{value, false}};  // (name, only its shape matters)
  std::set<std::pair<std::string, bool>> seen;
  while (!stack.empty() && static_cast<int>(seen.size()) < kMaxVisits) {
    auto [name, shape_only] = stack.back();
    stack.pop_back();
    if (name.empty() || !seen.insert({name, shape_only}).second) continue;
    if (main_inputs_.contains(name)) {
      const SymValue* v = scope.Find(name);
      if (shape_only && (v == nullptr || !v->HasConcreteShape())) by_shape.insert(name);
      if (!shape_only && (v == nullptr || (!v->ints.has_value() && !v->floats.has_value()))) by_value.insert(name);
      continue;
    }
    auto producer = producers_.find(name);
    if (producer == producers_.end()) continue;
    const onnx::NodeProto& node = *producer->second;
    const bool reads_shape = node.op_type() == "Shape" || node.op_type() == "Size";
    // A shape read from a Slice depends on the values of its starts and ends.
    const bool slice = node.op_type() == "Slice";
    for (int i = 0; i < node.input_size(); ++i) {
      stack.push_back({node.input(i), (shape_only || reads_shape) && !(slice && i > 0)});
    }
  }
  std::vector<std::string> bindings;
  for (const std::string& name : by_value) bindings.push_back(absl::StrCat("--input-value ", name, "=..."));
  std::set<std::string> dims;  // The symbols in the shapes read: --dim binds them.
  for (const std::string& name : by_shape) {
    if (by_value.contains(name)) continue;
    const SymValue* v = scope.Find(name);
    std::set<std::string> symbols;
    if (v != nullptr && v->shape.has_value()) {
      for (const Expr& d : *v->shape) d.CollectSymbols(symbols);
    }
    if (symbols.empty()) {
      bindings.push_back(absl::StrCat("--input-shape ", name, "=..."));
    } else {
      dims.insert(symbols.begin(), symbols.end());
    }
  }
  for (const std::string& dim : dims) bindings.push_back(absl::StrCat("--dim ", dim, "=..."));
  return bindings;
}

// Loop(M, cond, v_initial...) -> (v_final..., scan_outputs...); body
// (iter, cond, v...) -> (cond, v..., scan_elements...).
bool Engine::InferLoop(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* body = Body(ctx.node, "body");
  if (body == nullptr) return false;
  const size_t carried = ctx.inputs.size() >= 2 ? ctx.inputs.size() - 2 : 0;
  std::vector<SymValue> body_inputs;
  body_inputs.push_back(ScalarOf(onnx::TensorProto::INT64));
  body_inputs.push_back(ScalarOf(onnx::TensorProto::BOOL));
  for (size_t i = 0; i < carried; ++i) {
    const SymValue* v = ctx.Input(2 + i);
    body_inputs.push_back(v != nullptr ? *v : UnknownValue("loop-carried value without an initial value"));
    body_inputs.back().ints.reset();  // Values change from one iteration to the next.
    body_inputs.back().floats.reset();
  }
  std::vector<SymValue> body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  // A carried value whose shape changes per iteration: infer the body again
  // with those dims unknown, so nothing inside claims the first iteration's size.
  bool changed = false;
  for (size_t i = 0; i < carried && 1 + i < body_out.size(); ++i) {
    SymValue& in = body_inputs[2 + i];
    const SymValue& out = body_out[1 + i];
    if (in.kind != SymValue::Kind::kTensor || !in.shape.has_value()) continue;
    if (!out.shape.has_value() || out.shape->size() != in.shape->size()) {
      in.shape.reset();
      in.reason = "loop-carried value changes rank across iterations";
      changed = true;
      continue;
    }
    for (size_t d = 0; d < in.shape->size(); ++d) {
      if ((*in.shape)[d] != (*out.shape)[d]) {
        (*in.shape)[d] = Expr::Unknown();
        in.reason = "loop-carried value changes shape across iterations";
        changed = true;
      }
    }
  }
  if (changed) body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  // The trip count: M's value when known; without M (a while loop) or when
  // M is computed at run time, a symbol of its own that --dim can bind.
  Expr trips = Expr::Unknown();
  if (const SymValue* m = ctx.Input(0); m != nullptr && m->ints.has_value() && m->ints->size() == 1) {
    trips = (*m->ints)[0];
  }
  const std::string loop_name =
      ctx.node.name().empty() ? (ctx.node.output_size() > 0 ? ctx.node.output(0) : "loop") : ctx.node.name();
  const std::string trip_symbol = absl::StrCat(loop_name, ".trip_count");
  const bool made_up = !trips.known();
  if (made_up) trips = MadeUpSymbol(trip_symbol);
  const std::string trip_reason =
      absl::StrCat("Loop '", loop_name, "': trip count not known before running (bind it with --dim ",
                   trip_symbol, "=N)");
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (o < carried) {
      outputs[o] = 1 + o < body_out.size() ? body_out[1 + o] : UnknownValue("Loop body has too few outputs");
      outputs[o].ints.reset();
      outputs[o].floats.reset();
      if (!outputs[o].HasFullShape() && (outputs[o].reason.empty() ||
                                             body_inputs[2 + o].reason.rfind("loop-carried value changes", 0) == 0)) {
        outputs[o].reason = "loop-carried value changes shape across iterations";
      }
      continue;
    }
    const size_t b = 1 + o;
    if (b >= body_out.size()) break;
    SymValue stacked = body_out[b];
    stacked.ints.reset();
    stacked.floats.reset();
    if (stacked.shape.has_value()) stacked.shape->insert(stacked.shape->begin(), trips);
    if (made_up && !trips.AsConstant().has_value()) stacked.reason = trip_reason;
    outputs[o] = std::move(stacked);
  }
  return true;
}

// Scan(initial states..., scan inputs...) -> (final states..., scan outputs...).
bool Engine::InferScan(const OpContext& ctx, const Scope& scope, int depth, std::vector<SymValue>& outputs) {
  const onnx::GraphProto* body = Body(ctx.node, "body");
  if (body == nullptr || ctx.opset < 9) return false;  // Scan-8 has a sequence_lens input; ONNX handles it.
  const int64_t num_scan_inputs = ctx.Int("num_scan_inputs", 0);
  const int64_t num_inputs = static_cast<int64_t>(ctx.inputs.size());
  const int64_t num_states = num_inputs - num_scan_inputs;
  if (num_scan_inputs <= 0 || num_states < 0) return false;
  const std::vector<int64_t> input_axes =
      ctx.Ints("scan_input_axes").value_or(std::vector<int64_t>(num_scan_inputs, 0));
  std::vector<SymValue> body_inputs;
  Expr length = Expr::Unknown();
  for (int64_t i = 0; i < num_states; ++i) {
    const SymValue* v = ctx.Input(i);
    body_inputs.push_back(v != nullptr ? *v : UnknownValue("missing Scan state"));
    body_inputs.back().ints.reset();
    body_inputs.back().floats.reset();
  }
  for (int64_t i = 0; i < num_scan_inputs; ++i) {
    const SymValue* v = ctx.Input(num_states + i);
    SymValue slice = v != nullptr ? *v : UnknownValue("missing Scan input");
    slice.ints.reset();
    slice.floats.reset();
    if (slice.shape.has_value()) {
      const int64_t rank = static_cast<int64_t>(slice.shape->size());
      std::optional<int64_t> axis =
          NormalizeAxis(i < static_cast<int64_t>(input_axes.size()) ? input_axes[i] : 0, rank);
      if (axis.has_value()) {
        if (!length.known()) length = (*slice.shape)[*axis];
        slice.shape->erase(slice.shape->begin() + *axis);
      } else {
        slice.shape.reset();
      }
    }
    body_inputs.push_back(std::move(slice));
  }
  std::vector<SymValue> body_out = InferBody(*body, &scope, body_inputs, depth + 1);
  const std::vector<int64_t> output_axes = ctx.Ints("scan_output_axes").value_or(std::vector<int64_t>{});
  for (size_t o = 0; o < outputs.size() && o < body_out.size(); ++o) {
    SymValue out = body_out[o];
    out.ints.reset();
    out.floats.reset();
    if (static_cast<int64_t>(o) >= num_states && out.shape.has_value()) {
      const size_t k = o - static_cast<size_t>(num_states);
      const int64_t rank = static_cast<int64_t>(out.shape->size()) + 1;
      std::optional<int64_t> axis = NormalizeAxis(k < output_axes.size() ? output_axes[k] : 0, rank);
      if (axis.has_value()) {
        out.shape->insert(out.shape->begin() + *axis, length);
      } else {
        out.shape.reset();
      }
    }
    outputs[o] = std::move(out);
  }
  return true;
}

}  // namespace footprint::symbolic
