// Shape functions of the reductions (ReduceSum..., ArgMax/ArgMin), Split,
// Resize/Upsample and the normalizations.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"
#include "analyzer/shapes/ops/standard_ops.h"

namespace footprint::symbolic {
namespace {

bool ReduceFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const std::string& op = ctx.node.op_type();
  const bool axes_from_input = ctx.opset >= 18 || (op == "ReduceSum" && ctx.opset >= 13);
  std::optional<std::vector<int64_t>> axes;
  if (axes_from_input) {
    if (ctx.Input(1) != nullptr) {
      axes = ConstantInts(ctx.Input(1));
      if (!axes.has_value()) return false;
    }
  } else {
    axes = ctx.Ints("axes");
  }
  const bool keepdims = ctx.Int("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::vector<bool> reduce(rank, false);
  if (!axes.has_value() || axes->empty()) {
    if (ctx.Int("noop_with_empty_axes", 0) != 0) {
      out[0] = *x;
      return true;
    }
    reduce.assign(rank, true);
  } else {
    for (int64_t a : *axes) {
      std::optional<int64_t> n = NormalizeAxis(a, rank);
      if (!n.has_value()) return false;
      reduce[*n] = true;
    }
  }
  std::vector<Expr> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduce[i]) {
      shape.push_back((*x->shape)[i]);
    } else if (keepdims) {
      shape.push_back(Expr(1));
    }
  }
  const bool arg = op == "ArgMax" || op == "ArgMin";
  SymValue result = TensorOf(arg ? onnx::TensorProto::INT64 : x->elem_type, std::move(shape));
  if (arg) {  // ArgMax/ArgMin: one axis attribute.
    std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
    if (!axis.has_value()) return false;
    result.shape = *x->shape;
    if (keepdims) {
      (*result.shape)[*axis] = Expr(1);
    } else {
      result.shape->erase(result.shape->begin() + *axis);
    }
  } else if (rank == 1 && x->ints.has_value() && reduce[0]) {
    Expr acc = op == "ReduceProd" ? Expr(1) : Expr(0);
    bool ok = op == "ReduceProd" || op == "ReduceSum" || ((op == "ReduceMax" || op == "ReduceMin") && !x->ints->empty());
    for (size_t i = 0; ok && i < x->ints->size(); ++i) {
      const Expr& e = (*x->ints)[i];
      if (op == "ReduceProd") acc = acc * e;
      if (op == "ReduceSum") acc = acc + e;
      if (op == "ReduceMax") acc = i == 0 ? e : Expr::Max(acc, e);
      if (op == "ReduceMin") acc = i == 0 ? e : Expr::Min(acc, e);
    }
    if (ok && acc.known()) result.ints = std::vector<Expr>{acc};
  } else if (rank == 1 && x->floats.has_value() && reduce[0] && !x->floats->empty()) {
    double acc = op == "ReduceProd" ? 1.0 : op == "ReduceMax" || op == "ReduceMin" ? (*x->floats)[0] : 0.0;
    for (double f : *x->floats) {
      if (op == "ReduceProd") acc *= f;
      if (op == "ReduceSum" || op == "ReduceMean") acc += f;
      if (op == "ReduceMax") acc = std::max(acc, f);
      if (op == "ReduceMin") acc = std::min(acc, f);
    }
    if (op == "ReduceMean") acc /= static_cast<double>(x->floats->size());
    result.floats = std::vector<double>{acc};
  }
  out[0] = std::move(result);
  return true;
}

bool SplitFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  std::optional<int64_t> axis = NormalizeAxis(ctx.Int("axis", 0), rank);
  if (!axis.has_value()) return false;
  std::optional<std::vector<Expr>> sizes;
  if (ctx.opset >= 13) {
    if (ctx.Input(1) != nullptr) {
      sizes = IntValues(ctx.Input(1));
      if (!sizes.has_value()) return false;
    }
  } else if (auto split = ctx.Ints("split")) {
    sizes.emplace(split->begin(), split->end());
  }
  const Expr dim = (*x->shape)[*axis];
  const int64_t n = static_cast<int64_t>(out.size());
  if (!sizes.has_value()) {
    sizes.emplace();
    if (n <= 0) return false;
    if (std::optional<int64_t> d = dim.AsConstant(); d.has_value() && *d % n != 0) {
      // Opset 18 num_outputs: ceil-sized chunks, the last one smaller.
      const int64_t chunk = (*d + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) sizes->push_back(Expr(std::min(chunk, *d - i * chunk)));
    } else {
      for (int64_t i = 0; i < n; ++i) sizes->push_back(Expr::DivideExact(dim, Expr(n)));
    }
  }
  if (static_cast<int64_t>(sizes->size()) != n) return false;
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    SymValue part = TensorOf(x->elem_type, *x->shape);
    (*part.shape)[*axis] = (*sizes)[i];
    // Splitting a 1-D shape tensor: each part keeps its values.
    std::optional<int64_t> size = (*sizes)[i].AsConstant();
    if (x->shape->size() == 1 && size.has_value() && offset >= 0) {
      if (x->ints.has_value() && offset + *size <= static_cast<int64_t>(x->ints->size())) {
        part.ints.emplace(x->ints->begin() + offset, x->ints->begin() + offset + *size);
      }
      if (x->floats.has_value() && offset + *size <= static_cast<int64_t>(x->floats->size())) {
        part.floats.emplace(x->floats->begin() + offset, x->floats->begin() + offset + *size);
      }
      offset += *size;
    } else {
      offset = -1;
    }
    out[i] = std::move(part);
  }
  return true;
}

bool ResizeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const int64_t rank = static_cast<int64_t>(x->shape->size());
  const bool upsample = ctx.node.op_type() == "Upsample";
  const SymValue* scales_in = upsample || ctx.opset < 11 ? ctx.Input(1) : ctx.Input(2);
  const SymValue* sizes_in = upsample || ctx.opset < 11 ? nullptr : ctx.Input(3);
  std::optional<std::vector<int64_t>> axes = ctx.Ints("axes");
  if (!axes.has_value()) {
    axes.emplace();
    for (int64_t i = 0; i < rank; ++i) axes->push_back(i);
  }
  std::vector<Expr> shape = *x->shape;
  SymValue result = TensorOf(x->elem_type, shape);
  std::optional<std::vector<Expr>> sizes = sizes_in != nullptr ? IntValues(sizes_in) : std::nullopt;
  std::optional<std::vector<double>> scales;
  if (scales_in != nullptr && scales_in->floats.has_value() && !scales_in->floats->empty()) scales = scales_in->floats;
  if (upsample && ctx.opset < 9) {
    if (const onnx::AttributeProto* a = ctx.Attribute("scales")) scales.emplace(a->floats().begin(), a->floats().end());
  }
  const std::string policy = ctx.String("keep_aspect_ratio_policy", "stretch");
  if (sizes.has_value() && sizes->size() == axes->size() && policy == "stretch") {
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> a = NormalizeAxis((*axes)[i], rank);
      if (!a.has_value()) return false;
      (*result.shape)[*a] = (*sizes)[i];
    }
  } else if (scales.has_value() && scales->size() == axes->size()) {
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> a = NormalizeAxis((*axes)[i], rank);
      if (!a.has_value()) return false;
      const double s = (*scales)[i];
      const Expr& d = (*x->shape)[*a];
      Expr r = Expr::Unknown();
      if (std::optional<int64_t> c = d.AsConstant()) {
        r = Expr(static_cast<int64_t>(std::floor(static_cast<double>(*c) * s)));
      } else if (s == std::floor(s) && s > 0) {
        r = d * Expr(static_cast<int64_t>(s));
      } else if (s > 0 && 1.0 / s == std::floor(1.0 / s)) {
        r = Expr::FloorDiv(d, static_cast<int64_t>(1.0 / s));
      }
      (*result.shape)[*a] = r;
    }
  } else {
    for (int64_t a : *axes) {
      if (std::optional<int64_t> n = NormalizeAxis(a, rank)) (*result.shape)[*n] = Expr::Unknown();
    }
    result.reason = absl::StrCat(ctx.node.op_type(), ": scales/sizes computed from values not known before running");
  }
  out[0] = std::move(result);
  return true;
}

// Ops whose one output has the shape and type of input 0 (normalizations in
// inference mode); with more outputs (training statistics) ONNX's function
// decides.
bool SameAsFirstInputFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || out.size() != 1) return false;
  out[0] = TensorOf(x->elem_type, *x->shape);
  return true;
}

}  // namespace

void AddReduceNormFunctions(ShapeFunctionTable& table) {
  table["Split"] = SplitFunction;
  table["Resize"] = ResizeFunction;
  table["Upsample"] = ResizeFunction;
  table["SimplifiedLayerNormalization"] = LayerNormShapeFunction;
  table["LayerNormalization"] = LayerNormShapeFunction;
  for (const char* op : {"BatchNormalization", "InstanceNormalization", "LRN", "GroupNormalization",
                         "MeanVarianceNormalization", "Clip", "PRelu"}) {
    table[op] = SameAsFirstInputFunction;
  }
  for (const char* op : {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
    table[op] = ReduceFunction;
  }
}

}  // namespace footprint::symbolic
