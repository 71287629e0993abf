// Shape functions of the sequence ops: a sequence keeps its elements while
// their number is known, so that SequenceAt and ConcatFromSequence size
// exactly; SplitToSequence and ConcatFromSequence convert from and to tensors.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

SymValue SequenceOf(std::vector<SymValue> elements, int32_t elem_type) {
  SymValue s;
  s.kind = SymValue::Kind::kSequence;
  s.elem_type = elem_type;
  s.elements_known = true;
  if (!elements.empty()) s.shape = elements[0].shape;
  for (SymValue& e : elements) {
    e.ints.reset();
    e.floats.reset();
    if (s.shape.has_value() && (!e.shape.has_value() || e.shape->size() != s.shape->size())) {
      s.shape.reset();
    } else if (s.shape.has_value()) {
      for (size_t i = 0; i < s.shape->size(); ++i) {
        if ((*s.shape)[i] != (*e.shape)[i]) (*s.shape)[i] = Expr::Unknown();
      }
    }
  }
  s.elements = std::move(elements);
  return s;
}

bool SequenceConstructFunction(const OpContext& ctx, Outputs& out) {
  std::vector<SymValue> elements;
  for (const SymValue* v : ctx.inputs) {
    if (v == nullptr) return false;
    elements.push_back(*v);
  }
  out[0] = SequenceOf(std::move(elements), elements.empty() ? 0 : elements[0].elem_type);
  if (!ctx.inputs.empty()) out[0].elem_type = ctx.inputs[0]->elem_type;
  return true;
}

bool SequenceEmptyFunction(const OpContext& ctx, Outputs& out) {
  out[0] = SequenceOf({}, static_cast<int32_t>(ctx.Int("dtype", onnx::TensorProto::FLOAT)));
  return true;
}

std::optional<int64_t> SequencePosition(const OpContext& ctx, size_t input, int64_t size, bool insert) {
  if (ctx.Input(input) == nullptr) return insert ? size : size - 1;
  std::optional<std::vector<int64_t>> p = ConstantInts(ctx.Input(input));
  if (!p.has_value() || p->size() != 1) return std::nullopt;
  int64_t i = (*p)[0];
  if (i < 0) i += size;
  if (i < 0 || i > (insert ? size : size - 1)) return std::nullopt;
  return i;
}

SymValue SequenceUnknownLength(const SymValue& from, const std::string& reason) {
  SymValue s = from;
  s.elements.clear();
  s.elements_known = false;
  s.reason = reason;
  return s;
}

bool SequenceInsertFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  const SymValue* t = ctx.Input(1);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence || t == nullptr) return false;
  if (seq->elements_known) {
    std::optional<int64_t> at = SequencePosition(ctx, 2, static_cast<int64_t>(seq->elements.size()), true);
    if (at.has_value()) {
      std::vector<SymValue> elements = seq->elements;
      elements.insert(elements.begin() + *at, *t);
      out[0] = SequenceOf(std::move(elements), seq->elem_type != 0 ? seq->elem_type : t->elem_type);
      return true;
    }
  }
  out[0] = SequenceUnknownLength(*seq, "sequence whose length is not known before running");
  return true;
}

bool SequenceEraseFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  if (seq->elements_known && !seq->elements.empty()) {
    std::optional<int64_t> at = SequencePosition(ctx, 1, static_cast<int64_t>(seq->elements.size()), false);
    if (at.has_value()) {
      std::vector<SymValue> elements = seq->elements;
      elements.erase(elements.begin() + *at);
      out[0] = SequenceOf(std::move(elements), seq->elem_type);
      return true;
    }
  }
  out[0] = SequenceUnknownLength(*seq, "sequence whose length is not known before running");
  return true;
}

bool SequenceAtFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  if (seq->elements_known && !seq->elements.empty()) {
    std::optional<int64_t> at = SequencePosition(ctx, 1, static_cast<int64_t>(seq->elements.size()), false);
    if (at.has_value()) {
      out[0] = seq->elements[*at];
      return true;
    }
  }
  SymValue element = TensorOf(seq->elem_type, {});
  element.shape = seq->shape;
  if (!element.HasFullShape()) element.reason = "element of a sequence whose elements differ in shape";
  out[0] = std::move(element);
  return true;
}

bool SequenceLengthFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  SymValue result = TensorOf(onnx::TensorProto::INT64, {});
  if (seq != nullptr && seq->elements_known) {
    result.ints = std::vector<Expr>{Expr(static_cast<int64_t>(seq->elements.size()))};
  }
  out[0] = std::move(result);
  return true;
}

bool SplitToSequenceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  std::optional<int64_t> dim;  // Unset when unknown or too many elements to list.
  if (std::optional<int64_t> c = (*x->shape)[*axis].AsConstant(); c.has_value() && *c >= 0 &&
                                                                 *c <= kMaxPropagatedElements) {
    dim = *c;
  }
  std::vector<SymValue> elements;
  if (ctx.Input(1) == nullptr) {
    if (!dim.has_value()) {
      SymValue element = TensorOf(x->elem_type, *x->shape);
      if (keepdims) {
        (*element.shape)[*axis] = Expr(1);
      } else {
        element.shape->erase(element.shape->begin() + *axis);
      }
      SymValue s = SequenceOf({}, x->elem_type);
      s.elements_known = false;
      s.shape = element.shape;
      s.reason = "sequence whose length is a symbolic dim";
      out[0] = std::move(s);
      return true;
    }
    for (int64_t i = 0; i < *dim; ++i) {
      SymValue element = TensorOf(x->elem_type, *x->shape);
      if (keepdims) {
        (*element.shape)[*axis] = Expr(1);
      } else {
        element.shape->erase(element.shape->begin() + *axis);
      }
      elements.push_back(std::move(element));
    }
  } else {
    std::optional<std::vector<Expr>> split = IntValues(ctx.Input(1));
    if (!split.has_value()) return false;
    if (split->size() == 1 && ctx.Input(1)->shape.has_value() && ctx.Input(1)->shape->empty()) {
      std::optional<int64_t> chunk = (*split)[0].AsConstant();
      if (!chunk.has_value() || !dim.has_value() || *chunk <= 0) return false;
      for (int64_t start = 0; start < *dim; start += *chunk) {
        SymValue element = TensorOf(x->elem_type, *x->shape);
        (*element.shape)[*axis] = Expr(std::min(*chunk, *dim - start));
        elements.push_back(std::move(element));
      }
    } else {
      for (const Expr& size : *split) {
        SymValue element = TensorOf(x->elem_type, *x->shape);
        (*element.shape)[*axis] = size;
        elements.push_back(std::move(element));
      }
    }
  }
  out[0] = SequenceOf(std::move(elements), x->elem_type);
  return true;
}

bool ConcatFromSequenceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* seq = ctx.Input(0);
  if (seq == nullptr || seq->kind != SymValue::Kind::kSequence) return false;
  const bool new_axis = ctx.Int("new_axis", 0) != 0;
  if (!seq->elements_known || seq->elements.empty()) {
    if (!seq->shape.has_value()) return false;
    SymValue result = TensorOf(seq->elem_type, *seq->shape);
    const int64_t rank = static_cast<int64_t>(seq->shape->size()) + (new_axis ? 1 : 0);
    std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
    if (!axis.has_value()) return false;
    if (new_axis) {
      result.shape->insert(result.shape->begin() + *axis, Expr::Unknown());
    } else {
      (*result.shape)[*axis] = Expr::Unknown();
    }
    result.reason = "concatenation of a sequence whose length is not known before running";
    out[0] = std::move(result);
    return true;
  }
  const SymValue& first = seq->elements[0];
  if (!first.shape.has_value()) return false;
  const int64_t rank = static_cast<int64_t>(first.shape->size()) + (new_axis ? 1 : 0);
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::vector<Expr> shape = *first.shape;
  if (new_axis) {
    shape.insert(shape.begin() + *axis, Expr(static_cast<int64_t>(seq->elements.size())));
  } else {
    Expr sum = 0;
    for (const SymValue& e : seq->elements) {
      if (!e.shape.has_value() || static_cast<int64_t>(e.shape->size()) != rank) return false;
      sum = sum + (*e.shape)[*axis];
    }
    shape[*axis] = sum;
  }
  out[0] = TensorOf(seq->elem_type, std::move(shape));
  return true;
}

}  // namespace

void AddSequenceFunctions(ShapeFunctionTable& table) {
  table["SequenceConstruct"] = SequenceConstructFunction;
  table["SequenceEmpty"] = SequenceEmptyFunction;
  table["SequenceInsert"] = SequenceInsertFunction;
  table["SequenceErase"] = SequenceEraseFunction;
  table["SequenceAt"] = SequenceAtFunction;
  table["SequenceLength"] = SequenceLengthFunction;
  table["SplitToSequence"] = SplitToSequenceFunction;
  table["ConcatFromSequence"] = ConcatFromSequenceFunction;
}

}  // namespace footprint::symbolic
