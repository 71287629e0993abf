#include "planner/csv.h"

#include <array>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace footprint::planner {
namespace {

enum Column { kId, kLower, kUpper, kSize, kAlignment, kOffset, kColumnCount };
constexpr std::array<absl::string_view, kColumnCount> kColumnNames = {"id",   "lower",     "upper",
                                                                      "size", "alignment", "offset"};

absl::Status LineError(int line, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", problem));
}

}  // namespace

absl::StatusOr<Problem> ParseProblemCsv(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  std::array<int, kColumnCount> position;
  position.fill(-1);
  int field_count = 0;
  bool have_header = false;
  Problem problem;
  absl::flat_hash_set<std::string> ids;
  for (size_t index = 0; index < lines.size(); ++index) {
    const int line = static_cast<int>(index) + 1;
    const absl::string_view content = absl::StripAsciiWhitespace(lines[index]);
    if (content.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(content, ',');
    for (absl::string_view& field : fields) field = absl::StripAsciiWhitespace(field);
    if (!have_header) {
      for (size_t f = 0; f < fields.size(); ++f) {
        int column = -1;
        for (int c = 0; c < kColumnCount; ++c) {
          if (absl::AsciiStrToLower(fields[f]) == kColumnNames[c]) column = c;
        }
        if (column < 0) return LineError(line, absl::StrCat("unknown column '", fields[f], "' in the header"));
        if (position[column] >= 0) return LineError(line, absl::StrCat("column '", fields[f], "' appears twice"));
        position[column] = static_cast<int>(f);
      }
      for (int c : {kId, kLower, kUpper, kSize}) {
        if (position[c] < 0) {
          return LineError(line, absl::StrCat("the header lacks the '", kColumnNames[c],
                                              "' column (expected id,lower,upper,size[,alignment][,offset])"));
        }
      }
      field_count = static_cast<int>(fields.size());
      have_header = true;
      continue;
    }
    if (static_cast<int>(fields.size()) != field_count) {
      return LineError(line, absl::StrCat("expected ", field_count, " fields, found ", fields.size()));
    }
    auto number = [&](Column column, int64_t* value) -> absl::Status {
      const absl::string_view field = fields[position[column]];
      if (!absl::SimpleAtoi(field, value)) {
        return LineError(line, absl::StrCat(kColumnNames[column], " is not an integer ('", field, "')"));
      }
      return absl::OkStatus();
    };
    Buffer buffer;
    buffer.id = std::string(fields[position[kId]]);
    if (buffer.id.empty()) return LineError(line, "empty id");
    int64_t lower = 0, upper = 0;
    if (absl::Status s = number(kLower, &lower); !s.ok()) return s;
    if (absl::Status s = number(kUpper, &upper); !s.ok()) return s;
    if (absl::Status s = number(kSize, &buffer.size); !s.ok()) return s;
    if (lower < 0) return LineError(line, absl::StrCat("lower is negative (", lower, ")"));
    if (upper <= lower) {
      return LineError(line, absl::StrCat("upper (", upper, ") must be greater than lower (", lower, ")"));
    }
    if (buffer.size < 0) return LineError(line, absl::StrCat("size is negative (", buffer.size, ")"));
    buffer.lifespan = {.first = lower, .last = upper - 1};
    if (position[kAlignment] >= 0) {
      if (absl::Status s = number(kAlignment, &buffer.alignment); !s.ok()) return s;
      if (buffer.alignment < 1) return LineError(line, absl::StrCat("alignment must be >= 1 (", buffer.alignment, ")"));
    }
    if (position[kOffset] >= 0 && !fields[position[kOffset]].empty()) {
      int64_t offset = 0;
      if (absl::Status s = number(kOffset, &offset); !s.ok()) return s;
      if (offset < 0) return LineError(line, absl::StrCat("offset is negative (", offset, ")"));
      if (offset % buffer.alignment != 0) {
        return LineError(line, absl::StrCat("offset ", offset, " is not a multiple of alignment ", buffer.alignment));
      }
      buffer.pinned_offset = offset;
    }
    if (!ids.insert(buffer.id).second) return LineError(line, absl::StrCat("duplicate id '", buffer.id, "'"));
    problem.buffers.push_back(std::move(buffer));
  }
  if (!have_header) return LineError(1, "empty file (expected the header id,lower,upper,size)");
  return problem;
}

std::string WriteSolutionCsv(const Problem& problem, const Solution& solution) {
  bool aligned = false;
  for (const Buffer& buffer : problem.buffers) aligned = aligned || buffer.alignment != 1;
  std::string out = aligned ? "id,lower,upper,size,alignment,offset\n" : "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const Buffer& buffer = problem.buffers[i];
    absl::StrAppend(&out, buffer.id, ",", buffer.lifespan.first, ",", buffer.lifespan.last + 1, ",", buffer.size);
    if (aligned) absl::StrAppend(&out, ",", buffer.alignment);
    absl::StrAppend(&out, ",", i < solution.offsets.size() ? solution.offsets[i] : 0, "\n");
  }
  return out;
}

}  // namespace footprint::planner
