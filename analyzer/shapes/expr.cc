#include "analyzer/shapes/expr.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace footprint::symbolic {
namespace {

bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

int64_t FloorDivInt(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t CeilDivInt(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
int64_t ModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

// Factors compare by key; terms by degree (higher first), then factor keys.
int CompareFactors(const std::vector<AtomPtr>& a, const std::vector<AtomPtr>& b) {
  if (a.size() != b.size()) return a.size() > b.size() ? -1 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    const int c = a[i]->key.compare(b[i]->key);
    if (c != 0) return c < 0 ? -1 : 1;
  }
  return 0;
}

size_t FactorCount(const Terms& terms) {
  size_t count = 0;
  for (const Term& term : terms) count += 1 + term.factors.size();
  return count;
}

bool IsPlainIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  }
  return name != "floor" && name != "ceil" && name != "mod" && name != "min" && name != "max";
}

std::string SymbolKey(const std::string& name) {
  if (IsPlainIdentifier(name)) return name;
  std::string quoted = "`";
  for (char c : name) quoted += c == '`' ? '\'' : c;
  return quoted + "`";
}

}  // namespace

Expr::Expr(int64_t value) {
  if (value != 0) terms_.push_back(Term{.coeff = value});
}

Expr Expr::Unknown() {
  Expr e;
  e.known_ = false;
  return e;
}

Expr Expr::FromTerms(Terms terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return CompareFactors(a.factors, b.factors) < 0; });
  Expr result;
  for (Term& term : terms) {
    if (!result.terms_.empty() && CompareFactors(result.terms_.back().factors, term.factors) == 0) {
      int64_t sum = 0;
      if (AddOverflows(result.terms_.back().coeff, term.coeff, &sum)) return Unknown();
      result.terms_.back().coeff = sum;
      if (sum == 0) result.terms_.pop_back();
    } else if (term.coeff != 0) {
      result.terms_.push_back(std::move(term));
    }
  }
  if (FactorCount(result.terms_) > kMaxExprFactors) return Unknown();
  return result;
}

Expr Expr::FromAtom(AtomPtr atom) { return FromTerms({Term{.coeff = 1, .factors = {std::move(atom)}}}); }

Expr Expr::Symbol(const std::string& name) {
  auto atom = std::make_shared<Atom>();
  atom->kind = AtomKind::kSymbol;
  atom->name = name;
  atom->key = SymbolKey(name);
  return FromAtom(std::move(atom));
}

std::optional<int64_t> Expr::AsConstant() const {
  if (!known_) return std::nullopt;
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_[0].factors.empty()) return terms_[0].coeff;
  return std::nullopt;
}

Expr operator+(const Expr& a, const Expr& b) {
  if (!a.known_ || !b.known_) return Expr::Unknown();
  if (b.terms_.empty()) return a;
  if (a.terms_.empty()) return b;
  if (const auto x = a.AsConstant(), y = b.AsConstant(); x.has_value() && y.has_value()) {
    int64_t sum = 0;
    return AddOverflows(*x, *y, &sum) ? Expr::Unknown() : Expr(sum);
  }
  Terms terms = a.terms_;
  terms.insert(terms.end(), b.terms_.begin(), b.terms_.end());
  return Expr::FromTerms(std::move(terms));
}

Expr Expr::operator-() const {
  if (!known_) return Unknown();
  Terms terms = terms_;
  for (Term& term : terms) {
    if (term.coeff == INT64_MIN) return Unknown();
    term.coeff = -term.coeff;
  }
  return FromTerms(std::move(terms));
}

Expr operator-(const Expr& a, const Expr& b) { return a + (-b); }

Expr operator*(const Expr& a, const Expr& b) {
  if (!a.known_ || !b.known_) return Expr::Unknown();
  if (const auto x = a.AsConstant(), y = b.AsConstant(); x.has_value() && y.has_value()) {
    int64_t product = 0;
    return MulOverflows(*x, *y, &product) ? Expr::Unknown() : Expr(product);
  }
  if (a.terms_.size() * b.terms_.size() > kMaxExprFactors) return Expr::Unknown();
  Terms terms;
  terms.reserve(a.terms_.size() * b.terms_.size());
  for (const Term& x : a.terms_) {
    for (const Term& y : b.terms_) {
      Term t;
      if (MulOverflows(x.coeff, y.coeff, &t.coeff)) return Expr::Unknown();
      t.factors.reserve(x.factors.size() + y.factors.size());
      std::merge(x.factors.begin(), x.factors.end(), y.factors.begin(), y.factors.end(),
                 std::back_inserter(t.factors), [](const AtomPtr& p, const AtomPtr& q) { return p->key < q->key; });
      terms.push_back(std::move(t));
    }
  }
  return Expr::FromTerms(std::move(terms));
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.known_ != b.known_) return false;
  if (!a.known_) return false;  // Two unknowns are not known to be equal.
  if (a.terms_.size() != b.terms_.size()) return false;
  for (size_t i = 0; i < a.terms_.size(); ++i) {
    if (a.terms_[i].coeff != b.terms_[i].coeff || CompareFactors(a.terms_[i].factors, b.terms_[i].factors) != 0) {
      return false;
    }
  }
  return true;
}

namespace {
std::string Grouped(const Expr& e) {
  std::string text = e.ToString();
  if (e.terms().size() > 1) text = std::string("(").append(text).append(")");
  return text;
}
}  // namespace

std::pair<Expr, Expr> Expr::SplitMultiples(const Expr& e, int64_t divisor) {
  Terms q, r;
  for (const Term& term : e.terms_) {
    if (term.coeff % divisor == 0) {
      q.push_back(Term{.coeff = term.coeff / divisor, .factors = term.factors});
    } else {
      r.push_back(term);
    }
  }
  return {FromTerms(std::move(q)), FromTerms(std::move(r))};
}

Expr Expr::MakeAtom(AtomKind kind, const Expr& a, const Expr& b, int64_t divisor) {
  auto atom = std::make_shared<Atom>();
  atom->kind = kind;
  atom->a = a;
  atom->b = b;
  atom->divisor = divisor;
  switch (kind) {
    case AtomKind::kFloorDiv:
      atom->key = "floor(" + Grouped(a) + "/" + std::to_string(divisor) + ")";
      break;
    case AtomKind::kCeilDiv:
      atom->key = "ceil(" + Grouped(a) + "/" + std::to_string(divisor) + ")";
      break;
    case AtomKind::kMod:
      atom->key = "mod(" + a.ToString() + "," + std::to_string(divisor) + ")";
      break;
    case AtomKind::kMin:
      atom->key = "min(" + a.ToString() + "," + b.ToString() + ")";
      break;
    case AtomKind::kMax:
      atom->key = "max(" + a.ToString() + "," + b.ToString() + ")";
      break;
    case AtomKind::kSymbol:
      break;
  }
  if (atom->key.size() > 16 * kMaxExprFactors) return Unknown();
  return FromAtom(std::move(atom));
}

Expr Expr::FloorDiv(const Expr& numerator, int64_t divisor) {
  if (!numerator.known_ || divisor <= 0) return Unknown();
  if (divisor == 1) return numerator;
  if (std::optional<int64_t> c = numerator.AsConstant()) return Expr(FloorDivInt(*c, divisor));
  auto [q, r] = SplitMultiples(numerator, divisor);
  if (r.terms_.empty()) return q;
  if (std::optional<int64_t> c = r.AsConstant()) return q + Expr(FloorDivInt(*c, divisor));
  return q + MakeAtom(AtomKind::kFloorDiv, r, Expr(0), divisor);
}

Expr Expr::CeilDiv(const Expr& numerator, int64_t divisor) {
  if (!numerator.known_ || divisor <= 0) return Unknown();
  if (divisor == 1) return numerator;
  if (std::optional<int64_t> c = numerator.AsConstant()) return Expr(CeilDivInt(*c, divisor));
  auto [q, r] = SplitMultiples(numerator, divisor);
  if (r.terms_.empty()) return q;
  if (std::optional<int64_t> c = r.AsConstant()) return q + Expr(CeilDivInt(*c, divisor));
  return q + MakeAtom(AtomKind::kCeilDiv, r, Expr(0), divisor);
}

Expr Expr::Mod(const Expr& numerator, int64_t divisor) {
  if (!numerator.known_ || divisor <= 0) return Unknown();
  if (divisor == 1) return Expr(0);
  if (std::optional<int64_t> c = numerator.AsConstant()) return Expr(ModInt(*c, divisor));
  auto [q, r] = SplitMultiples(numerator, divisor);
  if (r.terms_.empty()) return Expr(0);
  if (std::optional<int64_t> c = r.AsConstant()) return Expr(ModInt(*c, divisor));
  return MakeAtom(AtomKind::kMod, r, Expr(0), divisor);
}

namespace {

// An atom that is >= 0 whatever its symbols (>= 1) are.
bool AtomNonNegative(const Atom& atom) {
  switch (atom.kind) {
    case AtomKind::kSymbol:
    case AtomKind::kMod:
      return true;
    case AtomKind::kFloorDiv:
    case AtomKind::kCeilDiv:
      return atom.a.ProvablyNonNegative();
    case AtomKind::kMax:
      return atom.a.ProvablyNonNegative() || atom.b.ProvablyNonNegative();
    case AtomKind::kMin:
      return atom.a.ProvablyNonNegative() && atom.b.ProvablyNonNegative();
  }
  return false;
}

}  // namespace

bool Expr::ProvablyNonNegative() const {
  // A lower bound: the constant, plus each all-symbol term at symbols = 1,
  // plus 0 for terms with other non-negative atoms; every term's coefficient >= 0.
  if (!known_) return false;
  int64_t lower = 0;
  for (const Term& term : terms_) {
    bool plain = true;
    if (!term.factors.empty()) {
      if (term.coeff < 0) return false;
      for (const AtomPtr& f : term.factors) {
        if (!AtomNonNegative(*f)) return false;
        plain = plain && f->kind == AtomKind::kSymbol;
      }
    }
    if (plain && AddOverflows(lower, term.coeff, &lower)) return false;
  }
  return lower >= 0;
}

Expr Expr::Min(const Expr& a, const Expr& b) {
  if (!a.known_ || !b.known_) return Unknown();
  if (std::optional<int64_t> d = (a - b).AsConstant()) return *d <= 0 ? a : b;
  if ((b - a).ProvablyNonNegative()) return a;
  if ((a - b).ProvablyNonNegative()) return b;
  const bool swap = b.ToString() < a.ToString();
  return MakeAtom(AtomKind::kMin, swap ? b : a, swap ? a : b, 1);
}

Expr Expr::Max(const Expr& a, const Expr& b) {
  if (!a.known_ || !b.known_) return Unknown();
  if (std::optional<int64_t> d = (a - b).AsConstant()) return *d >= 0 ? a : b;
  if ((a - b).ProvablyNonNegative()) return a;
  if ((b - a).ProvablyNonNegative()) return b;
  const bool swap = b.ToString() < a.ToString();
  return MakeAtom(AtomKind::kMax, swap ? b : a, swap ? a : b, 1);
}

Expr Expr::DivideExact(const Expr& numerator, const Expr& denominator) {
  if (!numerator.known_ || !denominator.known_ || denominator.terms_.empty()) return Unknown();
  if (numerator.terms_.empty()) return Expr(0);
  if (denominator.terms_.size() == 1) {
    const Term& d = denominator.terms_[0];
    Terms out;
    for (const Term& t : numerator.terms_) {
      if (t.coeff % d.coeff != 0) return Unknown();
      // Remove d's factors (a sorted multiset) from t's.
      std::vector<AtomPtr> rest;
      size_t j = 0;
      for (const AtomPtr& f : t.factors) {
        if (j < d.factors.size() && f->key == d.factors[j]->key) {
          ++j;
        } else {
          rest.push_back(f);
        }
      }
      if (j != d.factors.size()) return Unknown();
      out.push_back(Term{.coeff = t.coeff / d.coeff, .factors = std::move(rest)});
    }
    return FromTerms(std::move(out));
  }
  // A constant multiple of a polynomial: (2n+2)/(n+1).
  if (numerator.terms_.size() != denominator.terms_.size()) return Unknown();
  const Term& n0 = numerator.terms_[0];
  const Term& d0 = denominator.terms_[0];
  if (n0.coeff % d0.coeff != 0) return Unknown();
  const int64_t ratio = n0.coeff / d0.coeff;
  if (numerator == denominator * Expr(ratio)) return Expr(ratio);
  return Unknown();
}

Expr Expr::Substitute(const SymbolValues& values) const {
  if (!known_) return Unknown();
  Expr sum = 0;
  for (const Term& term : terms_) {
    Expr product = term.coeff;
    for (const AtomPtr& f : term.factors) {
      Expr value = Unknown();
      switch (f->kind) {
        case AtomKind::kSymbol: {
          auto it = values.find(f->name);
          value = it == values.end() ? Symbol(f->name) : Expr(it->second);
          break;
        }
        case AtomKind::kFloorDiv:
          value = FloorDiv(f->a.Substitute(values), f->divisor);
          break;
        case AtomKind::kCeilDiv:
          value = CeilDiv(f->a.Substitute(values), f->divisor);
          break;
        case AtomKind::kMod:
          value = Mod(f->a.Substitute(values), f->divisor);
          break;
        case AtomKind::kMin:
          value = Min(f->a.Substitute(values), f->b.Substitute(values));
          break;
        case AtomKind::kMax:
          value = Max(f->a.Substitute(values), f->b.Substitute(values));
          break;
      }
      product = product * value;
    }
    sum = sum + product;
  }
  return sum;
}

std::optional<int64_t> Expr::Evaluate(const SymbolValues& values) const { return Substitute(values).AsConstant(); }

void Expr::CollectSymbols(std::set<std::string>& out) const {
  for (const Term& term : terms_) {
    for (const AtomPtr& f : term.factors) {
      if (f->kind == AtomKind::kSymbol) {
        out.insert(f->name);
      } else {
        f->a.CollectSymbols(out);
        f->b.CollectSymbols(out);
      }
    }
  }
}

std::string Expr::ToString() const {
  if (!known_) return "?";
  if (terms_.empty()) return "0";
  std::string out;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const Term& term = terms_[i];
    int64_t coeff = term.coeff;
    if (coeff < 0) {
      out += "-";
      coeff = coeff == INT64_MIN ? coeff : -coeff;
    } else if (i > 0) {
      out += "+";
    }
    std::string factors;
    for (const AtomPtr& f : term.factors) {
      if (!factors.empty()) factors += "*";
      factors += f->key;
    }
    if (factors.empty()) {
      out += std::to_string(coeff);
    } else if (coeff == 1) {
      out += factors;
    } else {
      out += std::to_string(coeff) + "*" + factors;
    }
  }
  return out;
}

namespace {

// Recursive descent over the printed grammar:
//   sum    := ['-'] product (('+'|'-') product)*
//   product:= factor ('*' factor)*
//   factor := INT | IDENT | `quoted` | '(' sum ')' | floor '(' sum '/' INT ')' | ceil (...)
//           | mod '(' sum ',' INT ')' | min '(' sum ',' sum ')' | max (...)
class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  std::optional<Expr> ParseAll() {
    std::optional<Expr> e = ParseSum();
    SkipSpace();
    if (!e.has_value() || pos_ != text_.size() || !e->known()) return std::nullopt;
    return e;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> ParseInt() {
    SkipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (MulOverflows(value, 10, &value) || AddOverflows(value, text_[pos_] - '0', &value)) return std::nullopt;
      ++pos_;
    }
    if (pos_ == start) return std::nullopt;
    return value;
  }
  std::optional<Expr> ParseSum() {
    std::optional<Expr> sum;
    bool negate = Eat('-');
    std::optional<Expr> first = ParseProduct();
    if (!first.has_value()) return std::nullopt;
    sum = negate ? -*first : *first;
    while (true) {
      if (Eat('+')) {
        negate = false;
      } else if (Eat('-')) {
        negate = true;
      } else {
        break;
      }
      std::optional<Expr> next = ParseProduct();
      if (!next.has_value()) return std::nullopt;
      sum = negate ? *sum - *next : *sum + *next;
    }
    return sum;
  }
  std::optional<Expr> ParseProduct() {
    std::optional<Expr> product = ParseFactor();
    if (!product.has_value()) return std::nullopt;
    while (Eat('*')) {
      std::optional<Expr> next = ParseFactor();
      if (!next.has_value()) return std::nullopt;
      product = *product * *next;
    }
    return product;
  }
  std::optional<Expr> ParseFactor() {
    SkipSpace();
    if (pos_ >= text_.size()) return std::nullopt;
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::optional<int64_t> value = ParseInt();
      if (!value.has_value()) return std::nullopt;
      return Expr(*value);
    }
    if (c == '(') {
      ++pos_;
      std::optional<Expr> inner = ParseSum();
      if (!inner.has_value() || !Eat(')')) return std::nullopt;
      return inner;
    }
    if (c == '`') {
      const size_t end = text_.find('`', pos_ + 1);
      if (end == std::string::npos) return std::nullopt;
      std::string name = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return Expr::Symbol(name);
    }
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    const std::string word = text_.substr(start, pos_ - start);
    const size_t after_word = pos_;
    if ((word == "floor" || word == "ceil" || word == "mod" || word == "min" || word == "max") && Eat('(')) {
      std::optional<Expr> a = ParseSum();
      if (!a.has_value()) return std::nullopt;
      if (word == "floor" || word == "ceil") {
        if (!Eat('/')) return std::nullopt;
        std::optional<int64_t> d = ParseInt();
        if (!d.has_value() || *d <= 0 || !Eat(')')) return std::nullopt;
        return word == "floor" ? Expr::FloorDiv(*a, *d) : Expr::CeilDiv(*a, *d);
      }
      if (!Eat(',')) return std::nullopt;
      if (word == "mod") {
        std::optional<int64_t> d = ParseInt();
        if (!d.has_value() || *d <= 0 || !Eat(')')) return std::nullopt;
        return Expr::Mod(*a, *d);
      }
      std::optional<Expr> b = ParseSum();
      if (!b.has_value() || !Eat(')')) return std::nullopt;
      return word == "min" ? Expr::Min(*a, *b) : Expr::Max(*a, *b);
    }
    pos_ = after_word;
    return Expr::Symbol(word);
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<Expr> Expr::Parse(const std::string& text) { return Parser(text).ParseAll(); }

}  // namespace footprint::symbolic
