// Shape functions of convolutions and pools (for symbolic spatial dims; ONNX's
// own handle concrete ones), global pools, and the matrix products MatMul and
// Gemm.
#include <optional>
#include <string>
#include <vector>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

bool ConvLikeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 3) return false;
  if (x->HasConcreteShape()) return false;  // ONNX's own function handles concrete shapes.
  return PoolShapeFunction(ctx, out);
}

// MatMul as numpy does it: a 1-D operand is promoted (and its dim dropped
// again), the batch dims broadcast.
bool MatMulFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  const SymValue* b = ctx.Input(1);
  if (!Ranked(a) || !Ranked(b) || a->shape->empty() || b->shape->empty()) return false;
  std::vector<Expr> sa = *a->shape;
  std::vector<Expr> sb = *b->shape;
  const bool a_vector = sa.size() == 1;
  const bool b_vector = sb.size() == 1;
  if (a_vector) sa.insert(sa.begin(), Expr(1));
  if (b_vector) sb.push_back(Expr(1));
  std::vector<Expr> shape = Broadcast(std::vector<Expr>(sa.begin(), sa.end() - 2),
                                      std::vector<Expr>(sb.begin(), sb.end() - 2));
  if (!a_vector) shape.push_back(sa[sa.size() - 2]);
  if (!b_vector) shape.push_back(sb.back());
  out[0] = TensorOf(a->elem_type, std::move(shape));
  return true;
}

// Gemm: (M, K) x (K, N) -> (M, N), either operand possibly transposed.
bool GemmFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  std::optional<std::vector<Expr>> shape = GemmOutputShape(ctx, a, ctx.Input(1));
  if (!shape.has_value()) return false;
  out[0] = TensorOf(a->elem_type, *std::move(shape));
  return true;
}

// GlobalAveragePool and friends: (N, C, d1, d2...) -> (N, C, 1, 1...).
bool GlobalPoolFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 2) return false;
  std::vector<Expr> shape = *x->shape;
  for (size_t i = 2; i < shape.size(); ++i) shape[i] = Expr(1);
  out[0] = TensorOf(x->elem_type, std::move(shape));
  return true;
}

}  // namespace

bool PoolShapeFunction(const OpContext& ctx, std::vector<SymValue>& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 3) return false;
  const std::string& op = ctx.node.op_type();
  const bool conv = op == "Conv" || op == "ConvInteger" || op == "QLinearConv";
  const size_t spatial = x->shape->size() - 2;
  const SymValue* w = conv ? ctx.Input(op == "QLinearConv" ? 3 : 1) : nullptr;
  std::vector<int64_t> kernel;
  if (auto k = ctx.Ints("kernel_shape")) {
    kernel = *k;
  } else if (w != nullptr && w->shape.has_value() && w->shape->size() == spatial + 2) {
    for (size_t i = 0; i < spatial; ++i) {
      std::optional<int64_t> c = (*w->shape)[2 + i].AsConstant();
      if (!c.has_value()) return false;
      kernel.push_back(*c);
    }
  }
  if (kernel.size() != spatial) return false;
  const std::vector<int64_t> strides = ctx.Ints("strides").value_or(std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = ctx.Ints("dilations").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = ctx.Ints("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = ctx.String("auto_pad", "NOTSET");
  const bool ceil_mode = ctx.Int("ceil_mode", 0) != 0;
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) return false;
  std::vector<Expr> shape;
  shape.push_back((*x->shape)[0]);
  if (conv) {
    if (w == nullptr || !w->shape.has_value() || w->shape->empty()) return false;
    shape.push_back((*w->shape)[0]);
  } else {
    shape.push_back((*x->shape)[1]);
  }
  for (size_t i = 0; i < spatial; ++i) {
    const Expr& d = (*x->shape)[2 + i];
    const int64_t effective = dilations[i] * (kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      shape.push_back(Expr::CeilDiv(d, strides[i]));
    } else if (auto_pad == "VALID") {
      shape.push_back(Expr::FloorDiv(d - Expr(effective), strides[i]) + Expr(1));
    } else {
      const Expr span = d + Expr(pads[i] + pads[i + spatial] - effective);
      shape.push_back((ceil_mode ? Expr::CeilDiv(span, strides[i]) : Expr::FloorDiv(span, strides[i])) + Expr(1));
    }
  }
  out[0] = TensorOf(x->elem_type, std::move(shape));
  if (op == "QLinearConv") out[0].elem_type = x->elem_type;
  for (size_t o = 1; o < out.size(); ++o) {
    out[o] = TensorOf(onnx::TensorProto::INT64, *out[0].shape);  // MaxPool's indices.
  }
  return true;
}

std::optional<std::vector<Expr>> GemmOutputShape(const OpContext& ctx, const SymValue* a, const SymValue* b) {
  if (a == nullptr || b == nullptr || a->kind != SymValue::Kind::kTensor || b->kind != SymValue::Kind::kTensor ||
      !a->shape.has_value() || !b->shape.has_value() || a->shape->size() != 2 || b->shape->size() != 2) return std::nullopt;
  const Expr m = ctx.Int("transA", 0) != 0 ? (*a->shape)[1] : (*a->shape)[0];
  const Expr n = ctx.Int("transB", 0) != 0 ? (*b->shape)[0] : (*b->shape)[1];
  return std::vector<Expr>{m, n};
}

void AddConvPoolFunctions(ShapeFunctionTable& table) {
  table["MatMul"] = MatMulFunction;
  table["Gemm"] = GemmFunction;
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) table[op] = GlobalPoolFunction;
  for (const char* op : {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool"}) {
    table[op] = ConvLikeFunction;
  }
}

}  // namespace footprint::symbolic
