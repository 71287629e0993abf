// Values known before running: the pads chain PyTorch exports for F.pad,
// values of graph inputs (--input-value), and If conditions decided by them
// or by shapes.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shape_engine_test_util.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::symbolic::engine_test {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::TestDim;

// A Constant node holding an int64 tensor of `dims` (a scalar when empty).
void ConstantInt64(ModelBuilder& builder, const std::string& name, const std::vector<int64_t>& values,
                   const std::vector<int64_t>& dims) {
  onnx::NodeProto& node = builder.Node("Constant", {}, {name});
  onnx::AttributeProto* value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = value->mutable_t();
  t->set_data_type(kInt64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// y = F.pad(x, pads, mode) as torch.onnx exports it at opsets 11-17: the
// ONNX pads computed from the constant torch pads and x's rank.
void TorchPadChain(ModelBuilder& builder, const std::string& x, int64_t rank, const std::vector<int64_t>& torch_pads,
                   const std::string& mode, const std::string& y) {
  const std::string p = y + "_";
  ConstantInt64(builder, p + "pad", torch_pads, {static_cast<int64_t>(torch_pads.size())});
  builder.Add("Shape", {p + "pad"}, {p + "pad_shape"});
  ConstantInt64(builder, p + "zero", {0}, {1});
  builder.Add("Gather", {p + "pad_shape", p + "zero"}, {p + "pad_len"});
  ConstantInt64(builder, p + "rank", {rank}, {});
  ConstantInt64(builder, p + "two", {2}, {});
  builder.Add("Mul", {p + "rank", p + "two"}, {p + "twice_rank"});
  builder.Add("Sub", {p + "twice_rank", p + "pad_len"}, {p + "extension"});
  onnx::NodeProto& zeros = builder.Node("ConstantOfShape", {p + "extension"}, {p + "zeros"});
  onnx::AttributeProto* fill = zeros.add_attribute();
  fill->set_name("value");
  fill->set_type(onnx::AttributeProto::TENSOR);
  fill->mutable_t()->set_data_type(kInt64);
  fill->mutable_t()->add_dims(1);
  fill->mutable_t()->add_int64_data(0);
  onnx::NodeProto& concat = builder.Node("Concat", {p + "pad", p + "zeros"}, {p + "padded"});
  SetInt(concat, "axis", 0);
  ConstantInt64(builder, p + "pairs_shape", {-1, 2}, {2});
  builder.Add("Reshape", {p + "padded", p + "pairs_shape"}, {p + "pairs"});
  ConstantInt64(builder, p + "start", {-1}, {1});
  ConstantInt64(builder, p + "end", {std::numeric_limits<int64_t>::min()}, {1});
  ConstantInt64(builder, p + "axis", {0}, {1});
  ConstantInt64(builder, p + "step", {-1}, {1});
  builder.Add("Slice", {p + "pairs", p + "start", p + "end", p + "axis", p + "step"}, {p + "reversed"});
  onnx::NodeProto& transpose = builder.Node("Transpose", {p + "reversed"}, {p + "columns"});
  SetInts(transpose, "perm", {1, 0});
  ConstantInt64(builder, p + "flat", {-1}, {1});
  builder.Add("Reshape", {p + "columns", p + "flat"}, {p + "onnx_pads"});
  onnx::NodeProto& cast = builder.Node("Cast", {p + "onnx_pads"}, {p + "pads"});
  SetInt(cast, "to", kInt64);
  onnx::NodeProto& pad = builder.Node("Pad", {x, p + "pads"}, {y});
  onnx::AttributeProto* mode_attribute = pad.add_attribute();
  mode_attribute->set_name("mode");
  mode_attribute->set_type(onnx::AttributeProto::STRING);
  mode_attribute->set_s(mode);
}

TEST(ValuesTest, TorchPadChainIsFollowedAtEveryRank) {
  for (const std::string mode : {"reflect", "constant"}) {
    for (int64_t rank = 2; rank <= 5; ++rank) {
      SCOPED_TRACE(absl::StrCat(mode, " rank ", rank));
      std::vector<TestDim> dims;
      std::string expected;
      for (int64_t d = 0; d < rank; ++d) {
        dims.push_back(d == 0 ? TestDim("batch") : TestDim(int64_t{10 + d}));
        // Torch pads (2, 3) the last dim and (1, 1) the one before it.
        int64_t size = 10 + d;
        if (d == rank - 1) size += 5;
        if (d == rank - 2 && d > 0) size += 2;
        absl::StrAppend(&expected, d == 0 ? "" : ",", d == 0 ? (rank == 2 ? "batch+2" : "batch") : absl::StrCat(size));
      }
      ModelBuilder builder;
      builder.Opset("", 13).Input("x", kFloat, dims);
      TorchPadChain(builder, "x", rank, {2, 3, 1, 1}, mode, "y");
      builder.Output("y");
      Engine engine(builder);
      std::string begins, ends;
      for (int64_t d = 0; d < rank - 2; ++d) {
        absl::StrAppend(&begins, "0,");
        absl::StrAppend(&ends, "0,");
      }
      EXPECT_EQ(engine.Ints("y_pads"), absl::StrCat(begins, "1,2,", ends, "1,3"));
      EXPECT_EQ(engine.Shape("y"), expected) << engine.Value("y").reason;
    }
  }
}

}  // namespace
}  // namespace footprint::symbolic::engine_test
