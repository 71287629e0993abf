#include "bench/make_large_models.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/loader/proto_wire.h"
#include "onnx/onnx_pb.h"

namespace footprint::bench {
namespace {

struct InlineTensor {
  onnx::TensorProto header;  // Name, dims and type; its raw_data is streamed.
  int64_t bytes = 0;         // Size of the raw_data.
};

// The parts of a model: the skeleton is serialized by protobuf, the inline
// tensors are appended to its graph by StreamModel.
struct ModelParts {
  onnx::ModelProto skeleton;
  std::vector<InlineTensor> tensors;
};

class Output {
 public:
  explicit Output(const std::string& path) : file_(std::fopen(path.c_str(), "wb")) {}
  ~Output() {
    if (file_ != nullptr) std::fclose(file_);
  }
  bool ok() const { return file_ != nullptr && !failed_; }
  void Write(std::string_view bytes) {
    if (file_ != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) failed_ = true;
  }
  bool Close() {
    const bool closed = file_ != nullptr && std::fclose(file_) == 0;
    file_ = nullptr;
    return closed && !failed_;
  }

 private:
  std::FILE* file_;
  bool failed_ = false;
};

absl::Status StreamModel(const ModelParts& parts, const std::string& path) {
  constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
  onnx::ModelProto head = parts.skeleton;
  head.clear_graph();
  const std::string graph_bytes = parts.skeleton.graph().SerializeAsString();

  std::vector<std::string> headers;
  uint64_t graph_size = graph_bytes.size();
  for (const InlineTensor& tensor : parts.tensors) {
    std::string header = tensor.header.SerializeAsString();
    wire::AppendVarint(header, (kTensorRawData << 3) | 2);
    wire::AppendVarint(header, static_cast<uint64_t>(tensor.bytes));
    const uint64_t tensor_size = header.size() + static_cast<uint64_t>(tensor.bytes);
    graph_size += wire::VarintSize((kGraphInitializer << 3) | 2) + wire::VarintSize(tensor_size) + tensor_size;
    headers.push_back(std::move(header));
  }

  Output out(path);
  if (!out.ok()) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  std::string prefix = head.SerializeAsString();
  wire::AppendVarint(prefix, (kModelGraph << 3) | 2);
  wire::AppendVarint(prefix, graph_size);
  out.Write(prefix);
  out.Write(graph_bytes);

  // A float pattern (about 0.0115) rather than zeros, written 1 MiB at a time.
  const std::string chunk(1 << 20, '\x3c');
  for (size_t i = 0; i < parts.tensors.size(); ++i) {
    std::string tag;
    wire::AppendVarint(tag, (kGraphInitializer << 3) | 2);
    wire::AppendVarint(tag, headers[i].size() + static_cast<uint64_t>(parts.tensors[i].bytes));
    out.Write(tag);
    out.Write(headers[i]);
    for (int64_t left = parts.tensors[i].bytes; left > 0;) {
      const size_t n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(chunk.size())));
      out.Write(std::string_view(chunk).substr(0, n));
      left -= static_cast<int64_t>(n);
    }
  }
  if (!out.Close()) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

onnx::ModelProto NewModel(const std::string& graph_name) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("footprint-make-model");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  model.mutable_graph()->set_name(graph_name);
  return model;
}

void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name,
              const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* value = values->Add();
  value->set_name(name);
  onnx::TypeProto::Tensor* type = value->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) type->mutable_shape()->add_dim()->set_dim_value(dim);
}

// The same with the first two dims named `batch` and `sequence` (symbolic).
void AddBatchSequenceValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values, const std::string& name,
                           int64_t hidden) {
  onnx::ValueInfoProto* value = values->Add();
  value->set_name(name);
  onnx::TypeProto::Tensor* type = value->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_param("batch");
  type->mutable_shape()->add_dim()->set_dim_param("sequence");
  type->mutable_shape()->add_dim()->set_dim_value(hidden);
}

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(name);
  for (std::string& input : inputs) node->add_input(std::move(input));
  node->add_output(output);
  return node;
}

onnx::TensorProto FloatHeader(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor.add_dims(dim);
  return tensor;
}

int64_t FloatBytes(const std::vector<int64_t>& dims) {
  int64_t bytes = 4;
  for (int64_t dim : dims) bytes *= dim;
  return bytes;
}

// x[1, size] -> (MatMul w_i[size, size] -> Relu) x layers -> y.
ModelParts MatMulChain(int layers, int64_t size) {
  ModelParts parts{.skeleton = NewModel("matmul_chain")};
  onnx::GraphProto& graph = *parts.skeleton.mutable_graph();
  AddValue(graph.mutable_input(), "x", {1, size});
  std::string current = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string weight = absl::StrCat("w", i);
    const std::string product = absl::StrCat("matmul", i);
    AddNode(graph, "MatMul", product, {current, weight}, product);
    current = i + 1 == layers ? "y" : absl::StrCat("relu", i);
    AddNode(graph, "Relu", absl::StrCat("relu", i), {product}, current);
    parts.tensors.push_back({.header = FloatHeader(weight, {size, size}), .bytes = FloatBytes({size, size})});
  }
  AddValue(graph.mutable_output(), "y", {1, size});
  return parts;
}

ModelParts Blocks(int blocks, int64_t hidden, bool symbolic) {
  const int64_t ff = 2 * hidden, sequence = 128;
  ModelParts parts{.skeleton = NewModel("blocks")};
  onnx::GraphProto& graph = *parts.skeleton.mutable_graph();
  if (symbolic) {
    AddBatchSequenceValue(graph.mutable_input(), "x", hidden);
  } else {
    AddValue(graph.mutable_input(), "x", {1, sequence, hidden});
  }
  std::string x = "x";
  for (int b = 0; b < blocks; ++b) {
    const auto name = [b](const char* part) { return absl::StrCat("b", b, ".", part); };
    const auto weight = [&](const char* part, std::vector<int64_t> dims) {
      parts.tensors.push_back({.header = FloatHeader(name(part), dims), .bytes = FloatBytes(dims)});
      return name(part);
    };
    onnx::NodeProto* norm = AddNode(graph, "LayerNormalization", name("ln"),
                                    {x, weight("ln.scale", {hidden}), weight("ln.bias", {hidden})}, name("ln"));
    onnx::AttributeProto* axis = norm->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(-1);
    AddNode(graph, "MatMul", name("fc1"), {name("ln"), weight("fc1.w", {hidden, ff})}, name("fc1"));
    AddNode(graph, "Add", name("fc1.add"), {name("fc1"), weight("fc1.b", {ff})}, name("fc1.add"));
    AddNode(graph, "Sigmoid", name("sigmoid"), {name("fc1.add")}, name("sigmoid"));
    AddNode(graph, "Mul", name("silu"), {name("fc1.add"), name("sigmoid")}, name("silu"));
    AddNode(graph, "MatMul", name("fc2"), {name("silu"), weight("fc2.w", {ff, hidden})}, name("fc2"));
    AddNode(graph, "Add", name("fc2.add"), {name("fc2"), weight("fc2.b", {hidden})}, name("fc2.add"));
    AddNode(graph, "Mul", name("scale"), {name("fc2.add"), weight("layer_scale", {hidden})}, name("scale"));
    const std::string y = b + 1 == blocks ? "y" : name("out");
    AddNode(graph, "Add", name("residual"), {x, name("scale")}, y);
    x = y;
  }
  if (symbolic) {
    AddBatchSequenceValue(graph.mutable_output(), "y", hidden);
  } else {
    AddValue(graph.mutable_output(), "y", {1, sequence, hidden});
  }
  return parts;
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

absl::Status MakeExternal8G(const std::string& path) {
  constexpr int kLayers = 32;
  constexpr int64_t kSize = 8192;
  ModelParts parts = MatMulChain(kLayers, kSize);
  int64_t offset = 0;
  for (InlineTensor& tensor : parts.tensors) {
    onnx::TensorProto* initializer = parts.skeleton.mutable_graph()->add_initializer();
    *initializer = tensor.header;
    initializer->set_data_location(onnx::TensorProto::EXTERNAL);
    const std::pair<const char*, std::string> entries[] = {
        {"location", "weights.bin"}, {"offset", std::to_string(offset)}, {"length", std::to_string(tensor.bytes)}};
    for (const auto& [key, value] : entries) {
      onnx::StringStringEntryProto* entry = initializer->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    offset += tensor.bytes;
  }
  parts.tensors.clear();
  // A sparse file: 8 GiB long, no disk blocks.
  const std::string weights = DirectoryOf(path) + "/weights.bin";
  const int fd = open(weights.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, offset) != 0) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) close(fd);
    return absl::InvalidArgumentError(absl::StrCat("cannot create ", weights, ": ", error));
  }
  close(fd);
  return StreamModel(parts, path);
}

}  // namespace

absl::Status MakeModel(const MakeOptions& options) {
  switch (options.kind) {
    case ModelKind::kInline1G:
      return StreamModel(MatMulChain(16, 4096), options.output);
    case ModelKind::kInline3G:
      return StreamModel(MatMulChain(48, 4096), options.output);
    case ModelKind::kExternal8G:
      return MakeExternal8G(options.output);
    case ModelKind::kBlocks:
      if (options.blocks < 1 || options.hidden < 1) return absl::InvalidArgumentError("blocks and hidden must be >= 1");
      return StreamModel(Blocks(options.blocks, options.hidden, options.symbolic_dims), options.output);
  }
  return absl::InvalidArgumentError("unknown model kind");
}

int64_t ExpectedWeightsBytes(const MakeOptions& options) {
  switch (options.kind) {
    case ModelKind::kInline1G:
      return int64_t{16} * 4096 * 4096 * 4;
    case ModelKind::kInline3G:
      return int64_t{48} * 4096 * 4096 * 4;
    case ModelKind::kExternal8G:
      return int64_t{32} * 8192 * 8192 * 4;
    case ModelKind::kBlocks: {
      const int64_t h = options.hidden;
      return int64_t{options.blocks} * 4 * (h + h + h * 2 * h + 2 * h + 2 * h * h + h + h);
    }
  }
  return 0;
}

}  // namespace footprint::bench
