// LoadModel on damaged input: truncated, random or flipped bytes and bad wire
// data are errors, never crashes; the wire reader over a file that changes.
#include "analyzer/loader/model_loader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>

#include "analyzer/loader/loader_test_util.h"
#include "analyzer/loader/proto_wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(MalformedInputTest, EveryTruncationIsAnErrorOrAValidPrefixNeverACrash) {
  const std::string bytes = SmallModel().SerializeAsString();
  int errors = 0;
  for (size_t size = 0; size < bytes.size(); ++size) {
    absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(std::string_view(bytes).substr(0, size), ".");
    if (!loaded.ok()) {
      ++errors;
      EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(loaded.status().message().find('\n'), std::string_view::npos);
    }
  }
  // The graph is the last field: cutting anywhere inside it loses its end.
  EXPECT_GT(errors, static_cast<int>(bytes.size()) - 20);
}

TEST(MalformedInputTest, TruncatedFileInsideTheWeightsIsAnError) {
  const std::string dir = MakeTempDir();
  const std::string bytes = SmallModel().SerializeAsString();
  WriteFile(dir + "/cut.onnx", bytes.substr(0, bytes.size() / 2));
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/cut.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("length past the end of its message"));
  fs::remove_all(dir);
}

TEST(MalformedInputTest, RandomGarbageIsRefused) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 300; ++trial) {
    std::string garbage(1 + random() % 4096, '\0');
    for (char& c : garbage) c = static_cast<char>(random());
    absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(garbage, ".");
    EXPECT_FALSE(loaded.ok()) << "trial " << trial;
  }
}

TEST(MalformedInputTest, FlippedBytesNeverCrash) {
  // Mutations of a real model reach deep into the walk, where random bytes
  // do not: each load must end in a model or an InvalidArgument.
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_node() = NestedIfModel(2).graph().node(0);
  onnx::ModelProto external = Externalize(model, ".", "", "w.bin");
  const std::string original = external.SerializeAsString();
  std::mt19937 random(777);
  int loaded_ok = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = original;
    for (int flips = 1 + trial % 3; flips > 0; --flips) {
      bytes[random() % bytes.size()] = static_cast<char>(random());
    }
    absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(bytes, ".");
    if (loaded.ok()) {
      ++loaded_ok;
    } else {
      EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << loaded.status();
    }
  }
  EXPECT_GT(loaded_ok, 0);  // Most flips land in names and values and still load.
}

TEST(MalformedInputTest, BadWireDataNamesTheProblem) {
  const struct {
    std::string bytes;
    std::string message;
  } cases[] = {
      {std::string("\x3a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11), "bad or truncated varint at byte 1"},
      {std::string("\x3a\x05\x0a", 3), "length past the end of its message at byte 2"},
      {std::string("\x3b\x00", 2), "protobuf groups are not supported at byte 0"},
      {std::string("\x3f\x00", 2), "invalid wire type at byte 0"},
      {std::string("\x00\x00", 2), "invalid field tag at byte 0"},
      {std::string("\x08\x07", 2), "no graph"},
      {std::string(), "empty file"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(c.bytes, ".");
    ASSERT_FALSE(loaded.ok()) << c.message;
    EXPECT_THAT(loaded.status().message(), HasSubstr(c.message));
  }
}

TEST(WireTest, AReaderOverAFileReadsOnAfterItsBuffersAreReleased) {
  std::string bytes;
  for (int i = 0; i < 2000; ++i) wire::AppendLengthDelimited(bytes, 1 + i % 20, std::string(i % 300, 'a' + i % 26));
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/fields.bin", bytes);
  const int fd = open((dir + "/fields.bin").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  wire::Source source(fd, bytes.size());
  wire::Reader reader(source, {0, bytes.size()});
  wire::Field field;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(reader.Next(field)) << i;
    EXPECT_EQ(field.number, static_cast<uint32_t>(1 + i % 20));
    EXPECT_EQ(source.Bytes(field.payload), std::string(i % 300, 'a' + i % 26));
    if (i % 7 == 0) source.Release();  // The reader's view of the file goes stale.
  }
  EXPECT_FALSE(reader.Next(field));
  EXPECT_TRUE(reader.ok());
  EXPECT_TRUE(source.status().ok());
  close(fd);
  fs::remove_all(dir);
}

TEST(WireTest, AFileShorterThanItWasIsAnErrorNotAShortView) {
  const std::string dir = MakeTempDir();
  WriteFile(dir + "/short.bin", "0123456789");
  const int fd = open((dir + "/short.bin").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  wire::Source source(fd, 100);  // As if another process cut it after fstat.
  EXPECT_EQ(source.Bytes({4, 6}), "456789");
  EXPECT_TRUE(source.status().ok());
  EXPECT_EQ(source.Bytes({8, 12}), std::string("89") + std::string(10, '\0'));
  EXPECT_EQ(source.status().code(), absl::StatusCode::kDataLoss);
  close(fd);
  fs::remove_all(dir);
}

TEST(WireTest, PaddedVarintsDecodeToTheirValue) {
  for (uint32_t value : {0u, 1u, 127u, 128u, 300u, 1u << 28, 0x7fffffffu, 0xffffffffu}) {
    std::string bytes(wire::kPaddedVarint32Size, '\0');
    wire::WritePaddedVarint32(bytes.data(), value);
    size_t pos = 0;
    uint64_t decoded = 0;
    ASSERT_TRUE(wire::DecodeVarint(bytes, pos, decoded)) << value;
    EXPECT_EQ(decoded, value);
    EXPECT_EQ(pos, wire::kPaddedVarint32Size);
  }
}

}  // namespace
}  // namespace footprint
