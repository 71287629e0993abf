#include "analyzer/loader/model_checks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/onnx_fields.h"

namespace footprint {
namespace {

using wire::Field;
using wire::Reader;
using wire::Span;
using wire::WireType;

// Debian's Abseil has its own string_view type.
absl::string_view Av(std::string_view view) { return absl::string_view(view.data(), view.size()); }

std::string Quoted(std::string_view name) { return absl::StrCat("'", absl::CHexEscape(Av(name)), "'"); }

}  // namespace

absl::Status TensorChecker::CheckExternal(StoredTensor& tensor, const std::vector<Span>& entries,
                                          int64_t expected_bytes) {
  std::optional<std::string_view> location;
  int64_t offset = 0;
  int64_t length = -1;
  for (Span entry : entries) {
    std::string_view key, value;
    Reader reader(source_, entry);
    Field f;
    while (reader.Next(f)) {
      if (f.type != WireType::kLengthDelimited) continue;
      if (f.number == field::kEntryKey) key = source_.Bytes(f.payload);
      if (f.number == field::kEntryValue) value = source_.Bytes(f.payload);
    }
    if (!reader.ok()) return reader.status();
    if (key == "location") {
      location = value;
    } else if (key == "offset" || key == "length") {
      int64_t number = 0;
      if (!absl::SimpleAtoi(Av(value), &number) || number < 0) {
        return absl::InvalidArgumentError(absl::StrCat("tensor ", Quoted(tensor.name), ": external data ",
                                                       Av(key), " ", Quoted(value),
                                                       " is not a non-negative integer"));
      }
      (key == "offset" ? offset : length) = number;
    }
  }
  if (!location || location->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", Quoted(tensor.name), ": external data has no location"));
  }
  absl::StatusOr<ExternalFile> file = checker_.Check(tensor.name, *location);
  if (!file.ok()) return file.status();
  tensor.external_path = file->path;

  const int64_t extent = length >= 0 ? length : expected_bytes;
  if (length >= 0) {
    tensor.stored_bytes = length;
  } else if (file->found && file->size >= offset) {
    tensor.stored_bytes = file->size - offset;  // ONNX reads to the end of the file.
  }
  if (length >= 0 && expected_bytes >= 0 && length != expected_bytes) {
    warnings_.push_back(absl::StrCat("tensor ", Quoted(tensor.name), ": external data length ", length,
                                     " differs from its dims and type, ", expected_bytes, " bytes"));
  }
  const int64_t needed = extent >= 0 && offset <= INT64_MAX - extent ? offset + extent : offset;
  if (file->found && file->size >= needed) {
    tensor.external_present = true;
    return absl::OkStatus();
  }
  const std::string key(*location);
  auto [it, inserted] = findings_.try_emplace(key);
  ExternalFinding& finding = it->second;
  if (inserted) {
    finding_order_.push_back(key);
    finding.location = key;
    finding.first_tensor = tensor.name;
    finding.problem = file->found ? "" : file->problem;
    finding.file_size = file->size;
    finding.needed = needed;
  }
  ++finding.tensors;
  return absl::OkStatus();
}

void TensorChecker::WarnInlineBytesDiffer(const StoredTensor& tensor, int64_t expected_bytes) {
  warnings_.push_back(absl::StrCat("tensor ", Quoted(tensor.name), " holds ", tensor.stored_bytes,
                                   " bytes of values, but its dims and type say ", expected_bytes));
}

void TensorChecker::FinishWarnings() {
  for (const std::string& location : finding_order_) {
    const ExternalFinding& finding = findings_[location];
    const std::string others =
        finding.tensors > 1 ? absl::StrCat(" (and ", finding.tensors - 1, " more tensors)") : "";
    if (!finding.problem.empty()) {
      warnings_.push_back(absl::StrCat("tensor ", Quoted(finding.first_tensor), others,
                                       ": external data file ", Quoted(location),
                                       " is missing (", finding.problem, ")"));
    } else {
      warnings_.push_back(absl::StrCat(
          "tensor ", Quoted(finding.first_tensor), others, ": external data file ", Quoted(location),
          " has ", finding.file_size, " bytes, fewer than offset + length = ", finding.needed));
    }
  }
}

}  // namespace footprint
