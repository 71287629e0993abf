// Integer expressions over dimension symbols: what a dim is when the user has
// not said what it is.
//
// Why our own, not sympy's way: a tensor's dims in real models are sums and
// products of a few input dims, floor/ceil divisions by constants (strided
// convs, pools), and now and then a min or max (Slice, Pad). Kept as a
// canonical polynomial whose variables are symbols or such opaque atoms, two
// equal expressions print the same, so equality is a string compare and the
// engine stays linear in nodes.
//
// - Sums of terms, each an int64 coefficient times a sorted product of atoms.
// - Atoms: a symbol, floor(E/c), ceil(E/c), mod(E,c) (c > 0), min(A,B), max(A,B).
// - Cheap canonical rules only: like terms merge, constants fold, multiples of
//   c leave floor/ceil/mod, min/max of expressions that differ by a constant
//   pick one. No factoring, no case analysis.
// - Symbols stand for dims and are taken to be >= 1 (a dim of 0 is an empty
//   tensor; no real input is bound that way): min(1, seq) = 1, and
//   max(0, seq - 1) = seq - 1.
// - An expression that grows past kMaxExprFactors factors, or whose
//   coefficients overflow int64, becomes Unknown: never a wrong number.
//
//   Expr batch = Expr::Symbol("batch");
//   Expr bytes = batch * Expr::Symbol("seq") * Expr(6291456);
//   bytes.ToString();                     // "6291456*batch*seq"
//   Expr::Parse("6291456*batch*seq");      // the same expression
//   bytes.Evaluate({{"batch", 1}, {"seq", 8}});  // 50331648
#ifndef ONNX_FOOTPRINT_ANALYZER_SHAPES_EXPR_H_
#define ONNX_FOOTPRINT_ANALYZER_SHAPES_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace footprint::symbolic {

inline constexpr int kMaxExprFactors = 64;  // Past this an expression is Unknown.

enum class AtomKind { kSymbol, kFloorDiv, kCeilDiv, kMod, kMin, kMax };

struct Atom;
using AtomPtr = std::shared_ptr<const Atom>;

// coeff * factors[0] * factors[1] * ...; factors sorted by key, may repeat.
struct Term {
  int64_t coeff = 0;             // Never 0 in a canonical expression.
  std::vector<AtomPtr> factors;  // Empty for the constant term.
};

// Nearly every dim is a constant, one factor-free term: kept inline, so that
// shapes of an 18,000-node graph do not cost an allocation per dim.
using Terms = absl::InlinedVector<Term, 1>;

using SymbolValues = std::map<std::string, int64_t>;

class Expr {
 public:
  Expr() : Expr(int64_t{0}) {}
  Expr(int64_t value);  // NOLINT: a constant converts implicitly.
  static Expr Unknown();
  static Expr Symbol(const std::string& name);
  static Expr FloorDiv(const Expr& numerator, int64_t divisor);
  static Expr CeilDiv(const Expr& numerator, int64_t divisor);
  static Expr Mod(const Expr& numerator, int64_t divisor);
  static Expr Min(const Expr& a, const Expr& b);
  static Expr Max(const Expr& a, const Expr& b);
  // numerator / denominator when it divides exactly as polynomials
  // ((6*b*s) / (2*b) = 3*s; (2*n+2) / (n+1) = 2), else Unknown.
  static Expr DivideExact(const Expr& numerator, const Expr& denominator);
  // The printed form (ToString) back into an expression; nullopt on a syntax
  // error. Also reads dim_params such as "past_sequence_length + 1".
  static std::optional<Expr> Parse(const std::string& text);

  // e >= 0 for every value of its symbols >= 1: every non-constant term has
  // a coefficient >= 0 and atoms that are >= 0 (symbols, mod, floor/ceil of
  // non-negatives, ...), and the constant plus the all-symbol terms at 1 is >= 0.
  bool ProvablyNonNegative() const;

  bool known() const { return known_; }
  std::optional<int64_t> AsConstant() const;
  bool IsConstant(int64_t value) const { return AsConstant() == value; }
  const Terms& terms() const { return terms_; }

  // Replaces the symbols that `values` names; the others stay.
  Expr Substitute(const SymbolValues& values) const;
  // The value when every symbol is in `values` (nullopt otherwise or on overflow).
  std::optional<int64_t> Evaluate(const SymbolValues& values) const;
  void CollectSymbols(std::set<std::string>& out) const;

  // Canonical: equal expressions print the same. "?" for Unknown.
  std::string ToString() const;

  friend Expr operator+(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a, const Expr& b);
  friend Expr operator*(const Expr& a, const Expr& b);
  Expr operator-() const;
  friend bool operator==(const Expr& a, const Expr& b);
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }

 private:
  static Expr FromTerms(Terms terms);
  static Expr FromAtom(AtomPtr atom);
  static std::pair<Expr, Expr> SplitMultiples(const Expr& e, int64_t divisor);
  static Expr MakeAtom(AtomKind kind, const Expr& a, const Expr& b, int64_t divisor);
  bool known_ = true;
  Terms terms_;  // Sorted, like terms merged, no zero coefficients.
};

// One opaque variable of a polynomial.
struct Atom {
  AtomKind kind = AtomKind::kSymbol;
  std::string name;   // kSymbol: the symbol.
  Expr a, b;          // Arguments (b only for min/max).
  int64_t divisor = 1;  // floor/ceil/mod: the constant divisor (> 0).
  std::string key;    // Printed form: orders and compares atoms.
};

}  // namespace footprint::symbolic

#endif  // ONNX_FOOTPRINT_ANALYZER_SHAPES_EXPR_H_
