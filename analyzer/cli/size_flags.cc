#include "analyzer/cli/size_flags.h"

#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

constexpr int kMaxFractionDigits = 9;

absl::Status SizeError(const std::string& text, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      "'", text, "' is not a size: ", problem, " (examples: 4096, 512KiB, 1.5MiB, 100MB, 2GB)"));
}

// Bytes per unit, or nullopt when `unit` is not one of the grammar's units.
std::optional<int64_t> UnitMultiplier(const std::string& unit) {
  if (unit.empty() || unit == "B") return 1;
  int power = 0;
  switch (unit[0]) {
    case 'k': case 'K': power = 1; break;
    case 'm': case 'M': power = 2; break;
    case 'g': case 'G': power = 3; break;
    case 't': case 'T': power = 4; break;
    default: return std::nullopt;
  }
  const std::string rest = unit.substr(1);
  bool binary = true;  // "K" alone is binary.
  if (rest == "" || rest == "i" || rest == "iB") {
    binary = true;
  } else if (rest == "B") {
    binary = false;
  } else {
    return std::nullopt;
  }
  int64_t multiplier = 1;
  for (int i = 0; i < power; ++i) multiplier *= binary ? 1024 : 1000;
  return multiplier;
}

}  // namespace

absl::StatusOr<int64_t> ParseByteSize(const std::string& text) {
  if (text.empty()) return SizeError(text, "it is empty");
  size_t pos = 0;
  __int128 integer_part = 0;
  size_t integer_digits = 0;
  while (pos < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[pos]))) {
    integer_part = integer_part * 10 + (text[pos] - '0');
    if (integer_part > std::numeric_limits<int64_t>::max()) return SizeError(text, "it is too large");
    ++pos;
    ++integer_digits;
  }
  __int128 fraction = 0;
  __int128 fraction_scale = 1;
  size_t fraction_digits = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[pos]))) {
      if (++fraction_digits > kMaxFractionDigits) return SizeError(text, "too many decimals");
      fraction = fraction * 10 + (text[pos] - '0');
      fraction_scale *= 10;
      ++pos;
    }
    if (fraction_digits == 0) return SizeError(text, "a digit must follow the decimal point");
  }
  if (integer_digits == 0) {
    if (pos < text.size() && text[pos] == '-') return SizeError(text, "it is negative");
    return SizeError(text, "it must start with a number");
  }
  if (pos < text.size() && text[pos] == ' ') ++pos;
  const std::string unit = text.substr(pos);
  const std::optional<int64_t> multiplier = UnitMultiplier(unit);
  if (!multiplier.has_value()) {
    if (!unit.empty() && unit.back() == 'b') return SizeError(text, "a lower-case b means bits; write B for bytes");
    return SizeError(text, absl::StrCat("unknown unit '", unit, "' (use B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, GB, TB)"));
  }
  if (*multiplier == 1 && fraction_digits > 0 && fraction != 0) {
    return SizeError(text, "a byte count must be whole");
  }
  const __int128 scaled = (integer_part * fraction_scale + fraction) * *multiplier / fraction_scale;
  if (scaled > std::numeric_limits<int64_t>::max()) return SizeError(text, "it is too large");
  return static_cast<int64_t>(scaled);
}

absl::StatusOr<GrowthThreshold> ParseGrowthThreshold(const std::string& text) {
  if (!text.empty() && text.back() == '%') {
    const std::string number = text.substr(0, text.size() - 1);
    double percent = 0;
    const bool plain = !number.empty() && absl::ascii_isdigit(static_cast<unsigned char>(number[0]));
    if (!plain || !absl::SimpleAtod(number, &percent) || !std::isfinite(percent) || percent < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not a threshold: a percentage must be a non-negative number, as in 5%"));
    }
    return GrowthThreshold{.percent = percent};
  }
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a threshold: use a percentage such as 5% or a size such as 1MiB"));
  }
  return GrowthThreshold{.bytes = *bytes};
}

}  // namespace footprint
