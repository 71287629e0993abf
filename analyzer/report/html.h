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

#include <string>
#include <vector>

#include "analyzer/report/html_charts.h"  // TierView, TiersOf: the pictures of each tier.
#include "analyzer/report/model_report.h"

namespace footprint {

std::string RenderHtml(const std::vector<ModelReport>& reports);

// & < > " ' as entities.
std::string HtmlEscape(const std::string& text);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_HTML_H_
