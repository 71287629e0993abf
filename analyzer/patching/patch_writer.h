// Internal to analyzer/patching/: the nodes and initializers the rewrite
// (rewrite.h) writes, and how a segment node's copy is set for its patch
// (pads, a Pad's pads, a Slice's bounds, a Resize's scales).
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_WRITER_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_WRITER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/patching/segment.h"
#include "analyzer/patching/spatial_ops.h"
#include "onnx/onnx_pb.h"

namespace footprint::patching {

// The graph being written: fresh names, shared index and scale tensors,
// the patches' overridable bounds, the tiles of each T kept in pieces.
struct Writer {
  onnx::GraphProto* graph = nullptr;   // The new graph (its nodes rebuilt).
  bool slice_takes_inputs = true;      // Opset >= 10.
  bool patch_dims_overridable = true;  // Opset >= 5 (Reshape takes its shape as an input).
  bool batch_named = false;            // A graph input's batch dim is a name (--dim binds it for the analysis only).
  absl::flat_hash_map<std::string, std::string> streamed;      // Graph input -> its stand-in (RewriteWithStreamedInput).
  absl::flat_hash_set<std::string> names;                      // Values, nodes, initializers: new names avoid them.
  std::map<std::vector<int64_t>, std::string> index_tensors;   // Shared Slice starts/ends/axes.
  std::map<std::vector<float>, std::string> float_tensors;     // Shared Resize scales.
  std::map<std::vector<int64_t>, std::string> bounds_inputs;   // Overridable bounds of the patches' input Slices.
  struct Tile {
    Region region;     // Its rows and columns of T.
    std::string name;  // The piece.
  };
  absl::flat_hash_map<std::string, std::vector<Tile>> pieces;  // A T kept in pieces -> its tiles, row-major.

  // The dims a written Reshape gives a patch or T: the batch as its input's
  // (0) where the model leaves it to the caller, so the written model runs at
  // any batch as the original does.
  std::vector<int64_t> ReshapeDims(std::vector<int64_t> dims) const;

  // `base`, or `base`_k for the first k that no value, node or initializer has.
  std::string Unique(const std::string& base);

  // A shared int64 initializer of `values`.
  std::string IndexTensor(const std::vector<int64_t>& values);

  // An int64 initializer also listed as a graph input (IR >= 4: an
  // overridable initializer). Its value is the default, but ONNX Runtime may
  // not take it as a constant: its shape inference leaves the patch's
  // spatial dims unknown, and its allocation planner only hands a freed
  // buffer to a later tensor of the same known shape, keeping the buffer
  // allocated in between. Patches of equal shapes would otherwise keep every
  // buffer of one patch allocated until the next patch takes it again
  // (measured, generated ResNet-50: 8.6 MB written vs 5.2 MB original).
  std::string OverridableIndexTensor(const std::vector<int64_t>& values);

  // A shared float initializer of `values`, named after `base` when new
  // (Resize scales, a normalization's epsilon).
  std::string FloatTensor(const std::vector<float>& values, const std::string& base);

  // `source`'s rows and columns [begin, end) of `region`, relative to `source`;
  // `overridable`: its bounds are overridable initializers (a patch's input).
  onnx::NodeProto Slice(const std::string& source, const Region& region, const std::string& output,
                        bool overridable = false);

  // `inputs` joined along `axis`.
  onnx::NodeProto Concat(const std::vector<std::string>& inputs, int64_t axis, const std::string& output);

 private:
  onnx::TensorProto& AddInt64Initializer(const std::string& name, const std::vector<int64_t>& values);
};

// An INTS attribute `name` of `values`, added to `node`.
void AddIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);

// `region` relative to `within` (a region inside it).
Region Relative(const Region& region, const Region& within);

// A window op's copy: its pads (auto_pad dropped).
void SetPads(onnx::NodeProto& node, const Pads& pads);

// A ConvTranspose copy: pads trim its scattered rows to the patch's, and
// output_padding extends them where the original's did at the border.
void SetTransposedPads(onnx::NodeProto& node, const Pads& pads);

// A Resize copy given `sizes` (the whole tensor's) takes its factors as scales.
void SetScales(onnx::NodeProto& node, const SpatialOp& op, Writer& writer);

// A Pad copy pads only where the patch touches the border: its pads input
// (opset >= 11) or attribute, N and C unpadded.
void SetPadPads(onnx::NodeProto& node, const Pads& pads, Writer& writer);

// A Slice copy over H or W reads exactly the rows its patch needs: it starts
// at row 0 of its input region and runs to its end on those axes; its
// bounds over N and C are the original's. (Its rule was checked: the
// bounds are stored.)
void SetSliceBounds(onnx::NodeProto& node, const GraphFacts& facts, Writer& writer);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCH_WRITER_H_
