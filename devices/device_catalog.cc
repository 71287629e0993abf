#include "devices/device_catalog.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/embedded_profiles.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace footprint::devices {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Keeps the first syntax error: one line is what the CLI prints.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (!first_.has_value()) first_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  const std::optional<std::string>& first() const { return first_; }

 private:
  std::optional<std::string> first_;
};

bool IsPowerOfTwo(int64_t value) { return value >= 1 && (value & (value - 1)) == 0; }

bool IsValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// A semantic problem and where it is: `field` of the profile (memory_index < 0)
// or of memory[memory_index]; a null field points at the memory block itself.
struct Issue {
  std::string message;
  int memory_index = -1;
  const FieldDescriptor* field = nullptr;
};

const FieldDescriptor* ProfileField(const char* name) {
  return DeviceProfile::descriptor()->FindFieldByName(name);
}
const FieldDescriptor* MemoryField(const char* name) { return Memory::descriptor()->FindFieldByName(name); }

std::optional<Issue> FindIssue(const DeviceProfile& profile) {
  if (!profile.has_name() || !IsValidName(profile.name())) {
    return Issue{.message = profile.has_name() ? absl::StrCat("name `", profile.name(),
                                                              "` must be letters, digits, '-', '_' or '.'")
                                               : "the profile has no `name`",
                 .field = profile.has_name() ? ProfileField("name") : nullptr};
  }
  if (profile.has_alignment_bytes() && !IsPowerOfTwo(profile.alignment_bytes())) {
    return Issue{.message = absl::StrCat("alignment_bytes must be a power of two >= 1, not ",
                                         profile.alignment_bytes()),
                 .field = ProfileField("alignment_bytes")};
  }
  if (profile.memory_size() == 0) {
    return Issue{.message = "the profile has no `memory` tier"};
  }
  std::set<std::string> names;
  bool any_activation_tier = false;
  for (int i = 0; i < profile.memory_size(); ++i) {
    const Memory& memory = profile.memory(i);
    const std::string label = absl::StrCat("memory `", memory.name(), "`");
    if (!memory.has_name() || !IsValidName(memory.name())) {
      return Issue{.message = memory.has_name()
                                  ? absl::StrCat(label, ": name must be letters, digits, '-', '_' or '.'")
                                  : absl::StrCat("memory #", i + 1, " has no `name`"),
                   .memory_index = i,
                   .field = memory.has_name() ? MemoryField("name") : nullptr};
    }
    if (!names.insert(memory.name()).second) {
      return Issue{.message = absl::StrCat(label, " is defined twice"), .memory_index = i,
                   .field = MemoryField("name")};
    }
    if (memory.has_capacity_bytes() && memory.capacity_bytes() <= 0) {
      return Issue{.message = absl::StrCat(label, ": capacity_bytes must be > 0, not ", memory.capacity_bytes()),
                   .memory_index = i, .field = MemoryField("capacity_bytes")};
    }
    if (memory.has_contiguous_bytes() && memory.contiguous_bytes() <= 0) {
      return Issue{.message = absl::StrCat(label, ": contiguous_bytes must be > 0, not ", memory.contiguous_bytes()),
                   .memory_index = i, .field = MemoryField("contiguous_bytes")};
    }
    if (memory.has_contiguous_bytes() && memory.has_capacity_bytes() &&
        memory.contiguous_bytes() > memory.capacity_bytes()) {
      return Issue{.message = absl::StrCat(label, ": contiguous_bytes (", memory.contiguous_bytes(),
                                           ") exceeds capacity_bytes (", memory.capacity_bytes(), ")"),
                   .memory_index = i, .field = MemoryField("contiguous_bytes")};
    }
    if (memory.has_alignment_bytes() && !IsPowerOfTwo(memory.alignment_bytes())) {
      return Issue{.message = absl::StrCat(label, ": alignment_bytes must be a power of two >= 1, not ",
                                           memory.alignment_bytes()),
                   .memory_index = i, .field = MemoryField("alignment_bytes")};
    }
    if (!memory.holds_weights() && !memory.holds_activations()) {
      return Issue{.message = absl::StrCat(label, " holds neither weights nor activations"), .memory_index = i};
    }
    any_activation_tier = any_activation_tier || memory.holds_activations();
  }
  if (!any_activation_tier) {
    return Issue{.message = "no memory tier has `holds_activations: true`"};
  }
  return std::nullopt;
}

// "LINE:COL" of the issue in the parsed text. An issue of the whole profile
// (no name, no activation tier) points at its first memory block, else at 1:1.
std::string Locate(const Issue& issue, const TextFormat::ParseInfoTree& tree) {
  const FieldDescriptor* memory_field = ProfileField("memory");
  TextFormat::ParseLocation location;
  if (issue.memory_index >= 0) {
    if (issue.field != nullptr) {
      const TextFormat::ParseInfoTree* nested = tree.GetTreeForNested(memory_field, issue.memory_index);
      if (nested != nullptr) location = nested->GetLocation(issue.field, -1);
    }
    if (location.line < 0) location = tree.GetLocation(memory_field, issue.memory_index);
  } else if (issue.field != nullptr) {
    location = tree.GetLocation(issue.field, -1);
  } else {
    location = tree.GetLocation(memory_field, 0);
  }
  if (location.line < 0) location = TextFormat::ParseLocation(0, 0);
  return absl::StrCat(location.line + 1, ":", location.column + 1);
}

}  // namespace

absl::Status CheckDeviceProfile(const DeviceProfile& profile) {
  if (std::optional<Issue> issue = FindIssue(profile)) return absl::InvalidArgumentError(issue->message);
  return absl::OkStatus();
}

absl::StatusOr<DeviceProfile> ParseDeviceProfile(std::string_view text, std::string_view path) {
  DeviceProfile profile;
  FirstErrorCollector errors;
  TextFormat::ParseInfoTree tree;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  const bool parsed = parser.ParseFromString(std::string(text), &profile);
  if (!parsed || errors.first().has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(path), ":", errors.first().value_or("1:1: not a valid device profile")));
  }
  if (std::optional<Issue> issue = FindIssue(profile)) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(path), ":", Locate(*issue, tree), ": ", issue->message));
  }
  return profile;
}

absl::StatusOr<DeviceProfile> LoadDeviceFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not a device profile"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read the file"));
  return ParseDeviceProfile(text.str(), path);
}

absl::StatusOr<std::vector<DeviceProfile>> LoadBuiltinDevices() {
  std::vector<DeviceProfile> devices;
  std::set<std::string> names;
  for (const EmbeddedProfile& embedded : EmbeddedProfiles()) {
    absl::StatusOr<DeviceProfile> profile = ParseDeviceProfile(embedded.text, embedded.path);
    if (!profile.ok()) return profile.status();
    if (!names.insert(profile->name()).second) {
      return absl::InternalError(absl::StrCat(std::string(embedded.path), ": device name `", profile->name(),
                                              "` is used by another built-in profile"));
    }
    devices.push_back(*std::move(profile));
  }
  return devices;
}

namespace {
const std::vector<DeviceProfile>& Catalog() {
  static const std::vector<DeviceProfile>* const catalog = [] {
    absl::StatusOr<std::vector<DeviceProfile>> devices = LoadBuiltinDevices();
    if (!devices.ok()) {
      std::fprintf(stderr, "onnx-footprint: broken built-in device profile: %s\n",
                   std::string(devices.status().message()).c_str());
      std::abort();
    }
    return new std::vector<DeviceProfile>(*std::move(devices));
  }();
  return *catalog;
}
}  // namespace

std::vector<DeviceProfile> AllDevices() { return Catalog(); }

absl::StatusOr<DeviceProfile> FindDevice(std::string_view name) {
  std::vector<std::string> known;
  for (const DeviceProfile& profile : Catalog()) {
    if (profile.name() == name) return profile;
    known.push_back(profile.name());
  }
  return absl::NotFoundError(
      absl::StrCat("unknown device `", std::string(name), "`; known devices: ", absl::StrJoin(known, ", ")));
}

int64_t TierAlignment(const DeviceProfile& profile, const Memory& memory) {
  if (memory.has_alignment_bytes()) return memory.alignment_bytes();
  if (profile.has_alignment_bytes()) return profile.alignment_bytes();
  return kDefaultAlignmentBytes;
}

}  // namespace footprint::devices
