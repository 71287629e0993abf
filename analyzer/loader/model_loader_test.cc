// LoadModel on well-formed models: what it keeps of the structure and drops
// of the weights, external data, sizes, and ONNX's own test models. Damaged
// input: malformed_input_test.cc.
#include "analyzer/loader/model_loader.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/loader_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(LoadModelTest, DropsLargeDataAndKeepsSmallTensors) {
  const onnx::ModelProto model = SmallModel();
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const onnx::GraphProto& graph = loaded->model->graph();

  const onnx::TensorProto& weight = graph.initializer(0);
  EXPECT_EQ(weight.name(), "W");
  EXPECT_EQ(weight.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_THAT(weight.dims(), ::testing::ElementsAre(64, 64));
  EXPECT_FALSE(weight.has_raw_data());

  const onnx::TensorProto& shape = graph.initializer(1);
  EXPECT_THAT(shape.int64_data(), ::testing::ElementsAre(8, 8));

  const onnx::TensorProto& bias = graph.node(2).attribute(0).t();
  EXPECT_THAT(bias.dims(), ::testing::ElementsAre(8, 8, 32));
  EXPECT_FALSE(bias.has_raw_data());
  EXPECT_EQ(graph.node(3).op_type(), "Add");

  ASSERT_THAT(loaded->tensors, SizeIs(3));
  const StoredTensor* w = FindTensor(*loaded, "W");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->stored_bytes, 64 * 64 * 4);
  EXPECT_TRUE(w->data_dropped);
  const StoredTensor* constant = FindTensor(*loaded, "bias");  // Named after the Constant's output.
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->stored_bytes, 8 * 8 * 32 * 4);
  EXPECT_TRUE(constant->data_dropped);
  const StoredTensor* kept = FindTensor(*loaded, "shape");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->stored_bytes, 16);
  EXPECT_FALSE(kept->data_dropped);
  EXPECT_EQ(loaded->dropped_bytes, (64 * 64 + 8 * 8 * 32) * 4 + 2 * 4 /* raw_data tags and lengths */ - 8);
  EXPECT_THAT(loaded->warnings, SizeIs(0));
}

TEST(LoadModelTest, KeepsEverythingUnderTheThresholdByteForByte) {
  // With nothing to drop, the reduced copy is the model itself.
  const onnx::ModelProto model = SmallModel();
  absl::StatusOr<LoadedModel> loaded =
      LoadModelFromBytes(model.SerializeAsString(), ".", {.keep_data_up_to_bytes = 1 << 20});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->model->SerializeAsString(), model.SerializeAsString());
  EXPECT_EQ(loaded->dropped_bytes, 0);
}

TEST(LoadModelTest, DropsTypedDataAndCountsItsBytes) {
  onnx::ModelProto model = SmallModel();
  onnx::TensorProto* typed = model.mutable_graph()->add_initializer();
  typed->set_name("typed");
  typed->set_data_type(onnx::TensorProto::INT64);
  typed->add_dims(2000);
  for (int i = 0; i < 2000; ++i) typed->add_int64_data(i * 1000);
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->model->graph().initializer(2).int64_data_size(), 0);
  EXPECT_THAT(loaded->model->graph().initializer(2).dims(), ::testing::ElementsAre(2000));
  const StoredTensor* record = FindTensor(*loaded, "typed");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->stored_bytes, 2000 * 8);
  EXPECT_TRUE(record->data_dropped);
}

TEST(LoadModelTest, StripsTensorsInsideSubgraphs) {
  const onnx::ModelProto model = NestedIfModel(2);
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // 2 levels x 2 branches each hold a copy of the innermost graph: 4 Constants.
  ASSERT_THAT(loaded->tensors, SizeIs(4));
  for (const StoredTensor& tensor : loaded->tensors) {
    EXPECT_EQ(tensor.name, "deep_value");
    EXPECT_TRUE(tensor.data_dropped);
    EXPECT_EQ(tensor.stored_bytes, 128 * 128 * 4);
  }
  const onnx::TensorProto& deep =
      loaded->model->graph().node(0).attribute(1).g().node(0).attribute(0).g().node(0).attribute(0).t();
  EXPECT_THAT(deep.dims(), ::testing::ElementsAre(128, 128));
  EXPECT_FALSE(deep.has_raw_data());
  EXPECT_LT(loaded->model->ByteSizeLong(), 2000u);
}

TEST(LoadModelTest, AcceptsSubgraphsUpToTheDepthLimit) {
  // The main graph plus kMaxGraphDepth - 1 nested bodies.
  const onnx::ModelProto chain = NestedIfModel(kMaxGraphDepth - 1, /*both_branches=*/false);
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(chain.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->tensors, SizeIs(1));
  EXPECT_TRUE(loaded->tensors[0].data_dropped);
}

TEST(LoadModelTest, RefusesSubgraphsNestedTooDeep) {
  const onnx::ModelProto chain = NestedIfModel(kMaxGraphDepth, /*both_branches=*/false);
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(chain.SerializeAsString(), ".");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(), HasSubstr("nested deeper than 64"));
}

TEST(LoadModelTest, StripsLoopBodiesFunctionsAndSparseInitializers) {
  onnx::ModelProto model = SmallModel();
  onnx::NodeProto* loop = AddNode(*model.mutable_graph(), "Loop", {"", "cond"}, {"loop_out"});
  onnx::AttributeProto* body = loop->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  *body->mutable_g()->add_initializer() = FloatTensor("loop_weight", {33, 33});

  onnx::FunctionProto* function = model.add_functions();
  function->set_name("F");
  function->set_domain("custom");
  onnx::NodeProto* constant = function->add_node();
  constant->set_op_type("Constant");
  constant->add_output("function_value");
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = FloatTensor("", {40, 40});

  onnx::SparseTensorProto* sparse = model.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(100000);
  *sparse->mutable_values() = FloatTensor("sparse_values", {2000});
  onnx::TensorProto* indices = sparse->mutable_indices();
  indices->set_name("sparse_indices");
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(2000);
  for (int i = 0; i < 2000; ++i) indices->add_int64_data(i * 50);

  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const char* name : {"loop_weight", "function_value", "sparse_values", "sparse_indices"}) {
    const StoredTensor* record = FindTensor(*loaded, name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_TRUE(record->data_dropped) << name;
  }
  EXPECT_FALSE(loaded->model->graph().node(4).attribute(0).g().initializer(0).has_raw_data());
  EXPECT_FALSE(loaded->model->functions(0).node(0).attribute(0).t().has_raw_data());
  EXPECT_EQ(loaded->model->graph().sparse_initializer(0).indices().int64_data_size(), 0);
  EXPECT_THAT(loaded->model->graph().sparse_initializer(0).dims(), ::testing::ElementsAre(100000));
  EXPECT_LT(loaded->model->ByteSizeLong(), 2000u);
}

TEST(LoadModelTest, WarnsWhenInlineDataDisagreesWithDims) {
  onnx::ModelProto model = SmallModel();
  onnx::TensorProto* bad = model.mutable_graph()->add_initializer();
  *bad = FloatTensor("bad", {10});
  bad->set_dims(0, 11);
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->warnings, SizeIs(1));
  EXPECT_EQ(loaded->warnings[0], "tensor 'bad' holds 40 bytes of values, but its dims and type say 44");
}

TEST(LoadModelTest, LoadsAFileWithAMebibyteOfWeightsWithoutThem) {
  const std::string dir = MakeTempDir();
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = FloatTensor("big", {512, 512});  // 1 MiB.
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->path, dir + "/model.onnx");
  EXPECT_EQ(loaded->file_bytes, static_cast<int64_t>(model.ByteSizeLong()));
  EXPECT_GT(loaded->dropped_bytes, 1 << 20);
  EXPECT_LT(loaded->model->ByteSizeLong(), 2000u);
  const onnx::TensorProto& big = loaded->model->graph().initializer(2);
  EXPECT_EQ(DenseByteSize(big.data_type(), {big.dims().begin(), big.dims().end()}), 1 << 20);
  fs::remove_all(dir);
}

TEST(LoadModelTest, AFileGivesTheSameModelAsBytesInMemory) {
  // 12 MB of small tensors, all kept: the walk over the file reuses its read
  // buffer every 1 MiB, and must still copy every byte intact.
  const std::string dir = MakeTempDir();
  onnx::ModelProto model = SmallModel();
  for (int i = 0; i < 3000; ++i) *model.mutable_graph()->add_initializer() = FloatTensor(absl::StrCat("t", i), {1000});
  const std::string bytes = model.SerializeAsString();
  WriteFile(dir + "/many.onnx", bytes);
  absl::StatusOr<LoadedModel> from_file = LoadModel(dir + "/many.onnx");
  absl::StatusOr<LoadedModel> in_memory = LoadModelFromBytes(bytes, dir);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();
  EXPECT_EQ(from_file->model->graph().initializer(2999).raw_data(), model.graph().initializer(2999).raw_data());
  EXPECT_EQ(from_file->model->SerializeAsString(), in_memory->model->SerializeAsString());
  EXPECT_THAT(from_file->tensors, SizeIs(3003));
  fs::remove_all(dir);
}

TEST(LoadModelTest, AFolderIsNotAModel) {
  const std::string dir = MakeTempDir();
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "not a regular file");
  fs::remove_all(dir);
}

TEST(LoadModelTest, MissingModelFileIsNotFound) {
  absl::StatusOr<LoadedModel> loaded = LoadModel(MakeTempDir() + "/absent.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(loaded.status().message(), HasSubstr("cannot open the file"));
}

// ---- External data ----

TEST(ExternalDataTest, InlineAndExternalCopiesHaveTheSameStructureAndSizes) {
  const std::string dir = MakeTempDir();
  const onnx::ModelProto inline_model = SmallModel();
  const onnx::ModelProto external_model = Externalize(inline_model, dir, "weights.bin", "weights.bin");
  WriteFile(dir + "/inline.onnx", inline_model.SerializeAsString());
  WriteFile(dir + "/external.onnx", external_model.SerializeAsString());
  absl::StatusOr<LoadedModel> a = LoadModel(dir + "/inline.onnx");
  absl::StatusOr<LoadedModel> b = LoadModel(dir + "/external.onnx");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(b->warnings, SizeIs(0));
  ASSERT_EQ(a->tensors.size(), b->tensors.size());
  for (size_t i = 0; i < a->tensors.size(); ++i) {
    SCOPED_TRACE(a->tensors[i].name);
    EXPECT_EQ(a->tensors[i].name, b->tensors[i].name);
    EXPECT_EQ(a->tensors[i].dims, b->tensors[i].dims);
    EXPECT_EQ(a->tensors[i].data_type, b->tensors[i].data_type);
    EXPECT_EQ(a->tensors[i].stored_bytes, b->tensors[i].stored_bytes);
  }
  const StoredTensor* w = FindTensor(*b, "W");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->external);
  EXPECT_TRUE(w->external_present);
  EXPECT_EQ(w->external_path, dir + "/weights.bin");
  // Same graph: only the data fields differ.
  onnx::ModelProto left = a->model, right = b->model;
  for (onnx::ModelProto* model : {&left, &right}) {
    for (onnx::TensorProto& tensor : *model->mutable_graph()->mutable_initializer()) {
      tensor.clear_raw_data();
      tensor.clear_external_data();
      tensor.clear_data_location();
    }
  }
  EXPECT_EQ(left.SerializeAsString(), right.SerializeAsString());
  fs::remove_all(dir);
}

struct EscapeCase {
  std::string location;
};

class RefusesEscapeTest : public ::testing::TestWithParam<EscapeCase> {};

TEST_P(RefusesEscapeTest, NamesTheTensorAndTheLocation) {
  const std::string root = MakeTempDir();
  const std::string dir = root + "/model";
  fs::create_directory(dir);
  fs::create_directory(dir + "/sub");
  WriteFile(root + "/outside.bin", std::string(64 * 64 * 4, 'x'));
  fs::create_symlink(root + "/outside.bin", dir + "/link_out.bin");
  fs::create_directory_symlink(root, dir + "/sub/up");
  const onnx::ModelProto model = Externalize(SmallModel(), dir, "", GetParam().location);
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            absl::StrCat("tensor 'W': external data location '", GetParam().location,
                         "' escapes the model folder"));
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Locations, RefusesEscapeTest,
                         ::testing::Values(EscapeCase{.location = "/etc/passwd"},
                                           EscapeCase{.location = "../outside.bin"},
                                           EscapeCase{.location = "sub/../../outside.bin"},
                                           EscapeCase{.location = "./sub/./../.."},
                                           EscapeCase{.location = "link_out.bin"},
                                           EscapeCase{.location = "sub/up/outside.bin"}));

TEST(ExternalDataTest, RefusesAnEmptyLocation) {
  const onnx::ModelProto model = Externalize(SmallModel(), ".", "", "");
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "tensor 'W': external data has no location");
}

TEST(ExternalDataTest, AllowsPathsAndLinksThatStayInside) {
  const std::string dir = MakeTempDir();
  fs::create_directory(dir + "/data");
  const onnx::ModelProto model = Externalize(SmallModel(), dir, "data/w.bin", "data/../data/./link.bin");
  fs::create_symlink(dir + "/data/w.bin", dir + "/data/link.bin");
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->warnings, SizeIs(0));
  EXPECT_EQ(FindTensor(*loaded, "W")->external_path, dir + "/data/link.bin");
  fs::remove_all(dir);
}

TEST(ExternalDataTest, MissingFileIsOneWarningNamingTensorAndPath) {
  const std::string dir = MakeTempDir();
  onnx::ModelProto model = SmallModel();
  *model.mutable_graph()->add_initializer() = FloatTensor("W2", {64, 64});
  model = Externalize(model, dir, "", "gone.bin");
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->warnings, SizeIs(1));
  EXPECT_EQ(loaded->warnings[0],
            "tensor 'W' (and 1 more tensors): external data file 'gone.bin' is missing (no such file)");
  EXPECT_FALSE(FindTensor(*loaded, "W")->external_present);
  EXPECT_EQ(FindTensor(*loaded, "W2")->stored_bytes, 64 * 64 * 4);  // From the length key.
  fs::remove_all(dir);
}

TEST(ExternalDataTest, ShortFileWarnsWithTheBytesNeeded) {
  const std::string dir = MakeTempDir();
  const onnx::ModelProto model = Externalize(SmallModel(), dir, "w.bin", "w.bin");
  fs::resize_file(dir + "/w.bin", 1000);
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->warnings, SizeIs(1));
  EXPECT_EQ(loaded->warnings[0],
            "tensor 'W': external data file 'w.bin' has 1000 bytes, fewer than offset + length = 16384");
  fs::remove_all(dir);
}

TEST(ExternalDataTest, WithoutALengthTheDimsSayHowFarItReads) {
  const std::string dir = MakeTempDir();
  onnx::ModelProto model = Externalize(SmallModel(), dir, "w.bin", "w.bin");
  model.mutable_graph()->mutable_initializer(0)->mutable_external_data()->RemoveLast();  // length
  fs::resize_file(dir + "/w.bin", 100);
  WriteFile(dir + "/model.onnx", model.SerializeAsString());
  absl::StatusOr<LoadedModel> loaded = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_THAT(loaded->warnings, SizeIs(1));
  EXPECT_THAT(loaded->warnings[0], HasSubstr("fewer than offset + length = 16384"));
  fs::remove_all(dir);
}

TEST(ExternalDataTest, RefusesANonNumericOffset) {
  onnx::ModelProto model = Externalize(SmallModel(), ".", "", "w.bin");
  model.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("12abc");
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), ".");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "tensor 'W': external data offset '12abc' is not a non-negative integer");
}

TEST(ExternalDataTest, ChecksExternalConstantsInSubgraphs) {
  onnx::ModelProto model = NestedIfModel(1);
  onnx::TensorProto* value =
      model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  value->clear_raw_data();
  value->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* entry = value->add_external_data();
  entry->set_key("location");
  entry->set_value("../../secret");
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(model.SerializeAsString(), MakeTempDir());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "tensor 'deep_value': external data location '../../secret' escapes the model folder");
}

// ---- Sizes ----

TEST(DenseByteSizeTest, FollowsTheMemoryModel) {
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::FLOAT, {}), 4);  // Rank 0: one element.
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::FLOAT, {2, 0, 3}), 0);
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::FLOAT16, {3, 5}), 30);
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::COMPLEX128, {2}), 32);
  EXPECT_EQ(DenseByteSize(22 /* INT4 */, {3}), 2);  // ceil(12 bits / 8).
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::STRING, {3}), -1);
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::FLOAT, {-1}), -1);
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::DOUBLE, {INT64_MAX / 2, 4}), -1);
  EXPECT_EQ(DenseByteSize(onnx::TensorProto::UINT8, {1 << 20, 1 << 13}), int64_t{1} << 33);
}

// ---- ONNX's own test models ----

TEST(OnnxTestModelsTest, ReducedCopyEqualsAFullParseUpToTheDroppedData) {
  const fs::path root = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(root)) GTEST_SKIP() << "libonnx-testdata is not installed";
  int models = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".onnx") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    onnx::ModelProto full;
    ASSERT_TRUE(full.ParseFromString(bytes)) << entry.path();
    absl::StatusOr<LoadedModel> kept =
        LoadModelFromBytes(bytes, entry.path().parent_path(), {.keep_data_up_to_bytes = INT64_MAX});
    ASSERT_TRUE(kept.ok()) << entry.path() << ": " << kept.status();
    EXPECT_EQ(kept->model->SerializeAsString(), full.SerializeAsString()) << entry.path();
    absl::StatusOr<LoadedModel> reduced = LoadModel(entry.path());
    ASSERT_TRUE(reduced.ok()) << entry.path() << ": " << reduced.status();
    EXPECT_EQ(reduced->model->graph().node_size(), full.graph().node_size()) << entry.path();
    EXPECT_EQ(reduced->model->graph().initializer_size(), full.graph().initializer_size()) << entry.path();
    ++models;
  }
  EXPECT_GT(models, 1000);
}

}  // namespace
}  // namespace footprint
