// The HTML report's pictures of a memory tier (html.h): the arena as blocks
// (x = step, y = offset) and the live bytes per step, as inline SVG.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_CHARTS_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_CHARTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/memory/analysis_result.h"

namespace footprint {

// One memory tier as the page draws it.
//
// Why a view: device profiles place tensors in several tiers (SRAM, DRAM,
// ...), each planned on its own. The page draws whatever TiersOf returns, one
// section each; while every planned tensor is in one tier that is the single
// arena of the spec's figures, and TiersOf is the single place that learns
// about tiers.
struct TierView {
  std::string name;                           // "arena".
  std::optional<int64_t> capacity_bytes;      // The device's capacity of this tier, when known.
  int64_t size_bytes = 0;                     // Planned size: max of offset + aligned size.
  int64_t lower_bound_bytes = 0;              // Max over steps of live aligned bytes in this tier.
  std::vector<int64_t> live_bytes_per_step;   // Live aligned bytes of this tier at each step.
  std::vector<const TensorRecord*> tensors;   // Planned tensors (with an offset) in this tier.
  std::vector<int64_t> offsets;               // offsets[i]: tensors[i]'s offset within this tier.
};

std::vector<TierView> TiersOf(const Analysis& analysis);

// The tier's card: its heading, legend, arena picture and live-bytes curve.
// `id` prefixes the tensor table's row ids that the blocks link to.
void AppendTierCard(std::string* out, const Analysis& analysis, const TierView& tier, const std::string& id);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_CHARTS_H_
