// JsonWriter against nlohmann's dump(2, ' ', false, replace): the reports
// promise the text they printed before the writer existed, byte for byte.
#include "analyzer/report/json_writer.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

std::string Dump(const Json& value) { return value.dump(2, ' ', false, Json::error_handler_t::replace); }

// Writes `value` through the writer's calls, one per JSON value, never Embed.
void WriteThrough(const Json& value, JsonWriter& json) {
  switch (value.type()) {
    case Json::value_t::object:
      json.BeginObject();
      for (const auto& [key, member] : value.items()) {
        json.Key(key);
        WriteThrough(member, json);
      }
      json.EndObject();
      return;
    case Json::value_t::array:
      json.BeginArray();
      for (const Json& element : value) WriteThrough(element, json);
      json.EndArray();
      return;
    case Json::value_t::string:
      json.String(value.get_ref<const std::string&>());
      return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      json.Int(value.get<int64_t>());
      return;
    case Json::value_t::number_float:
      json.Double(value.get<double>());
      return;
    case Json::value_t::boolean:
      json.Bool(value.get<bool>());
      return;
    default:
      json.Null();
      return;
  }
}

std::string Written(const Json& value) {
  JsonWriter json;
  WriteThrough(value, json);
  return std::move(json).Release();
}

struct WriterCase {
  std::string name;  // What the case covers.
  Json value;        // Written through the writer and dumped by nlohmann.
};

TEST(JsonWriterTest, WritesWhatNlohmannDumps) {
  const std::vector<WriterCase> cases = {
      {.name = "empty object", .value = Json::object()},
      {.name = "empty array", .value = Json::array()},
      {.name = "scalar", .value = 42},
      {.name = "null", .value = nullptr},
      {.name = "flat object",
       .value = {{"name", "conv1"}, {"bytes", 4096}, {"ok", true}, {"offset", nullptr}, {"no", false}}},
      {.name = "nested",
       .value = {{"model", {{"path", "m.onnx"}, {"opsets", {{"ai.onnx", 13}}}}},
                 {"tensors", {{{"shape", {1, 3, "batch", nullptr}}, {"empty", Json::object()}}, Json::array()}},
                 {"deep", {{{{Json::array()}}}}}}},
      {.name = "empty containers inside",
       .value = {{"a", Json::object()}, {"b", Json::array()}, {"c", {Json::object(), Json::array()}}}},
      {.name = "integers",
       .value = {0, -1, 1, 4096, -4096, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                 int64_t{1} << 53, 134144000}},
      {.name = "doubles",
       .value = {0.1, 1e-05, 100.0, 0.0, -0.0, 1.5, 1e300, 8.042e-06, 12.345678901234567, 1.0 / 3.0, -2.5e-7,
                 std::nan(""), std::numeric_limits<double>::infinity()}},
      {.name = "plain and escaped ASCII", .value = {"", "plain", "q\"uote", "back\\slash", "a/b", "<html>&'"}},
      {.name = "control characters",
       .value = {"tab\there", "nl\nx", "cr\rx", "\b\f", std::string("nul\0x", 5), "\x01\x1f", "del\x7f"}},
      {.name = "UTF-8", .value = {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "emoji\xf0\x9f\x98\x80"}},
      {.name = "invalid UTF-8",
       .value = {std::string("x\xff\xfe", 3), "bad\xff\xfe" "ABC", "trunc\xe6\x97x", "\xc3", "\xed\xa0\x80",
                 "\xf4\x90\x80\x80"}},
      {.name = "odd keys",
       .value = {{"", 1}, {"q\"k", 2}, {"tab\tkey", 3}, {"caf\xc3\xa9", 4}, {std::string("bad\xff", 4), 5}}},
  };
  for (const WriterCase& test : cases) {
    EXPECT_EQ(Written(test.value), Dump(test.value)) << test.name;
  }
}

TEST(JsonWriterTest, LaysOutObjectsAndArraysWithTwoSpaces) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a").BeginArray().Int(1).BeginObject().EndObject().EndArray();
  json.Key("b").String("x");
  json.EndObject();
  EXPECT_EQ(json.text(), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x\"\n}");
}

TEST(JsonWriterTest, EmbedsAValueIndentedToItsDepth) {
  const Json diff = {{"old", "a.json"}, {"figures", {{{"figure", "weights_bytes"}, {"delta", -64}}}},
                     {"threshold", nullptr}, {"empty", Json::object()}};
  JsonWriter json;
  json.BeginObject();
  json.Key("first").Int(1);
  json.Key("nested").BeginArray().BeginObject().Key("baseline").Embed(diff).EndObject().Embed(diff).EndArray();
  json.Key("last").Embed(Json::array());
  json.EndObject();
  const Json expected = {{"first", 1}, {"nested", {{{"baseline", diff}}, diff}}, {"last", Json::array()}};
  EXPECT_EQ(json.text(), Dump(expected));
}

TEST(JsonWriterTest, WithASinkHandsOnTheSameTextInPieces) {
  Json tensors = Json::array();
  for (int i = 0; i < 5000; ++i) {
    tensors.push_back({{"name", "block_" + std::to_string(i) + "/matmul:0"}, {"bytes", i * 64}, {"offset", nullptr}});
  }
  const Json report = {{"tensors", tensors}, {"caf\xc3\xa9", {{"empty", Json::object()}}}};
  std::vector<std::string> pieces;
  JsonWriter json([&](std::string_view piece) { pieces.emplace_back(piece); });
  WriteThrough(report, json);
  json.Flush();
  json.Flush();  // Nothing left: no empty piece.
  std::string joined;
  for (const std::string& piece : pieces) {
    EXPECT_FALSE(piece.empty());
    EXPECT_LE(piece.size(), JsonWriter::kSinkPieceBytes);
    joined += piece;
  }
  EXPECT_GT(pieces.size(), 2u) << "a report this size goes out in several pieces";
  EXPECT_EQ(joined, Dump(report));
  EXPECT_TRUE(json.text().empty());
}

TEST(JsonWriterTest, InvalidUtf8IsReplacedNotThrown) {
  JsonWriter json;
  json.BeginArray().String(std::string("x\xff", 2)).EndArray();
  EXPECT_EQ(json.text(), "[\n  \"x\xef\xbf\xbd\"\n]");
}

}  // namespace
}  // namespace footprint
