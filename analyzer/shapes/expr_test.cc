#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/sizing.h"

#include <functional>
#include <random>

#include "gtest/gtest.h"

namespace footprint::symbolic {
namespace {

Expr S(const std::string& name) { return Expr::Symbol(name); }

TEST(ExprTest, CanonicalPolynomials) {
  const Expr batch = S("batch"), seq = S("seq");
  EXPECT_EQ((seq * batch * Expr(6291456)).ToString(), "6291456*batch*seq");
  EXPECT_EQ((batch + seq + batch).ToString(), "2*batch+seq");
  EXPECT_EQ((batch - batch).ToString(), "0");
  EXPECT_EQ(((batch + Expr(1)) * (batch - Expr(1))).ToString(), "batch*batch-1");
  EXPECT_EQ(batch * seq, seq * batch);
  EXPECT_NE(batch, seq);
  EXPECT_EQ((Expr(3) * Expr(4)).AsConstant(), 12);
}

TEST(ExprTest, DivisionsByConstants) {
  const Expr h = S("h");
  EXPECT_EQ(Expr::FloorDiv(Expr(7), 2).AsConstant(), 3);
  EXPECT_EQ(Expr::FloorDiv(Expr(-7), 2).AsConstant(), -4);
  EXPECT_EQ(Expr::CeilDiv(Expr(7), 2).AsConstant(), 4);
  EXPECT_EQ(Expr::Mod(Expr(-7), 3).AsConstant(), 2);
  EXPECT_EQ(Expr::FloorDiv(Expr(4) * h, 2).ToString(), "2*h");          // Exact.
  EXPECT_EQ(Expr::FloorDiv(Expr(4) * h + Expr(1), 2).ToString(), "2*h");  // 4h/2 leaves the floor.
  EXPECT_EQ(Expr::FloorDiv(h + Expr(1), 2).ToString(), "floor((h+1)/2)");
  EXPECT_EQ(Expr::CeilDiv(h, 64).ToString(), "ceil(h/64)");
  EXPECT_EQ(Expr::Mod(Expr(6) * h, 3).ToString(), "0");
  EXPECT_EQ(Expr::FloorDiv(h, 1), h);
}

TEST(ExprTest, MinAndMax) {
  const Expr n = S("n");
  EXPECT_EQ(Expr::Min(n, n + Expr(1)), n);
  EXPECT_EQ(Expr::Max(n, n + Expr(1)), n + Expr(1));
  EXPECT_EQ(Expr::Min(Expr(3), Expr(5)).AsConstant(), 3);
  EXPECT_EQ(Expr::Min(S("b"), S("a")).ToString(), "min(a,b)");
  EXPECT_EQ(Expr::Min(S("a"), S("b")), Expr::Min(S("b"), S("a")));
  // Symbols are dims, >= 1.
  EXPECT_EQ(Expr::Min(Expr(1), n), Expr(1));
  EXPECT_EQ(Expr::Max(Expr(0), n - Expr(1)), n - Expr(1));
  EXPECT_EQ(Expr::Min(Expr(2), n).ToString(), "min(2,n)");  // n may be 1.
  EXPECT_TRUE((n * S("m") - Expr(1)).ProvablyNonNegative());
  EXPECT_FALSE((n - S("m")).ProvablyNonNegative());
  EXPECT_TRUE((Expr::CeilDiv(Expr(4) * n, 64) * Expr(64) + Expr::Max(n, S("m"))).ProvablyNonNegative());
  EXPECT_TRUE((n * S("m") + Expr::Mod(n, 3) - Expr(1)).ProvablyNonNegative());
  EXPECT_FALSE((Expr::FloorDiv(n - Expr(5), 2)).ProvablyNonNegative());  // n may be 1.
}

TEST(ExprTest, ExactDivision) {
  const Expr b = S("b"), s = S("s");
  EXPECT_EQ(Expr::DivideExact(Expr(6) * b * s, Expr(2) * b), Expr(3) * s);
  EXPECT_EQ(Expr::DivideExact(Expr(2) * s + Expr(2), s + Expr(1)), Expr(2));
  EXPECT_FALSE(Expr::DivideExact(b, s).known());
  EXPECT_FALSE(Expr::DivideExact(Expr(3) * b, Expr(2)).known());
}

TEST(ExprTest, EvaluateAndSubstitute) {
  const Expr e = Expr::CeilDiv(S("batch") * S("seq") * Expr(4), 64) * Expr(64);
  EXPECT_EQ(e.Evaluate({{"batch", 1}, {"seq", 8}}), 64);
  EXPECT_EQ(e.Evaluate({{"batch", 2}, {"seq", 100}}), 832);
  EXPECT_FALSE(e.Evaluate({{"batch", 2}}).has_value());
  EXPECT_EQ(e.Substitute({{"batch", 16}}).ToString(), "64*seq");
  std::set<std::string> symbols;
  e.CollectSymbols(symbols);
  EXPECT_EQ(symbols, (std::set<std::string>{"batch", "seq"}));
}

TEST(ExprTest, UnknownSpreadsAndNeverEqualsItself) {
  const Expr unknown = Expr::Unknown();
  EXPECT_FALSE((unknown + Expr(1)).known());
  EXPECT_FALSE((unknown * S("n")).known());
  EXPECT_FALSE(unknown == unknown);
  EXPECT_EQ(unknown.ToString(), "?");
}

TEST(ExprTest, OverflowAndSizeCapGiveUnknown) {
  const Expr big(int64_t{1} << 62);
  EXPECT_FALSE((big * Expr(4)).known());
  EXPECT_FALSE((big + big).known());
  Expr sum = 0;
  for (int i = 0; i < kMaxExprFactors + 1; ++i) sum = sum + S(std::string("s").append(std::to_string(i)));
  EXPECT_FALSE(sum.known());
}

TEST(ExprTest, PrintParseRoundTrip) {
  const Expr n = S("n"), h = S("height");
  const std::vector<Expr> cases = {
      Expr(0),
      Expr(-5),
      Expr(6291456) * S("batch") * S("seq"),
      Expr::FloorDiv(h - Expr(3), 2) + Expr(1),
      Expr::CeilDiv(Expr(4) * n * h, 64) * Expr(64),
      Expr::Mod(n + Expr(1), 4),
      Expr::Max(Expr(0), Expr::Min(Expr(7), n) - Expr(2)),
      n * n - Expr(3) * n + Expr(2),
      S("past_key_values.0.key_dim_2") + Expr(1),
      S("odd name/with:chars"),
  };
  for (const Expr& e : cases) {
    const std::string text = e.ToString();
    std::optional<Expr> parsed = Expr::Parse(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(*parsed, e) << text;
    EXPECT_EQ(parsed->ToString(), text);
  }
}

TEST(ExprTest, ParsesDimParamsAndRejectsGarbage) {
  EXPECT_EQ(Expr::Parse("past_sequence_length + 1")->ToString(), "past_sequence_length+1");
  EXPECT_EQ(Expr::Parse("2 * (a + b)")->ToString(), "2*a+2*b");
  EXPECT_FALSE(Expr::Parse("a +").has_value());
  EXPECT_FALSE(Expr::Parse("floor(a)").has_value());  // floor needs "/ constant".
  EXPECT_FALSE(Expr::Parse("a / b").has_value());
  EXPECT_FALSE(Expr::Parse("").has_value());
}

TEST(MaxOfSumsTest, DropsDominatedStepsEvenWithAlignment) {
  const Expr n = S("n"), m = S("m");
  const Expr aligned_small = AlignedExpr(Expr(4) * n, 64) + Expr(64);  // 64*ceil(4*n/64)+64.
  EXPECT_EQ(MaxOfSums({aligned_small, Expr(256) * n}).ToString(), "256*n");
  EXPECT_EQ(MaxOfSums({n + m, n, Expr(5)}).ToString(), "max(5,m+n)");  // n <= n+m; 5 vs n+m undecided.
  EXPECT_EQ(MaxOfSums({Expr(3) * n, Expr(2) * n + m}).ToString(), "max(3*n,m+2*n)");
  EXPECT_FALSE(MaxOfSums({Expr::Unknown(), n}).known());
  std::vector<Expr> many;
  for (int i = 0; i < 20; ++i) many.push_back(Expr(i) * n + Expr(100 - 5 * i) * m);  // None dominates.
  EXPECT_FALSE(MaxOfSums(many).known());
}

// Random formulas built two ways, as an Expr and as a plain integer
// function: the canonical forms must evaluate the same at random points
// (symbols >= 1, as dims), and print/parse must round-trip.
struct Built {
  Expr expr;
  std::function<int64_t(const SymbolValues&)> value;
};

Built RandomFormula(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 9);
  const char* names[] = {"a", "b", "c"};
  switch (pick(rng)) {
    case 0: {
      const int64_t c = std::uniform_int_distribution<int64_t>(-5, 9)(rng);
      return {Expr(c), [c](const SymbolValues&) { return c; }};
    }
    case 1: {
      const std::string name = names[std::uniform_int_distribution<int>(0, 2)(rng)];
      return {Expr::Symbol(name), [name](const SymbolValues& v) { return v.at(name); }};
    }
    default:
      break;
  }
  Built x = RandomFormula(rng, depth - 1), y = RandomFormula(rng, depth - 1);
  const int64_t d = std::uniform_int_distribution<int64_t>(1, 7)(rng);
  auto floor_div = [](int64_t n, int64_t k) { return n / k - ((n % k != 0) && ((n < 0) != (k < 0))); };
  switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0: return {x.expr + y.expr, [x, y](const SymbolValues& v) { return x.value(v) + y.value(v); }};
    case 1: return {x.expr - y.expr, [x, y](const SymbolValues& v) { return x.value(v) - y.value(v); }};
    case 2: return {x.expr * y.expr, [x, y](const SymbolValues& v) { return x.value(v) * y.value(v); }};
    case 3: return {Expr::FloorDiv(x.expr, d), [x, d, floor_div](const SymbolValues& v) { return floor_div(x.value(v), d); }};
    case 4:
      return {Expr::CeilDiv(x.expr, d), [x, d, floor_div](const SymbolValues& v) { return -floor_div(-x.value(v), d); }};
    case 5:
      return {Expr::Mod(x.expr, d), [x, d, floor_div](const SymbolValues& v) {
                return x.value(v) - floor_div(x.value(v), d) * d;
              }};
    case 6:
      return {Expr::Min(x.expr, y.expr), [x, y](const SymbolValues& v) { return std::min(x.value(v), y.value(v)); }};
    default:
      return {Expr::Max(x.expr, y.expr), [x, y](const SymbolValues& v) { return std::max(x.value(v), y.value(v)); }};
  }
}

TEST(ExprTest, RandomFormulasAgreeWithIntegerArithmetic) {
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int64_t> dim(1, 40);
  int checked = 0;
  for (int round = 0; round < 500; ++round) {
    const Built built = RandomFormula(rng, 4);
    if (!built.expr.known()) continue;  // Past the size cap.
    std::optional<Expr> parsed = Expr::Parse(built.expr.ToString());
    ASSERT_TRUE(parsed.has_value()) << built.expr.ToString();
    EXPECT_EQ(*parsed, built.expr) << built.expr.ToString();
    for (int point = 0; point < 5; ++point) {
      const SymbolValues values = {{"a", dim(rng)}, {"b", dim(rng)}, {"c", dim(rng)}};
      EXPECT_EQ(built.expr.Evaluate(values), built.value(values)) << built.expr.ToString();
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace footprint::symbolic
