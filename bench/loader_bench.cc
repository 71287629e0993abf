// footprint-loader-bench --method footprint|protobuf --model PATH
//
// Loads one model once, in this fresh process, and prints one line:
//   seconds=S nodes=N initializers=I weights_bytes=W peak_rss_kib=R
// `footprint` is our loader (LoadModel); `protobuf` is a plain full parse
// (read the file, ParseFromArray), what most tools do. Peak RSS is this
// process's ru_maxrss, so each measurement runs in its own process
// (bench/loader.bench.sh runs them and prints the table).
#include <sys/resource.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "analyzer/loader/model_loader.h"
#include "google/protobuf/io/coded_stream.h"
#include "onnx/onnx_pb.h"

namespace {

int64_t WeightsBytes(const onnx::ModelProto& model) {
  int64_t total = 0;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    total += footprint::DenseByteSize(tensor.data_type(), {tensor.dims().begin(), tensor.dims().end()});
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  std::string method, path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--method") method = argv[i + 1];
    if (flag == "--model") path = argv[i + 1];
  }
  if ((method != "footprint" && method != "protobuf") || path.empty()) {
    std::fputs("usage: footprint-loader-bench --method footprint|protobuf --model PATH\n", stderr);
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  onnx::ModelProto full;
  const onnx::ModelProto* model = nullptr;
  absl::StatusOr<footprint::LoadedModel> loaded;
  std::string error;
  if (method == "footprint") {
    loaded = footprint::LoadModel(path);
    if (loaded.ok()) {
      model = &loaded->model.get();
    } else {
      error = std::string(loaded.status().message());
    }
  } else {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    std::string bytes(static_cast<size_t>(file.tellg()), '\0');
    file.seekg(0);
    file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (bytes.size() > static_cast<size_t>(INT_MAX)) {
      error = "over protobuf's 2 GiB limit";
    } else {
      google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                   static_cast<int>(bytes.size()));
      input.SetTotalBytesLimit(INT_MAX);
      if (full.ParseFromCodedStream(&input)) {
        model = &full;
      } else {
        error = "protobuf parse failed";
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  if (model == nullptr) {
    std::printf("error=\"%s\" seconds=%.6f peak_rss_kib=%ld\n", error.c_str(), seconds, usage.ru_maxrss);
    return 1;
  }
  std::printf("seconds=%.6f nodes=%d initializers=%d weights_bytes=%lld peak_rss_kib=%ld\n", seconds,
              model->graph().node_size(), model->graph().initializer_size(),
              static_cast<long long>(WeightsBytes(*model)), usage.ru_maxrss);
  return 0;
}
