// Markdown reports, made for a pull-request or merge-request comment.
//
// One model: a heading, the figures as a table (peak first, with the change
// against --baseline-report when given), the budgets, the ten largest arena
// tensors, and the unsized tensors and warnings folded in <details>.
// Several models: the summary table (one row per model) first, then each
// model's report folded in <details>, so the comment stays short.
// GitHub and GitLab both render this subset (pipe tables, <details>).
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_MARKDOWN_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_MARKDOWN_H_

#include <string>
#include <vector>

#include "analyzer/report/model_report.h"

namespace footprint {

std::string RenderMarkdown(const std::vector<ModelReport>& reports);

// Text made safe inside a Markdown table cell (| and newlines escaped, < > &
// as entities so a tensor name cannot open an HTML tag in the comment).
std::string MarkdownCell(const std::string& text);
// The same for text inside a `code span`, where entities would show literally.
std::string MarkdownCode(const std::string& text);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_MARKDOWN_H_
