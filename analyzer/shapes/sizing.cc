#include "analyzer/shapes/sizing.h"

#include <numeric>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/shapes/tensor_size.h"

namespace footprint::symbolic {

absl::StatusOr<SymbolicSize> SizeOfSymValue(const SymValue& value) {
  SymbolicSize result;
  SizedType& sized = result.sized;
  sized.data_type = value.elem_type;
  switch (value.kind) {
    case SymValue::Kind::kUnknown:
      sized.unsized_reason = value.reason.empty() ? "no type or shape inferred" : value.reason;
      result.bytes = Expr::Unknown();
      return result;
    case SymValue::Kind::kOther:
      sized.unsized_reason = value.reason.empty() ? "map or optional" : value.reason;
      result.bytes = Expr::Unknown();
      return result;
    case SymValue::Kind::kSequence: {
      result.bytes = BytesOf(value);
      if (std::optional<int64_t> bytes = result.bytes.AsConstant()) {
        sized.bytes = *bytes;
      } else {
        sized.unsized_reason = value.elements_known ? "sequence with unsized elements"
                                                    : (value.reason.empty() ? "sequence" : value.reason);
      }
      return result;
    }
    case SymValue::Kind::kTensor:
      break;
  }
  if (!value.shape.has_value()) {
    sized.unsized_reason = value.reason.empty() ? "rank unknown" : value.reason;
    result.bytes = Expr::Unknown();
    return result;
  }
  std::vector<Dim> dims;
  std::vector<int64_t> concrete;
  std::set<std::string> unbound;
  bool unknown_dim = false;
  for (const Expr& d : *value.shape) {
    Dim dim;
    if (std::optional<int64_t> c = d.AsConstant()) {
      if (*c < 0) {
        // A computed shape went negative: the bound dims do not fit the model's arithmetic.
        unknown_dim = true;
        if (sized.unsized_reason.empty()) {
          sized.unsized_reason = absl::StrCat("computed dimension ", *c, " is negative (are the bound dims consistent?)");
        }
      } else {
        dim.value = *c;
        concrete.push_back(*c);
      }
    } else if (d.known()) {
      dim.symbol = d.ToString();
      d.CollectSymbols(unbound);
    } else {
      unknown_dim = true;
    }
    dims.push_back(std::move(dim));
  }
  sized.shape = std::move(dims);
  const std::optional<int> bits = BitsPerElement(value.elem_type);
  result.bytes = BytesOf(value);
  if (!bits.has_value()) {
    sized.unsized_reason = value.elem_type == kDataTypeString ? "string tensor" : "unknown element type";
    return result;
  }
  if (unknown_dim) {
    if (sized.unsized_reason.empty()) sized.unsized_reason = value.reason.empty() ? "unknown dimension" : value.reason;
    result.bytes = Expr::Unknown();
    return result;
  }
  if (!unbound.empty()) {
    const std::vector<std::string> names(unbound.begin(), unbound.end());
    sized.unsized_reason = absl::StrCat("symbolic dimension", names.size() > 1 ? "s " : " ",
                                        absl::StrJoin(names, ", "), " not bound (bind with --dim ", names[0],
                                        "=N, --input-shape or --dim-default N)");
    return result;
  }
  absl::StatusOr<int64_t> bytes = TensorByteSize(concrete, *bits);
  if (!bytes.ok()) return bytes.status();
  sized.bytes = *bytes;
  return result;
}

Expr AlignedExpr(const Expr& bytes, int64_t alignment) {
  if (alignment <= 1) return bytes;
  return Expr::CeilDiv(bytes, alignment) * Expr(alignment);
}

namespace {

bool PlainSymbols(const std::vector<AtomPtr>& factors) {
  for (const AtomPtr& f : factors) {
    if (f->kind != AtomKind::kSymbol) return false;
  }
  return true;
}

Expr Monomial(int64_t coeff, const std::vector<AtomPtr>& factors) {
  Expr m = coeff;
  for (const AtomPtr& f : factors) m = m * Expr::Symbol(f->name);
  return m;
}

// scale * e >= the returned polynomial in plain symbols, for every dims >= 1:
// each floor/ceil(E/c) is replaced by its linear bound on the side that keeps
// the inequality (ceil(E/c) >= E/c, <= (E+c-1)/c; floor(E/c) >= (E-c+1)/c,
// <= E/c), scale being the lcm of the divisors. Why: aligned sizes are
// 64*ceil(bytes/64), and without this no step with them dominates another.
std::optional<Expr> LinearLowerBound(const Expr& e) {
  int64_t scale = 1;
  for (const Term& term : e.terms()) {
    for (const AtomPtr& f : term.factors) {
      if (f->kind == AtomKind::kFloorDiv || f->kind == AtomKind::kCeilDiv || f->kind == AtomKind::kMod) {
        scale = std::lcm(scale, f->divisor);
        if (scale > (int64_t{1} << 20)) return std::nullopt;
      }
    }
  }
  Expr bound = 0;
  for (const Term& term : e.terms()) {
    std::vector<AtomPtr> plain;
    const Atom* special = nullptr;
    for (const AtomPtr& f : term.factors) {
      if (f->kind == AtomKind::kSymbol) {
        plain.push_back(f);
      } else if (special == nullptr) {
        special = f.get();
      } else {
        return std::nullopt;
      }
    }
    const Expr m = Monomial(term.coeff, plain) * Expr(scale);  // coeff * symbols * scale (symbols >= 1).
    if (special == nullptr) {
      bound = bound + m;
      continue;
    }
    const int64_t c = special->divisor;
    switch (special->kind) {
      case AtomKind::kCeilDiv:
        bound = bound + Expr::DivideExact(m * (term.coeff > 0 ? special->a : special->a + Expr(c - 1)), Expr(c));
        break;
      case AtomKind::kFloorDiv:
        bound = bound + Expr::DivideExact(m * (term.coeff > 0 ? special->a - Expr(c - 1) : special->a), Expr(c));
        break;
      case AtomKind::kMod:  // 0 <= mod < c.
        if (term.coeff < 0) bound = bound + m * Expr(c - 1);
        break;
      default:
        return std::nullopt;
    }
    if (!bound.known()) return std::nullopt;
  }
  // The arguments of floor/ceil must themselves be plain for the bound to be plain.
  for (const Term& term : bound.terms()) {
    if (!PlainSymbols(term.factors)) return std::nullopt;
  }
  return bound;
}

// p <= q for every value of the dims (symbols >= 1).
bool Dominated(const Expr& p, const Expr& q) {
  const Expr d = q - p;
  if (d.ProvablyNonNegative()) return true;
  std::optional<Expr> bound = LinearLowerBound(d);
  return bound.has_value() && bound->ProvablyNonNegative();
}

}  // namespace

Expr MaxOfSums(const std::vector<Expr>& sums, size_t max_terms) {
  std::vector<Expr> kept;
  std::set<std::string> seen;
  for (const Expr& sum : sums) {
    if (!sum.known()) return Expr::Unknown();
    if (!seen.insert(sum.ToString()).second) continue;
    bool dominated = false;
    for (const Expr& k : kept) {
      if (Dominated(sum, k)) {
        dominated = true;
        break;
      }
    }
    if (dominated) continue;
    std::vector<Expr> next;
    for (Expr& k : kept) {
      if (!Dominated(k, sum)) next.push_back(std::move(k));
    }
    next.push_back(sum);
    kept = std::move(next);
    if (kept.size() > 4 * max_terms) return Expr::Unknown();
  }
  if (kept.empty()) return Expr(0);
  if (kept.size() > max_terms) return Expr::Unknown();
  Expr result = kept[0];
  for (size_t i = 1; i < kept.size(); ++i) result = Expr::Max(result, kept[i]);
  return result;
}

}  // namespace footprint::symbolic
