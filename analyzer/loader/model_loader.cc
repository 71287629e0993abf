#include "analyzer/loader/model_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/loader/model_arena.h"
#include "analyzer/loader/model_checks.h"
#include "analyzer/loader/onnx_fields.h"
#include "analyzer/loader/proto_wire.h"
#include "google/protobuf/io/coded_stream.h"

namespace footprint {
namespace {

using wire::Field;
using wire::Reader;
using wire::Source;
using wire::Span;
using wire::WireType;

// The messages the walker descends into; everything else is parsed as it stands.
enum class Kind { kModel, kTrainingInfo, kFunction, kGraph, kNode, kAttribute, kSparseTensor, kTensor };

constexpr int kTensorDataLocationExternal = 1;
// Protobuf's recursion budget for the whole model, as one ParseFromCodedStream
// of it would have it: each nested graph costs three message levels (graph,
// node, attribute), plus room for the types of values.
constexpr int kParseRecursionLimit = 4 * kMaxGraphDepth + 64;
// The reduced model, as if serialized with a 5-byte length for every message
// the walk descends into, must stay under protobuf's 2 GiB message limit.
constexpr int64_t kMaxStructureBytes = INT32_MAX;
// A run of verbatim fields is merged (parsed) at this size at the latest, so
// that reading it again fits in the Source's reused blocks.
constexpr uint64_t kMaxRunBytes = wire::Source::kBlockBytes / 4;
// Packed varint fields larger than this are not scanned to count their
// elements: that would read the weights.
constexpr size_t kMaxVarintScanBytes = 1 << 20;

std::optional<Kind> ChildKind(Kind parent, uint32_t number) {
  switch (parent) {
    case Kind::kModel:
      if (number == field::kModelGraph) return Kind::kGraph;
      if (number == field::kModelTrainingInfo) return Kind::kTrainingInfo;
      if (number == field::kModelFunctions) return Kind::kFunction;
      break;
    case Kind::kTrainingInfo:
      if (number == field::kTrainingInitialization || number == field::kTrainingAlgorithm) {
        return Kind::kGraph;
      }
      break;
    case Kind::kFunction:
      if (number == field::kFunctionNode) return Kind::kNode;
      break;
    case Kind::kGraph:
      if (number == field::kGraphNode) return Kind::kNode;
      if (number == field::kGraphInitializer) return Kind::kTensor;
      if (number == field::kGraphSparseInitializer) return Kind::kSparseTensor;
      break;
    case Kind::kNode:
      if (number == field::kNodeAttribute) return Kind::kAttribute;
      break;
    case Kind::kAttribute:
      if (number == field::kAttributeT || number == field::kAttributeTensors) return Kind::kTensor;
      if (number == field::kAttributeG || number == field::kAttributeGraphs) return Kind::kGraph;
      if (number == field::kAttributeSparseTensor || number == field::kAttributeSparseTensors) {
        return Kind::kSparseTensor;
      }
      break;
    case Kind::kSparseTensor:
      if (number == field::kSparseValues || number == field::kSparseIndices) return Kind::kTensor;
      break;
    case Kind::kTensor:
      break;
  }
  return std::nullopt;
}

bool IsDataField(uint32_t number) {
  switch (number) {
    case field::kTensorFloatData:
    case field::kTensorInt32Data:
    case field::kTensorStringData:
    case field::kTensorInt64Data:
    case field::kTensorRawData:
    case field::kTensorDoubleData:
    case field::kTensorUint64Data:
      return true;
    default:
      return false;
  }
}

// dims, data_type or name, with a wire type protobuf parses into that field.
bool IsCommonTensorField(const Field& f) {
  switch (f.number) {
    case field::kTensorDims:
      return f.type == WireType::kVarint || f.type == WireType::kLengthDelimited;
    case field::kTensorDataType:
      return f.type == WireType::kVarint;
    case field::kTensorName:
      return f.type == WireType::kLengthDelimited;
    default:
      return false;
  }
}

int64_t CountVarints(std::string_view payload) {
  int64_t count = 0;
  for (char c : payload) count += (static_cast<uint8_t>(c) & 0x80) == 0;
  return count;
}

// The message that field `number` of `parent`, a message of `kind`, adds or
// merges into: one of the kind ChildKind names.
google::protobuf::Message& ChildMessage(Kind kind, google::protobuf::Message& parent, uint32_t number) {
  switch (kind) {
    case Kind::kModel: {
      auto& model = static_cast<onnx::ModelProto&>(parent);
      if (number == field::kModelGraph) return *model.mutable_graph();
      if (number == field::kModelTrainingInfo) return *model.add_training_info();
      return *model.add_functions();
    }
    case Kind::kTrainingInfo: {
      auto& info = static_cast<onnx::TrainingInfoProto&>(parent);
      return number == field::kTrainingInitialization ? *info.mutable_initialization() : *info.mutable_algorithm();
    }
    case Kind::kFunction:
      return *static_cast<onnx::FunctionProto&>(parent).add_node();
    case Kind::kGraph: {
      auto& graph = static_cast<onnx::GraphProto&>(parent);
      if (number == field::kGraphNode) return *graph.add_node();
      if (number == field::kGraphInitializer) return *graph.add_initializer();
      return *graph.add_sparse_initializer();
    }
    case Kind::kNode:
      return *static_cast<onnx::NodeProto&>(parent).add_attribute();
    case Kind::kAttribute: {
      auto& attribute = static_cast<onnx::AttributeProto&>(parent);
      if (number == field::kAttributeT) return *attribute.mutable_t();
      if (number == field::kAttributeG) return *attribute.mutable_g();
      if (number == field::kAttributeTensors) return *attribute.add_tensors();
      if (number == field::kAttributeGraphs) return *attribute.add_graphs();
      if (number == field::kAttributeSparseTensor) return *attribute.mutable_sparse_tensor();
      return *attribute.add_sparse_tensors();
    }
    case Kind::kSparseTensor: {
      auto& sparse = static_cast<onnx::SparseTensorProto&>(parent);
      return number == field::kSparseValues ? *sparse.mutable_values() : *sparse.mutable_indices();
    }
    case Kind::kTensor:
      break;
  }
  return parent;  // Unreachable: ChildKind has no children for tensors.
}

class Reducer {
 public:
  Reducer(Source& source, const LoadOptions& options, std::string model_dir, LoadedModel& loaded)
      : source_(source),
        options_(options),
        tensor_checker_(source, std::move(model_dir), loaded.warnings),
        loaded_(loaded) {}

  // Merges `bytes`, a message of `kind` at `depth` levels below the model,
  // into `message` (of that kind), without the data of large tensors.
  // `owner` names the node whose tensors these are (see Tensor).
  absl::Status Message(Kind kind, Span bytes, int graph_depth, int depth, Span owner,
                       google::protobuf::Message& message) {
    if (kind == Kind::kTensor) return Tensor(bytes, depth, owner, static_cast<onnx::TensorProto&>(message));
    if (kind == Kind::kGraph && ++graph_depth > kMaxGraphDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("subgraphs nested deeper than ", kMaxGraphDepth, " levels"));
    }
    Reader reader(source_, bytes);
    Field f;
    Run run{.message = &message, .depth = depth};
    // A Constant's value usually has no name of its own: it takes the node's first output.
    Span node_output;
    while (reader.Next(f)) {
      if (kind == Kind::kNode && f.number == field::kNodeOutput && node_output.size == 0 &&
          f.type == WireType::kLengthDelimited) {
        node_output = f.payload;
      }
      std::optional<Kind> child = ChildKind(kind, f.number);
      if (!child || f.type != WireType::kLengthDelimited) {
        structure_bytes_ += static_cast<int64_t>(f.raw.size);
        Append(run, f.raw);
        if (kind == Kind::kGraph) MaybeRelease(run);
        continue;
      }
      const int64_t child_begin = structure_bytes_ += static_cast<int64_t>(
          wire::VarintSize(f.number << 3) + wire::kPaddedVarint32Size);
      if (*child == Kind::kNode) {
        // Most nodes hold no tensor and no graph: merged as they stand, with
        // the fields around them (one parse for many nodes).
        bool plain = false;
        if (absl::Status status = ScanNode(f.payload, plain); !status.ok()) return status;
        if (plain) {
          Append(run, f.raw);
          if (kind == Kind::kGraph) MaybeRelease(run);
          continue;
        }
      }
      Flush(run);
      absl::Status status = Message(*child, f.payload, graph_depth, depth + 1,
                                    kind == Kind::kNode ? node_output : owner, ChildMessage(kind, message, f.number));
      if (!status.ok()) return status;
      if (structure_bytes_ - child_begin > kMaxStructureBytes) return TooLarge();
      if (kind == Kind::kGraph) MaybeRelease(run);
    }
    if (!reader.ok()) return reader.status();
    Flush(run);
    return absl::OkStatus();
  }

  // Call after the walk: the error it found, if any, else OK.
  absl::Status Finish() {
    if (structure_bytes_ > kMaxStructureBytes) return TooLarge();
    if (parse_failed_) return absl::InvalidArgumentError("not an ONNX model (protobuf parse failed)");
    return absl::OkStatus();
  }

  void FinishWarnings() { tensor_checker_.FinishWarnings(); }

 private:
  // Fields copied as they stand, adjacent in the input, parsed into `message` at once.
  struct Run {
    google::protobuf::Message* message;
    int depth;    // Of `message` below the model.
    Span fields;  // Not parsed yet.
  };

  void Append(Run& run, Span raw) {
    if (run.fields.end() != raw.offset || run.fields.size + raw.size > kMaxRunBytes) {
      Flush(run);
      run.fields.offset = raw.offset;
    }
    run.fields.size = raw.end() - run.fields.offset;
  }

  void Flush(Run& run) {
    if (run.fields.size > 0) Merge(*run.message, run.fields, run.depth);
    run.fields = {};
  }

  // Parses `bytes` (whole fields) into `message`, with protobuf's recursion
  // budget what is left of it at `depth`. A failure is reported by Finish,
  // after the walk: wire errors the walk finds later come first, as when the
  // whole model was parsed after the walk.
  void Merge(google::protobuf::Message& message, Span fields, int depth) {
    if (parse_failed_) return;
    if (fields.size > static_cast<uint64_t>(INT_MAX)) {
      parse_failed_ = true;  // Finish reports the structure as too large first.
      return;
    }
    const std::string_view bytes = source_.Bytes(fields);
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 static_cast<int>(bytes.size()));
    input.SetRecursionLimit(kParseRecursionLimit - depth);
    if (!message.MergePartialFromCodedStream(&input) || !input.ConsumedEntireMessage()) parse_failed_ = true;
  }

  static absl::Status TooLarge() {
    return absl::InvalidArgumentError("not supported: the model's structure alone is over 2 GiB");
  }

  // Whether `node` can be merged as it stands: none of its attributes holds a
  // tensor, a graph or a sparse tensor. Adds to structure_bytes_ what the
  // walk of a plain node would; errors are those that walk would meet first.
  absl::Status ScanNode(Span node, bool& plain) {
    plain = false;
    int64_t node_bytes = 0;
    Reader reader(source_, node);
    Field f;
    while (reader.Next(f)) {
      if (f.number != field::kNodeAttribute || f.type != WireType::kLengthDelimited) {
        node_bytes += static_cast<int64_t>(f.raw.size);
        continue;
      }
      Reader attribute(source_, f.payload);
      Field a;
      while (attribute.Next(a)) {
        if (a.type == WireType::kLengthDelimited && ChildKind(Kind::kAttribute, a.number)) return absl::OkStatus();
      }
      if (!attribute.ok()) return attribute.status();
      if (f.payload.size > static_cast<uint64_t>(kMaxStructureBytes)) return TooLarge();
      node_bytes += static_cast<int64_t>(wire::VarintSize(f.number << 3) + wire::kPaddedVarint32Size + f.payload.size);
    }
    if (!reader.ok()) return reader.status();
    if (node_bytes > kMaxStructureBytes) return TooLarge();
    structure_bytes_ += node_bytes;
    plain = true;
    return absl::OkStatus();
  }

  // Views of the bytes read here stay valid until the walk releases them
  // (MaybeRelease), which it never does inside a tensor.
  absl::Status Tensor(Span bytes, int depth, Span owner, onnx::TensorProto& message) {
    StoredTensor tensor;
    std::string_view name;
    int64_t data_location = 0;
    std::vector<Span> external_entries;
    int64_t payload_bytes = 0;    // Bytes of all data fields on the wire.
    int64_t raw_bytes = -1;       // raw_data's size, when present.
    int64_t typed_elements = 0;   // Values in the typed fields; -1 when not counted.
    bool has_typed = false;
    // Most tensors hold only dims, data_type, name and raw_data: those are
    // set on `message` directly, without a parse (see below).
    bool only_common_fields = true;  // Every field other than data is dims, data_type or name.
    bool only_raw_data = true;       // Every data field is raw_data.
    bool has_data_type = false, has_name = false;
    Span raw_data;
    int64_t data_field_bytes = 0;  // Whole data fields (tag, length, payload).

    Reader reader(source_, bytes);
    Field f;
    while (reader.Next(f)) {
      if (IsDataField(f.number)) {
        payload_bytes += static_cast<int64_t>(f.type == WireType::kVarint ? f.raw.size : f.payload.size);
        data_field_bytes += static_cast<int64_t>(f.raw.size);
        only_raw_data &= f.number == field::kTensorRawData && f.type == WireType::kLengthDelimited;
      } else {
        only_common_fields &= IsCommonTensorField(f);
      }
      switch (f.number) {
        case field::kTensorDims:
          if (f.type == WireType::kVarint) {
            tensor.dims.push_back(static_cast<int64_t>(f.varint));
          } else if (f.type == WireType::kLengthDelimited) {
            const std::string_view packed = source_.Bytes(f.payload);
            size_t pos = 0;
            uint64_t dim = 0;
            while (pos < packed.size()) {
              if (!wire::DecodeVarint(packed, pos, dim)) {
                return absl::InvalidArgumentError("not an ONNX model: malformed protobuf (bad tensor dims)");
              }
              tensor.dims.push_back(static_cast<int64_t>(dim));
            }
          }
          break;
        case field::kTensorDataType:
          if (f.type == WireType::kVarint) {
            tensor.data_type = static_cast<int32_t>(f.varint);
            has_data_type = true;
          }
          break;
        case field::kTensorName:
          if (f.type == WireType::kLengthDelimited) {
            name = source_.Bytes(f.payload);
            has_name = true;
          }
          break;
        case field::kTensorDataLocation:
          if (f.type == WireType::kVarint) data_location = static_cast<int64_t>(f.varint);
          break;
        case field::kTensorExternalData:
          if (f.type == WireType::kLengthDelimited) external_entries.push_back(f.payload);
          break;
        case field::kTensorRawData:
          if (f.type == WireType::kLengthDelimited) {
            raw_data = f.payload;
            raw_bytes = static_cast<int64_t>(f.payload.size);
          }
          break;
        case field::kTensorFloatData:
        case field::kTensorDoubleData:
        case field::kTensorInt32Data:
        case field::kTensorInt64Data:
        case field::kTensorUint64Data: {
          has_typed = true;
          if (typed_elements < 0) break;
          const bool fixed4 = f.number == field::kTensorFloatData;
          const bool fixed8 = f.number == field::kTensorDoubleData;
          if (f.type != WireType::kLengthDelimited) {
            ++typed_elements;  // One unpacked value.
          } else if (fixed4 || fixed8) {
            typed_elements += static_cast<int64_t>(f.payload.size / (fixed4 ? 4 : 8));
          } else if (f.payload.size <= kMaxVarintScanBytes) {
            typed_elements += CountVarints(source_.Bytes(f.payload));
          } else {
            typed_elements = -1;
          }
          break;
        }
        case field::kTensorStringData:
          has_typed = true;
          break;
        default:
          break;
      }
    }
    if (!reader.ok()) return reader.status();
    tensor.name = std::string(name.empty() ? source_.Bytes(owner) : name);
    tensor.external = data_location == kTensorDataLocationExternal;
    const int64_t expected_bytes = DenseByteSize(tensor.data_type, tensor.dims);
    const int bits = ElementBits(tensor.data_type);

    if (tensor.external) {
      absl::Status status = tensor_checker_.CheckExternal(tensor, external_entries, expected_bytes);
      if (!status.ok()) return status;
    } else if (raw_bytes >= 0) {
      tensor.stored_bytes = raw_bytes;
    } else if (has_typed && typed_elements >= 0 && bits > 0) {
      const bool complex = tensor.data_type == onnx::TensorProto::COMPLEX64 ||
                           tensor.data_type == onnx::TensorProto::COMPLEX128;
      const int64_t elements = complex ? typed_elements / 2 : typed_elements;
      tensor.stored_bytes = (elements * bits + 7) / 8;
    } else if (!has_typed) {
      tensor.stored_bytes = 0;
    }
    tensor_checker_.CheckInlineBytes(tensor, expected_bytes);

    const int64_t keep = options_.keep_data_up_to_bytes;
    tensor.data_dropped = payload_bytes > keep || tensor.stored_bytes > keep ||
                          (has_typed && typed_elements < 0);
    if (payload_bytes == 0) tensor.data_dropped = false;
    if (tensor.data_dropped) loaded_.dropped_bytes += payload_bytes;
    structure_bytes_ += static_cast<int64_t>(bytes.size) - (tensor.data_dropped ? data_field_bytes : 0);
    if (only_common_fields && (tensor.data_dropped || only_raw_data)) {
      // What protobuf would parse from these fields (the last name, data_type
      // or raw_data wins), without its parser's set-up for every tensor.
      message.mutable_dims()->Add(tensor.dims.begin(), tensor.dims.end());
      if (has_data_type) message.set_data_type(tensor.data_type);
      if (has_name) message.mutable_name()->assign(name.data(), name.size());
      if (!tensor.data_dropped && raw_bytes >= 0) {
        const std::string_view raw = source_.Bytes(raw_data);
        message.mutable_raw_data()->assign(raw.data(), raw.size());
      }
    } else if (!tensor.data_dropped) {
      Merge(message, bytes, depth);
    } else {
      Run run{.message = &message, .depth = depth};
      Reader again(source_, bytes);
      while (again.Next(f)) {
        if (!IsDataField(f.number)) Append(run, f.raw);
      }
      if (!again.ok()) return again.status();
      Flush(run);
    }
    loaded_.tensors.push_back(std::move(tensor));
    return absl::OkStatus();
  }

  // Frees the bytes read so far once they fill the Source's block, so that
  // memory does not grow with the file. Called between the children of a
  // graph: no view of them is held there, and `pending`, fields walked but
  // not parsed yet, is parsed first.
  void MaybeRelease(Run& pending) {
    if (!source_.ShouldRelease()) return;
    Flush(pending);
    source_.Release();
  }

  Source& source_;
  const LoadOptions& options_;
  TensorChecker tensor_checker_;
  LoadedModel& loaded_;
  int64_t structure_bytes_ = 0;  // Size of the reduced model (see kMaxStructureBytes).
  bool parse_failed_ = false;    // Protobuf refused a run of fields.
};

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A file descriptor, closed when it goes out of scope.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

int ElementBits(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 32;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64:
      return 64;
    case onnx::TensorProto::COMPLEX128:
      return 128;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
      return 16;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
    case 17:  // FLOAT8E4M3FN (ONNX 1.14; numbered here since Debian ships ONNX 1.12).
    case 18:  // FLOAT8E4M3FNUZ
    case 19:  // FLOAT8E5M2
    case 20:  // FLOAT8E5M2FNUZ
      return 8;
    case 21:  // UINT4 (ONNX 1.16)
    case 22:  // INT4
      return 4;
    default:
      return 0;  // STRING, UNDEFINED and unknown types have no byte size.
  }
}

int64_t DenseByteSize(int32_t data_type, const std::vector<int64_t>& dims) {
  const int bits = ElementBits(data_type);
  if (bits == 0) return -1;
  int64_t elements = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return -1;
    if (dim == 0) return 0;
    if (elements > INT64_MAX / dim) return -1;
    elements *= dim;
  }
  if (elements > (INT64_MAX - 7) / bits) return -1;
  return (elements * bits + 7) / 8;
}

namespace {

absl::StatusOr<LoadedModel> Load(Source& source, const std::string& model_dir, const LoadOptions& options) {
  LoadedModel loaded;
  loaded.file_bytes = static_cast<int64_t>(source.size());
  if (source.size() == 0) return absl::InvalidArgumentError("not an ONNX model (empty file)");

  auto storage = std::make_shared<ArenaModel>(source.size());
  Reducer reducer(source, options, model_dir, loaded);
  absl::Status walked = reducer.Message(Kind::kModel, {0, source.size()}, /*graph_depth=*/0, /*depth=*/0,
                                        /*owner=*/{}, *storage->model);
  // A failed read left zeros where the walk looked: that comes first.
  if (!source.status().ok()) return source.status();
  if (!walked.ok()) return walked;
  reducer.FinishWarnings();
  if (absl::Status parsed = reducer.Finish(); !parsed.ok()) return parsed;
  if (!storage->model->has_graph()) return absl::InvalidArgumentError("not an ONNX model (no graph)");
  loaded.model = SharedModel(storage, storage->model);
  return loaded;
}

}  // namespace

absl::StatusOr<LoadedModel> LoadModelFromBytes(std::string_view bytes, const std::string& model_dir,
                                               const LoadOptions& options) {
  Source source(bytes);
  return Load(source, model_dir, options);
}

absl::StatusOr<LoadedModel> LoadModel(const std::string& path, const LoadOptions& options) {
  const OpenFile file(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.fd() < 0) return absl::NotFoundError(absl::StrCat("cannot open the file: ", std::strerror(errno)));
  struct stat info;
  if (fstat(file.fd(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError("not a regular file");
  }
  // The walk jumps over the weights: no read-ahead into bytes it will skip.
  posix_fadvise(file.fd(), 0, 0, POSIX_FADV_RANDOM);
  Source source(file.fd(), static_cast<uint64_t>(info.st_size));
  absl::StatusOr<LoadedModel> loaded = Load(source, DirectoryOf(path), options);
  if (loaded.ok()) loaded->path = path;
  return loaded;
}

}  // namespace footprint
