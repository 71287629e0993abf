#include "devices/device_catalog.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/scratch_dir.h"

namespace footprint::devices {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

// A profile file in the test's temporary directory.
std::string WriteProfile(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::path(footprint::testing::ScratchDir()) / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(DeviceCatalogTest, EveryBuiltinProfileParsesPassesChecksAndCitesSources) {
  absl::StatusOr<std::vector<DeviceProfile>> devices = LoadBuiltinDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_GE(devices->size(), 12u);
  std::set<std::string> names;
  for (const DeviceProfile& profile : *devices) {
    SCOPED_TRACE(profile.name());
    EXPECT_TRUE(CheckDeviceProfile(profile).ok()) << CheckDeviceProfile(profile);
    EXPECT_TRUE(names.insert(profile.name()).second) << "duplicate name";
    EXPECT_FALSE(profile.description().empty());
    EXPECT_GE(profile.sources_size(), 1);
    for (const std::string& source : profile.sources()) EXPECT_GE(source.size(), 20u) << source;
    for (const Memory& memory : profile.memory()) EXPECT_FALSE(memory.description().empty()) << memory.name();
  }
  EXPECT_EQ(devices->front().name(), kDefaultDeviceName);
}

TEST(DeviceCatalogTest, AllDevicesMatchesTheCheckedLoad) {
  absl::StatusOr<std::vector<DeviceProfile>> devices = LoadBuiltinDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(AllDevices().size(), devices->size());
  for (size_t i = 0; i < devices->size(); ++i) EXPECT_EQ(AllDevices()[i].name(), (*devices)[i].name());
}

TEST(DeviceCatalogTest, TheIssueDevicesArePresentWithTheirKeyFigures) {
  absl::StatusOr<DeviceProfile> cpu = FindDevice("generic-cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->alignment_bytes(), 64);
  EXPECT_FALSE(cpu->memory(0).has_capacity_bytes());
  EXPECT_TRUE(cpu->allow_inplace());

  absl::StatusOr<DeviceProfile> stm32 = FindDevice("stm32h743");
  ASSERT_TRUE(stm32.ok());
  int64_t largest_contiguous = 0, ram = 0, flash = 0;
  for (const Memory& memory : stm32->memory()) {
    if (memory.holds_activations()) {
      largest_contiguous = std::max(largest_contiguous, memory.contiguous_bytes());
      ram += memory.capacity_bytes();
    }
    if (memory.holds_weights()) flash += memory.capacity_bytes();
  }
  EXPECT_EQ(largest_contiguous, 512 * 1024);
  EXPECT_EQ(flash, 2 * 1024 * 1024);
  EXPECT_EQ(ram, 992 * 1024);  // AXI 512 + SRAM1-3 288 + DTCM 128 + SRAM4 64 KiB (ITCM is for code).

  absl::StatusOr<DeviceProfile> tpu = FindDevice("tpu-v4");
  ASSERT_TRUE(tpu.ok());
  EXPECT_EQ(tpu->memory(0).capacity_bytes(), int64_t{32} << 30);
  EXPECT_FALSE(tpu->has_alignment_bytes());  // Not published: unset, never invented.

  for (const char* name : {"h100-80gb", "jetson-orin-nano-8gb", "webgpu", "vulkan", "edge-tpu", "ethos-u55",
                           "ethos-u65", "stm32f407", "esp32-s3", "raspberry-pi-5", "hexagon-npu"}) {
    EXPECT_TRUE(FindDevice(name).ok()) << name;
  }
  EXPECT_EQ(FindDevice("h100-80gb")->alignment_bytes(), 256);
  EXPECT_EQ(FindDevice("webgpu")->alignment_bytes(), 256);
  EXPECT_EQ(FindDevice("ethos-u55")->alignment_bytes(), 16);
  EXPECT_EQ(FindDevice("edge-tpu")->memory(0).capacity_bytes(), 8 << 20);
}

TEST(DeviceCatalogTest, UnknownNameIsNotFoundAndListsTheKnownNames) {
  absl::StatusOr<DeviceProfile> device = FindDevice("stm32h7");
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(device.status()), StartsWith("unknown device `stm32h7`; known devices: generic-cpu, "));
  EXPECT_THAT(Message(device.status()), HasSubstr("stm32h743"));
}

TEST(DeviceCatalogTest, TierAlignmentFallsBackFromTierToProfileToDefault) {
  DeviceProfile profile;
  Memory* memory = profile.add_memory();
  EXPECT_EQ(TierAlignment(profile, *memory), 64);
  profile.set_alignment_bytes(16);
  EXPECT_EQ(TierAlignment(profile, *memory), 16);
  memory->set_alignment_bytes(4096);
  EXPECT_EQ(TierAlignment(profile, *memory), 4096);
}

constexpr char kTwoTier[] = R"pb(name: "two-tier"
description: "256 KiB SRAM + 1 GiB DRAM"
alignment_bytes: 256
memory { name: "sram" capacity_bytes: 262144 holds_activations: true }
memory { name: "dram" capacity_bytes: 1073741824 holds_weights: true holds_activations: true }
)pb";

TEST(LoadDeviceFileTest, LoadsAValidCustomProfile) {
  const std::string path = WriteProfile("two_tier.textproto", kTwoTier);
  absl::StatusOr<DeviceProfile> profile = LoadDeviceFile(path);
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->name(), "two-tier");
  ASSERT_EQ(profile->memory_size(), 2);
  EXPECT_EQ(profile->memory(1).capacity_bytes(), int64_t{1} << 30);
  EXPECT_TRUE(profile->allow_inplace());  // The default.
}

TEST(LoadDeviceFileTest, SyntaxErrorNamesFileLineAndColumn) {
  const std::string path = WriteProfile("typo.textproto", "name: \"board\"\nmemory {\n  capacty_bytes: 10\n}\n");
  absl::StatusOr<DeviceProfile> profile = LoadDeviceFile(path);
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(profile.status()), StartsWith(path + ":3:"));
  EXPECT_THAT(Message(profile.status()), HasSubstr("capacty_bytes"));
}

TEST(LoadDeviceFileTest, WrongValueTypeNamesItsLine) {
  const std::string path =
      WriteProfile("type.textproto", "name: \"board\"\nalignment_bytes: 16\nmemory {\n  capacity_bytes: \"big\"\n}\n");
  absl::StatusOr<DeviceProfile> profile = LoadDeviceFile(path);
  ASSERT_FALSE(profile.ok());
  EXPECT_THAT(Message(profile.status()), StartsWith(path + ":4:"));
}

TEST(LoadDeviceFileTest, SemanticErrorsPointAtTheOffendingField) {
  struct Case {
    std::string text;
    std::string prefix;   // After the path.
    std::string message;  // A part of the message.
  };
  const std::vector<Case> cases = {
      {.text = "name: \"b\"\nalignment_bytes: 48\nmemory { name: \"ram\" holds_activations: true }\n",
       .prefix = ":2:1: ",
       .message = "alignment_bytes must be a power of two >= 1, not 48"},
      {.text = "name: \"b\"\nmemory {\n  name: \"sram\"\n  capacity_bytes: 0\n  holds_activations: true\n}\n",
       .prefix = ":4:3: ",
       .message = "memory `sram`: capacity_bytes must be > 0, not 0"},
      {.text = "name: \"b\"\nmemory {\n  name: \"sram\"\n  capacity_bytes: 100\n  contiguous_bytes: 200\n"
               "  holds_activations: true\n}\n",
       .prefix = ":5:3: ",
       .message = "contiguous_bytes (200) exceeds capacity_bytes (100)"},
      {.text = "name: \"b\"\nmemory { name: \"flash\" capacity_bytes: 100 holds_weights: true }\n",
       .prefix = ":2:1: ",
       .message = "no memory tier has `holds_activations: true`"},
      {.text = "name: \"b\"\nmemory { name: \"a\" holds_activations: true }\nmemory { name: \"a\" holds_weights: true }\n",
       .prefix = ":3:10: ",
       .message = "memory `a` is defined twice"},
      {.text = "description: \"no name\"\nmemory { name: \"a\" holds_activations: true }\n",
       .prefix = ":2:1: ",
       .message = "the profile has no `name`"},
      {.text = "name: \"b\"\n", .prefix = ":1:1: ", .message = "the profile has no `memory` tier"},
      {.text = "name: \"b\"\nmemory { name: \"a\" alignment_bytes: 3 holds_activations: true }\n",
       .prefix = ":2:20: ",
       .message = "memory `a`: alignment_bytes must be a power of two"},
      {.text = "name: \"b c\"\nmemory { name: \"a\" holds_activations: true }\n",
       .prefix = ":1:1: ",
       .message = "name `b c` must be letters"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].text);
    const std::string path = WriteProfile("semantic_" + std::to_string(i) + ".textproto", cases[i].text);
    absl::StatusOr<DeviceProfile> profile = LoadDeviceFile(path);
    ASSERT_FALSE(profile.ok());
    EXPECT_EQ(profile.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(profile.status()), StartsWith(path + cases[i].prefix));
    EXPECT_THAT(Message(profile.status()), HasSubstr(cases[i].message));
    EXPECT_FALSE(CheckDeviceProfile(ParseDeviceProfile("", "x").value_or(DeviceProfile())).ok());
  }
}

TEST(LoadDeviceFileTest, MissingFileAndDirectoryAreClearErrors) {
  absl::StatusOr<DeviceProfile> missing = LoadDeviceFile("/nonexistent/board.textproto");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(missing.status()), "/nonexistent/board.textproto: no such file");

  absl::StatusOr<DeviceProfile> directory = LoadDeviceFile(footprint::testing::ScratchDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(Message(directory.status()), HasSubstr("is a directory"));
}

}  // namespace
}  // namespace footprint::devices
