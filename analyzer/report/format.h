// Bytes and counts as people read them: the one place every report, budget
// line and diff formats a figure, so that "1.50 MiB" means the same thing in
// the text, Markdown and HTML reports and in the CLI's messages.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_FORMAT_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_FORMAT_H_

#include <cstdint>
#include <string>

namespace footprint {

// "1.5 MiB", "512 B", "3.00 GiB": binary units with three significant digits.
std::string HumanBytes(int64_t bytes);

// 1234567 -> "1,234,567".
std::string WithThousands(int64_t value);

// "1.50 MiB (1,572,864 bytes)": the rounded figure and the exact one.
std::string HumanAndExactBytes(int64_t bytes);

// A figure that is known (HumanBytes) or, when some tensor it sums is
// unsized, the lower bound it is: ">= 1.50 MiB", and "unknown" rather than
// "0 B" when nothing of it is sized.
std::string HumanBytesOrBound(int64_t bytes, bool known);
// The same for the exact count: "1,572,864", ">= 1,572,864", "unknown".
std::string ExactBytesOrBound(int64_t bytes, bool known);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_FORMAT_H_
