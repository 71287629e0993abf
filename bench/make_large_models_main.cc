// footprint-make-model --kind inline-1g|inline-3g|external-8g|blocks-18k --output PATH
//                      [--blocks N] [--hidden H] [--symbolic-dims 0|1]
// Writes one of the large benchmark models (see make_large_models.h) and prints
// the exact bytes of weights it holds.
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "bench/make_large_models.h"

int main(int argc, char** argv) {
  using footprint::bench::ModelKind;
  footprint::bench::MakeOptions options;
  std::string kind;
  const char* usage =
      "usage: footprint-make-model --kind inline-1g|inline-3g|external-8g|blocks-18k --output PATH "
      "[--blocks N] [--hidden H] [--symbolic-dims 0|1]\n";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    bool ok = true;
    if (flag == "--kind") {
      kind = value;
    } else if (flag == "--output") {
      options.output = value;
    } else if (flag == "--blocks") {
      ok = absl::SimpleAtoi(value, &options.blocks);
    } else if (flag == "--hidden") {
      ok = absl::SimpleAtoi(value, &options.hidden);
    } else if (flag == "--symbolic-dims") {
      ok = value == "0" || value == "1";
      options.symbolic_dims = value == "1";
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "footprint-make-model: bad flag %s %s\n%s", flag.c_str(), value.c_str(), usage);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (kind == "inline-1g") {
    options.kind = ModelKind::kInline1G;
  } else if (kind == "inline-3g") {
    options.kind = ModelKind::kInline3G;
  } else if (kind == "external-8g") {
    options.kind = ModelKind::kExternal8G;
  } else if (kind == "blocks-18k") {
    options.kind = ModelKind::kBlocks;
  } else {
    std::fputs(usage, stderr);
    return 2;
  }
  if (options.output.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  const absl::Status status = footprint::bench::MakeModel(options);
  if (!status.ok()) {
    std::fprintf(stderr, "footprint-make-model: %s\n", std::string(status.message()).c_str());
    return 2;
  }
  std::printf("%s weights_bytes=%lld\n", options.output.c_str(),
              static_cast<long long>(footprint::bench::ExpectedWeightsBytes(options)));
  return 0;
}
