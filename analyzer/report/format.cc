#include "analyzer/report/format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace footprint {

std::string HumanBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (value >= 100) return absl::StrFormat("%.0f %s", value, kUnits[unit]);
  if (value >= 10) return absl::StrFormat("%.1f %s", value, kUnits[unit]);
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

std::string WithThousands(int64_t value) {
  // Built forwards rather than with insert(), which g++ 12 misreads (-Wrestrict).
  std::string digits = absl::StrCat(value);
  std::string out;
  size_t start = 0;
  if (value < 0) {
    out.push_back('-');
    start = 1;
  }
  for (size_t i = start; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string HumanAndExactBytes(int64_t bytes) {
  return absl::StrCat(HumanBytes(bytes), " (", WithThousands(bytes), " bytes)");
}

std::string HumanBytesOrBound(int64_t bytes, bool known) {
  if (known) return HumanBytes(bytes);
  return bytes == 0 ? "unknown" : absl::StrCat(">= ", HumanBytes(bytes));
}

std::string ExactBytesOrBound(int64_t bytes, bool known) {
  if (known) return WithThousands(bytes);
  return bytes == 0 ? "unknown" : absl::StrCat(">= ", WithThousands(bytes));
}

}  // namespace footprint
