#include "analyzer/symbolic/sizing.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/tensor_size.h"

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
  sized.shape = dims;
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

// p <= q for every value of the dims (symbols >= 1).
bool Dominated(const Expr& p, const Expr& q) { return (q - p).ProvablyNonNegative(); }

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
