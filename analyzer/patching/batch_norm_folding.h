// Internal to analyzer/patching/: a BatchNormalization folded into the Conv
// before it when the two are copied per patch.
//
// Why: ONNX Runtime fuses a BatchNormalization into the Conv that feeds it
// (conv_bn_fusion.cc) and keeps a new filter per Conv node, so each patch's
// copy of the pair would hold a filter of its own after load: the written
// light_resnet50 held 999.9 MB in ORT where the original holds 103.9 MB
// (docs/patching.md). Instead the written model computes the folded filter
// and bias once, from constants only (filter x scale / sqrt(var + epsilon),
// shift + (bias - mean) x scale / sqrt(var + epsilon)), which a runtime
// folds at load into one value each; every copy's Conv reads those, and no
// runtime has a pair to fuse. No weight's bytes are read or written here.
// Not folded: a per-channel Mul or Add after the normalization (Caffe2's
// exports, light_inception_v2), which ORT still fuses into each copy.
//
// A pair folds when the Conv's output is read by the BatchNormalization
// alone, both lie in one segment, the normalization has one output and is
// not in training mode, the model's opset is 7 or more (broadcasting), and
// the filter, the Conv's bias and the normalization's four inputs are
// float32 constants: initializers (not graph inputs, not external) or
// ConstantOfShape outputs of a float value, of a Conv's and its
// normalization's dims.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_BATCH_NORM_FOLDING_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_BATCH_NORM_FOLDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/patching/patch_writer.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/segment.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

struct FoldedBatchNorm {
  int conv = -1;        // Node index of the Conv.
  int batch_norm = -1;  // Node index of the BatchNormalization reading only its output.
  std::string filter;   // The folded filter: a value of the written model, constant.
  std::string bias;     // The folded bias, one value per output channel.
};

// The pairs of `segments` that fold in a model of `opset`, by Conv node
// index, each with new value names from `writer`.
absl::flat_hash_map<int, FoldedBatchNorm> FoldableBatchNorms(const GraphFacts& facts,
                                                           const std::vector<PlannedSegment>& segments, int64_t opset,
                                                           Writer& writer);

// The nodes computing `pair`'s filter and bias from the constants it reads,
// into `out` (once, before the copies that read them).
void WriteFolding(const GraphFacts& facts, const FoldedBatchNorm& pair, Writer& writer,
                  std::vector<onnx::NodeProto>& out);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_BATCH_NORM_FOLDING_H_
