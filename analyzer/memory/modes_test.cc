// The modes beyond the baseline (modes.h): schedule optimization, aliasing
// and in-place reuse, on graphs small enough to check by hand (figures worked
// out in the comments), plus the optimized schedule against an exhaustive
// search over every topological order of small random graphs.
#include "analyzer/memory/modes.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/test_models.h"
#include "devices/device_catalog.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::MatMulChain;
using ::footprint::testing::ModelBuilder;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

const AnalyzeOptions kAliasOnly{.alias = true};
const AnalyzeOptions kInPlaceOnly{.inplace = true};

AnalyzeOptions AllModes() {
  return {.optimize_schedule = true, .alias = true, .inplace = true};
}

TEST(AliasTest, ChainOfViewsSharesTheFirstTensorsBytes) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Reshape", {"shape"}, "Flatten", {}), kAliasOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "a").shares_with, "");
  EXPECT_EQ(FindTensor(*analysis, "b").shares_with, "a");
  EXPECT_EQ(FindTensor(*analysis, "b").sharing, "alias");
  EXPECT_EQ(FindTensor(*analysis, "c").shares_with, "a");
  EXPECT_EQ(FindTensor(*analysis, "b").offset, FindTensor(*analysis, "a").offset);
  EXPECT_EQ(FindTensor(*analysis, "c").offset, FindTensor(*analysis, "a").offset);
  // Each keeps its own live interval; the group spans [0, 3].
  EXPECT_EQ(FindTensor(*analysis, "b").first_step, 1);
  EXPECT_EQ(FindTensor(*analysis, "b").last_step, 2);
  EXPECT_EQ(analysis->modes.baseline_lower_bound_bytes, 512);
  EXPECT_EQ(analysis->modes.alias.lower_bound_bytes, 320);
  EXPECT_EQ(analysis->modes.alias.saved_bytes, 192);
  EXPECT_EQ(analysis->modes.alias.tensors, 2);
  EXPECT_FALSE(analysis->modes.inplace.enabled);
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 320);
  EXPECT_EQ(analysis->memory.arena_bytes, 320);
  EXPECT_EQ(analysis->memory.naive_bytes, 64 + 3 * 256 + 64);  // Still one buffer per tensor.
  EXPECT_EQ(analysis->live_bytes_per_step, (std::vector<int64_t>{320, 256, 256, 320}));
}

TEST(InPlaceTest, ChainOfElementwiseOpsWritesOverItsInputs) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Relu", {}, "Sigmoid", {}), kInPlaceOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "b").shares_with, "a");
  EXPECT_EQ(FindTensor(*analysis, "b").sharing, "inplace");
  EXPECT_EQ(FindTensor(*analysis, "c").shares_with, "a");
  EXPECT_EQ(analysis->modes.inplace.tensors, 2);
  EXPECT_EQ(analysis->modes.alias.saved_bytes, 0);
  EXPECT_EQ(analysis->modes.inplace.lower_bound_bytes, 320);
  EXPECT_EQ(analysis->modes.inplace.saved_bytes, 192);
  EXPECT_EQ(analysis->memory.arena_bytes, 320);
}

TEST(ModesTest, ViewThenElementwiseMakeOneGroup) {
  // a -Reshape-> b (alias) -Relu-> c (in-place): all three share a's bytes.
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Reshape", {"shape"}, "Relu", {}), AllModes());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "b").sharing, "alias");
  EXPECT_EQ(FindTensor(*analysis, "c").sharing, "inplace");
  EXPECT_EQ(FindTensor(*analysis, "c").shares_with, "a");
  EXPECT_EQ(analysis->modes.alias.lower_bound_bytes, 512);  // {a, b}: 320, 256, 512 (with c), 320.
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 320);
}

TEST(AliasTest, RefusedWhenTheInputIsReadLater) {
  // b = Reshape(a) at step 1, but a is read again by the Add at step 2.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16})
      .Initializer("w0", kFloat, {16, 64})
      .Int64Initializer("shape", {1, 64})
      .Add("MatMul", {"x", "w0"}, {"a"}, "mm0")
      .Add("Reshape", {"a", "shape"}, {"b"}, "view")
      .Add("Add", {"a", "b"}, {"y"}, "add")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kAliasOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "b").shares_with, "");
  EXPECT_EQ(analysis->modes.alias.tensors, 0);
  EXPECT_EQ(analysis->modes.alias.saved_bytes, 0);
}

TEST(AliasTest, RefusedForGraphInputsAndGraphOutputs) {
  // x is a graph input, a a graph output read by the view at the last step.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64})
      .Int64Initializer("shape", {64})
      .Add("Relu", {"x"}, {"a"}, "relu")
      .Add("Reshape", {"a", "shape"}, {"y"}, "view")
      .Add("Reshape", {"x", "shape"}, {"z"}, "view_of_input")
      .Output("a")
      .Output("y")
      .Output("z");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, AnalyzeOptions{.alias = true, .inplace = true});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "a").shares_with, "");  // Relu never writes over the caller's x.
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "");  // a must keep its bytes to the end.
  EXPECT_EQ(FindTensor(*analysis, "z").shares_with, "");
  EXPECT_EQ(analysis->modes.alias.tensors + analysis->modes.inplace.tensors, 0);
}

TEST(AliasTest, AGraphOutputMayTakeOverADyingInput) {
  // y (a graph output) takes a's bytes; the group lives to the last step.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16})
      .Initializer("w0", kFloat, {16, 64})
      .Int64Initializer("shape", {64})
      .Add("MatMul", {"x", "w0"}, {"a"}, "mm0")
      .Add("Reshape", {"a", "shape"}, {"y"}, "view")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kAliasOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "a");
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 320);  // x + a at step 0; a = y at step 1.
}

TEST(InPlaceTest, RefusedWhenNoInputHasTheOutputsSize) {
  // p [1,64] + q [64,1] broadcast to [64,64]: neither input can hold the output.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64})
      .Input("u", kFloat, {64, 1})
      .Add("Relu", {"x"}, {"p"}, "rp")
      .Add("Relu", {"u"}, {"q"}, "rq")
      .Add("Add", {"p", "q"}, {"y"}, "add")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kInPlaceOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "");
  EXPECT_EQ(analysis->modes.inplace.tensors, 0);
}

TEST(InPlaceTest, AddWritesOverTheInputOfItsOwnShape) {
  // s [1,1] + a [1,64]: the output can only take a's bytes.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64})
      .Input("v", kFloat, {1, 1})
      .Add("Relu", {"v"}, {"s"}, "rs")
      .Add("Relu", {"x"}, {"a"}, "ra")
      .Add("Add", {"s", "a"}, {"y"}, "add")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kInPlaceOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "a");
}

TEST(InPlaceTest, BatchNormalizationAndSumWriteOverADyingInput) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8});
  for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, kFloat, {4});
  builder.Add("Relu", {"x"}, {"a"}, "ra")
      .Add("BatchNormalization", {"a", "scale", "bias", "mean", "var"}, {"n"}, "bn")
      .Add("Sigmoid", {"x"}, {"s"}, "sig")
      .Add("Sum", {"n", "s"}, {"y"}, "sum")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kInPlaceOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "n").shares_with, "a");
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "a");  // The group's owner.
  EXPECT_EQ(analysis->modes.inplace.tensors, 2);
}

TEST(InPlaceTest, TrainingBatchNormalizationIsNotInPlace) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8});
  for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, kFloat, {4});
  builder.Add("Relu", {"x"}, {"a"}, "ra");
  onnx::NodeProto& norm = builder.Node("BatchNormalization", {"a", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  onnx::AttributeProto* training = norm.add_attribute();
  training->set_name("training_mode");
  training->set_type(onnx::AttributeProto::INT);
  training->set_i(1);
  builder.Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, kInPlaceOnly);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "");
}

TEST(InPlaceTest, RefusedWhenTheDeviceDoesNotAllowIt) {
  absl::StatusOr<devices::DeviceProfile> profile = devices::FindDevice("generic-cpu");
  ASSERT_TRUE(profile.ok()) << profile.status();
  profile->set_allow_inplace(false);
  AnalyzeOptions options = kInPlaceOnly;
  options.device_profile = *profile;
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Relu", {}, "Sigmoid", {}), options);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_FALSE(analysis->modes.inplace.enabled);
  EXPECT_EQ(FindTensor(*analysis, "b").shares_with, "");
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 512);
  EXPECT_TRUE(std::any_of(analysis->warnings.begin(), analysis->warnings.end(),
                          [](const std::string& w) { return w.find("in-place reuse is off") != std::string::npos; }));
}

TEST(ModesTest, DeviceTiersPlaceAGroupAsOneBuffer) {
  absl::StatusOr<devices::DeviceProfile> profile = devices::FindDevice("esp32-s3");
  ASSERT_TRUE(profile.ok()) << profile.status();
  AnalyzeOptions options = AllModes();
  options.device_profile = *profile;
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(MatMulChain("Reshape", {"shape"}, "Relu", {}), options);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  int shared = 0;
  for (const TensorRecord& tensor : analysis->tensors) {
    if (tensor.shares_with_index < 0) continue;
    const TensorRecord& owner = analysis->tensors[tensor.shares_with_index];
    EXPECT_EQ(tensor.tier, owner.tier) << tensor.name;
    EXPECT_EQ(tensor.tier_offset, owner.tier_offset) << tensor.name;
    EXPECT_FALSE(tensor.tier.empty()) << tensor.name;
    ++shared;
  }
  EXPECT_EQ(shared, 2);
  int64_t tier_tensors = 0;
  for (const TierSummary& tier : analysis->tiers) tier_tensors += tier.tensors;
  EXPECT_EQ(tier_tensors, 5);  // x, a, b, c, y: the group {a, b, c} is one buffer.
}

TensorRecord Sized(const std::string& name, int64_t first, int64_t last, int64_t offset, int64_t size = 64) {
  return TensorRecord{.name = name, .bytes = size, .aligned_bytes = size, .first_step = first, .last_step = last,
                      .offset = offset};
}

TEST(ValidateSharedBytesTest, AGroupMayOverlapItselfButNothingElse) {
  std::vector<TensorRecord> tensors = {Sized("a", 0, 2, 0), Sized("b", 2, 3, 0), Sized("c", 4, 5, 0)};
  tensors[1].shares_with = "a";
  tensors[1].shares_with_index = 0;
  EXPECT_TRUE(ValidateSharedBytes(tensors).ok());
  tensors[2].first_step = 3;  // c now meets b, a member of a's group, at step 3 on the same bytes.
  const absl::Status status = ValidateSharedBytes(tensors);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'c'"), std::string::npos) << status;
  tensors[2].offset = 64;
  EXPECT_TRUE(ValidateSharedBytes(tensors).ok());
  tensors[1].offset = 64;  // A member away from its owner's bytes.
  EXPECT_FALSE(ValidateSharedBytes(tensors).ok());
}

TEST(ValidateSharedBytesTest, TheNamedOwnerMustOwnItsBytes) {
  std::vector<TensorRecord> tensors = {Sized("a", 0, 1, 0), Sized("b", 1, 2, 0), Sized("c", 2, 3, 0)};
  tensors[1].shares_with = "a";
  tensors[1].shares_with_index = 0;
  tensors[2].shares_with = "b";  // b owns nothing: c must name a.
  tensors[2].shares_with_index = 1;
  EXPECT_FALSE(ValidateSharedBytes(tensors).ok());
}

// x feeds four branches; each makes a 1 KiB tensor then reduces it to 64 B;
// the file runs every big MatMul first. The optimized order interleaves them.
ModelBuilder Branches() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16}).Initializer("wb", kFloat, {16, 256}).Initializer("ws", kFloat, {256, 1});
  for (int i = 0; i < 4; ++i) builder.Add("MatMul", {"x", "wb"}, {absl::StrCat("big", i)}, absl::StrCat("b", i));
  for (int i = 0; i < 4; ++i) {
    builder.Add("MatMul", {absl::StrCat("big", i), "ws"}, {absl::StrCat("small", i)}, absl::StrCat("s", i));
  }
  builder.Add("Sum", {"small0", "small1", "small2", "small3"}, {"y"}, "sum").Output("y");
  return builder;
}

TEST(ScheduleTest, OptimizedIsNeverAboveGivenAndLowersABranchyGraph) {
  absl::StatusOr<Analysis> given = AnalyzeBuilt(Branches(), {});
  absl::StatusOr<Analysis> optimized = AnalyzeBuilt(Branches(), {.optimize_schedule = true});
  ASSERT_TRUE(given.ok()) << given.status();
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  // Given: at b3, x + 4 x 1 KiB; at s0, 4 x 1 KiB + small0: 4160 either way.
  EXPECT_EQ(given->memory.lower_bound_bytes, 64 + 4 * 1024);
  EXPECT_EQ(optimized->modes.baseline_lower_bound_bytes, given->memory.lower_bound_bytes);
  // Best: one big at a time; at b3, x + big3 + three smalls.
  EXPECT_EQ(optimized->memory.lower_bound_bytes, 64 + 1024 + 3 * 64);
  EXPECT_EQ(optimized->modes.schedule.saved_bytes, (64 + 4 * 1024) - (64 + 1024 + 3 * 64));
  EXPECT_TRUE(optimized->modes.schedule.proven_optimal);
  EXPECT_NE(optimized->schedule, given->schedule);
  EXPECT_EQ(optimized->schedule.back(), "sum");
  EXPECT_LE(optimized->memory.arena_bytes, given->memory.arena_bytes);
}

TEST(ScheduleTest, AGraphWithoutNodesHasOneOrder) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16}).Output("x");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, AllModes());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 64);  // x at step 0.
  EXPECT_EQ(analysis->modes.baseline_lower_bound_bytes, 64);
  EXPECT_EQ(analysis->modes.schedule.name, "optimized");
  EXPECT_TRUE(analysis->modes.schedule.proven_optimal);
}

// Random DAGs of 8 to 14 nodes, each node a custom op whose output sizes are
// given (value_info), reading one to three earlier values.
struct RandomModel {
  ModelBuilder builder;
  int nodes = 0;
  std::vector<std::vector<int>> inputs;  // Per node: indices of the values it reads (-1: graph input x).
  std::vector<int64_t> aligned;          // Per node: its output's aligned size.
  std::vector<bool> is_output;           // Per node: its output is a graph output.
};

RandomModel MakeRandomModel(std::mt19937& rng) {
  RandomModel model;
  model.nodes = std::uniform_int_distribution<int>(8, 14)(rng);
  model.builder.Opset("test.modes", 1).Input("x", kFloat, {16});  // 64 B.
  for (int n = 0; n < model.nodes; ++n) {
    std::vector<int> in;
    const int reads = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int r = 0; r < reads; ++r) in.push_back(std::uniform_int_distribution<int>(-1, n - 1)(rng));
    const int64_t floats = 16 * std::uniform_int_distribution<int>(1, 8)(rng);
    std::vector<std::string> names;
    for (int v : in) names.push_back(v < 0 ? "x" : absl::StrCat("v", v));
    onnx::NodeProto& node = model.builder.Node("Mix", names, {absl::StrCat("v", n)}, absl::StrCat("n", n));
    node.set_domain("test.modes");
    model.builder.ValueInfo(absl::StrCat("v", n), kFloat, {floats});
    model.inputs.push_back(in);
    model.aligned.push_back(floats * 4);
    model.is_output.push_back(false);
  }
  // Values no node reads are graph outputs (and one more at random).
  std::vector<bool> read(model.nodes, false);
  for (const auto& in : model.inputs) {
    for (int v : in) {
      if (v >= 0) read[v] = true;
    }
  }
  read[std::uniform_int_distribution<int>(0, model.nodes - 2)(rng)] = false;
  for (int n = 0; n < model.nodes; ++n) {
    if (read[n]) continue;
    model.is_output[n] = true;
    model.builder.Output(absl::StrCat("v", n), kFloat, {model.aligned[n] / 4});
  }
  return model;
}

// The least lower bound over every topological order, by exhaustive search
// over executed sets: the live bytes of a step depend only on the set of
// nodes run before it and the node it runs, so memoizing on that set visits
// every order without enumerating the same prefix set twice.
int64_t BruteForceLeastLowerBound(const RandomModel& model) {
  const int n = model.nodes;
  const uint32_t all = (1u << n) - 1;
  std::vector<uint32_t> readers(n, 0);  // Nodes reading v_i.
  uint32_t readers_of_x = 0;
  for (int node = 0; node < n; ++node) {
    for (int v : model.inputs[node]) {
      if (v < 0) {
        readers_of_x |= 1u << node;
      } else {
        readers[v] |= 1u << node;
      }
    }
  }
  // Live bytes while `node` runs after the set `done`.
  auto live = [&](uint32_t done, int node) {
    const uint32_t after = done | (1u << node);
    int64_t bytes = 0;
    // x lives from step 0 to its last reader (at least step 0).
    if (done == 0 || (readers_of_x & ~done) != 0) bytes += 64;
    for (int v = 0; v < n; ++v) {
      const bool written = (after >> v) & 1;
      if (!written) continue;
      if (v == node || model.is_output[v] || (readers[v] & ~done) != 0) bytes += model.aligned[v];
    }
    return bytes;
  };
  std::vector<int64_t> best(all + 1, INT64_MAX);  // Least peak over orders of the set's nodes.
  best[0] = 0;
  for (uint32_t done = 0; done < all; ++done) {
    if (best[done] == INT64_MAX) continue;
    for (int node = 0; node < n; ++node) {
      if ((done >> node) & 1) continue;
      bool ready = true;
      for (int v : model.inputs[node]) ready = ready && (v < 0 || ((done >> v) & 1));
      if (!ready) continue;
      const uint32_t next = done | (1u << node);
      best[next] = std::min(best[next], std::max(best[done], live(done, node)));
    }
  }
  return best[all];
}

// The spec's lower bound of one order, from live intervals.
int64_t LowerBoundOfOrder(const RandomModel& model, const std::vector<int>& order) {
  const int n = model.nodes;
  std::vector<int> step(n);
  for (int k = 0; k < n; ++k) step[order[k]] = k;
  std::vector<int64_t> live(n, 0);
  auto hold = [&](int first, int last, int64_t bytes) {
    for (int k = first; k <= last; ++k) live[k] += bytes;
  };
  int x_last = 0;
  std::vector<int> last(n);
  for (int v = 0; v < n; ++v) last[v] = model.is_output[v] ? n - 1 : step[v];
  for (int node = 0; node < n; ++node) {
    for (int v : model.inputs[node]) {
      if (v < 0) {
        x_last = std::max(x_last, step[node]);
      } else {
        last[v] = std::max(last[v], step[node]);
      }
    }
  }
  hold(0, x_last, 64);
  for (int v = 0; v < n; ++v) hold(step[v], last[v], model.aligned[v]);
  return *std::max_element(live.begin(), live.end());
}

// Every topological order, one by one; returns the least lower bound, or
// nullopt when there are more than `max_orders` orders.
std::optional<int64_t> EnumerateEveryOrder(const RandomModel& model, int64_t max_orders) {
  std::vector<int> order;
  std::vector<bool> done(model.nodes, false);
  int64_t visited = 0;
  int64_t least = INT64_MAX;
  std::function<bool()> extend = [&]() {
    if (static_cast<int>(order.size()) == model.nodes) {
      least = std::min(least, LowerBoundOfOrder(model, order));
      return ++visited <= max_orders;
    }
    for (int node = 0; node < model.nodes; ++node) {
      if (done[node]) continue;
      bool ready = true;
      for (int v : model.inputs[node]) ready = ready && (v < 0 || done[v]);
      if (!ready) continue;
      done[node] = true;
      order.push_back(node);
      const bool more = extend();
      order.pop_back();
      done[node] = false;
      if (!more) return false;
    }
    return true;
  };
  if (!extend()) return std::nullopt;
  return least;
}

TEST(ScheduleTest, OptimizedFindsTheLeastLowerBoundOfSmallRandomGraphs) {
  std::mt19937 rng(7);
  int enumerated_trials = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RandomModel model = MakeRandomModel(rng);
    absl::StatusOr<Analysis> analysis =
        AnalyzeBuilt(model.builder, {.optimize_schedule = true, .schedule_time_limit = absl::Seconds(10)});
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    ASSERT_TRUE(analysis->memory.complete) << "trial " << trial;
    const int64_t least = BruteForceLeastLowerBound(model);
    EXPECT_EQ(analysis->memory.lower_bound_bytes, least) << "trial " << trial;
    if (std::optional<int64_t> enumerated = EnumerateEveryOrder(model, 200000)) {
      EXPECT_EQ(*enumerated, least) << "trial " << trial;  // The memoized search against plain enumeration.
      ++enumerated_trials;
    }
    EXPECT_LE(analysis->memory.lower_bound_bytes, analysis->modes.baseline_lower_bound_bytes);
    EXPECT_TRUE(analysis->modes.schedule.proven_optimal) << "trial " << trial;
  }
  EXPECT_GE(enumerated_trials, 30);  // 37 of the 40 have at most 200,000 orders.
}

}  // namespace
}  // namespace footprint
