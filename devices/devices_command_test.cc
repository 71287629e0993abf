#include "devices/devices_command.h"

#include <sstream>
#include <string>
#include <vector>

#include "devices/device_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint::devices {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct CommandRun {
  int code;
  std::string out;
  std::string err;
};
CommandRun RunCommand(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunDevicesCommand(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(DevicesCommandTest, JsonListsEveryProfileWithItsTiersAndSources) {
  const CommandRun run = RunCommand({"--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const nlohmann::json list = nlohmann::json::parse(run.out);
  ASSERT_TRUE(list.is_array());
  ASSERT_EQ(list.size(), AllDevices().size());
  for (const nlohmann::json& device : list) {
    SCOPED_TRACE(device.dump());
    EXPECT_TRUE(device["name"].is_string());
    EXPECT_TRUE(device["description"].is_string());
    EXPECT_TRUE(device["alignment_bytes"].is_number_integer());
    EXPECT_TRUE(device["alignment_is_default"].is_boolean());
    EXPECT_TRUE(device["allow_inplace"].is_boolean());
    ASSERT_TRUE(device["memory"].is_array());
    EXPECT_GE(device["memory"].size(), 1u);
    ASSERT_TRUE(device["sources"].is_array());
    EXPECT_GE(device["sources"].size(), 1u);
  }
  EXPECT_EQ(list[0]["name"], "generic-cpu");
  EXPECT_TRUE(list[0]["memory"][0]["capacity_bytes"].is_null());  // Unknown is null, not 0.

  const auto stm32 = std::find_if(list.begin(), list.end(), [](const nlohmann::json& d) { return d["name"] == "stm32h743"; });
  ASSERT_NE(stm32, list.end());
  EXPECT_EQ((*stm32)["alignment_bytes"], 16);
  EXPECT_EQ((*stm32)["memory"][0]["name"], "axi-sram");
  EXPECT_EQ((*stm32)["memory"][0]["capacity_bytes"], 524288);
  EXPECT_EQ((*stm32)["memory"][0]["contiguous_bytes"], 524288);
  EXPECT_EQ((*stm32)["memory"][0]["holds_activations"], true);
  EXPECT_EQ((*stm32)["memory"][0]["holds_weights"], false);

  const auto tpu = std::find_if(list.begin(), list.end(), [](const nlohmann::json& d) { return d["name"] == "tpu-v4"; });
  ASSERT_NE(tpu, list.end());
  EXPECT_EQ((*tpu)["alignment_bytes"], 64);
  EXPECT_EQ((*tpu)["alignment_is_default"], true);
}

TEST(DevicesCommandTest, TextIsTheDefaultAndNamesEveryDevice) {
  const CommandRun run = RunCommand({});
  ASSERT_EQ(run.code, 0);
  EXPECT_THAT(run.out, StartsWith("generic-cpu (default)\n"));
  for (const DeviceProfile& profile : AllDevices()) EXPECT_THAT("\n" + run.out, HasSubstr("\n" + profile.name()));
  EXPECT_THAT(run.out, HasSubstr("  tier axi-sram: capacity 512 KiB, contiguous 512 KiB, alignment 16 B, holds activations\n"));
  EXPECT_THAT(run.out, HasSubstr("  tier ram: capacity -, contiguous -, alignment 64 B, holds weights + activations\n"));
  EXPECT_EQ(RunCommand({"--format=text"}).out, run.out);
}

TEST(DevicesCommandTest, BadArgumentsExitTwoWithOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--frmat", "json"}, {"--format", "xml"}, {"--format"}, {"stm32h743"}}) {
    const CommandRun run = RunCommand(args);
    EXPECT_EQ(run.code, 2) << args[0];
    EXPECT_EQ(run.out, "");
    ASSERT_FALSE(run.err.empty());
    EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << run.err;  // One line.
    EXPECT_THAT(run.err, StartsWith("onnx-footprint devices: "));
  }
}

TEST(DevicesCommandTest, ProfileToJsonRoundTripsThroughAParser) {
  const nlohmann::json device = nlohmann::json::parse(DeviceProfileToJson(*FindDevice("ethos-u55")));
  EXPECT_EQ(device["name"], "ethos-u55");
  EXPECT_EQ(device["memory"].size(), 2u);
  EXPECT_EQ(device["memory"][1]["name"], "flash");
  EXPECT_EQ(device["memory"][1]["holds_weights"], true);
}

}  // namespace
}  // namespace footprint::devices
