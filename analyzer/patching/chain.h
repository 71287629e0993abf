// Segments chained over a stage (docs/patching.md, "Chains"): a segment
// whose T is read only by the segment after it leaves T in pieces, and that
// segment's patches read the pieces they need (with their halo); only the
// chain's last T is assembled. A residual stage then holds its stream once,
// in pieces, instead of a whole tensor beside its assembly.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_CHAIN_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_CHAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/patching/segment.h"

namespace footprint::patching {

// The shortest segment reading `value` that holds every node reading it (so
// that `value` is never needed whole), its T within the next 48 nodes of the
// graph's order, sharing no node with `taken`; nullopt when there is none
// (`value` a graph output, or read by an op no patch runs, or by a node of
// `taken`).
std::optional<Segment> NextSegment(const GraphFacts& facts, const std::string& value,
                                   const absl::flat_hash_set<int>& taken);

// The chain after `value`: NextSegment from it, then from that segment's T,
// and so on, at most `most` segments.
std::vector<Segment> ChainAfter(const GraphFacts& facts, const std::string& value, absl::flat_hash_set<int> taken,
                                size_t most);

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_CHAIN_H_
