// An HTML report: one self-contained page to read a model's memory at a glance.
//
// Self-contained means no network at all: no external scripts, styles, fonts
// or images (CI artifacts are often opened offline or behind a strict CSP
// proxy). Everything is inline: CSS, the SVG charts and a few lines of JS
// that sort and filter the tensor table.
//
// The page shows:
// - the figures (peak first), the budgets and the change against a baseline;
// - per memory tier: the arena as a picture (x = step, y = offset, one <rect>
//   per planned tensor, its <title> a tooltip with name, shape, bytes and
//   live interval), and the live bytes per step with the lower bound;
// - a sortable table of every arena tensor, unsized ones included.
// With several models: a summary table, then one such section per model.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/report/model_report.h"

namespace footprint {

// One memory tier as the page draws it.
//
// Why a view: device profiles will place tensors in several tiers (SRAM,
// DRAM, ...), each planned on its own. The page draws whatever TiersOf
// returns, one section each; today every planned tensor is in the one
// "arena" tier, and TiersOf is the single place that learns about tiers.
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

std::string RenderHtml(const std::vector<ModelReport>& reports);

// & < > " ' as entities.
std::string HtmlEscape(const std::string& text);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_H_
