#include "analyzer/report/html.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/report/format.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

constexpr const char* kStyle = R"css(
:root { --ink:#1f2430; --muted:#667085; --line:#e4e7ec; --card:#fff; --bg:#f5f6f8; --accent:#2563eb;
        --bad:#c2410c; --good:#15803d; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width:1320px; margin:0 auto; padding:24px 20px 60px; }
h1 { font-size:22px; margin:0 0 4px; }
h2 { font-size:18px; margin:28px 0 10px; }
h3 { font-size:15px; margin:18px 0 8px; }
.sub { color:var(--muted); }
code, .mono { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace; font-size:12.5px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin:14px 0;
        box-shadow:0 1px 2px rgba(16,24,40,.04); }
.figures { display:grid; grid-template-columns:repeat(auto-fill,minmax(180px,1fr)); gap:12px; }
.figure { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; }
.figure .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.figure .value { font-size:22px; font-weight:650; margin-top:2px; }
.figure .exact { color:var(--muted); font-size:12px; }
.figure .delta { font-size:12px; margin-top:4px; }
.figure.peak { border-color:var(--accent); box-shadow:inset 3px 0 0 var(--accent); }
.up { color:var(--bad); } .down { color:var(--good); }
.warn { background:#fff7ed; border:1px solid #fed7aa; border-radius:8px; padding:8px 12px; margin:10px 0; }
.chips { display:flex; flex-wrap:wrap; gap:8px; margin-top:10px; }
.chip { border-radius:999px; padding:3px 10px; font-size:12.5px; border:1px solid var(--line); background:#fff; }
.chip.ok { border-color:#86efac; background:#f0fdf4; } .chip.over { border-color:#fca5a5; background:#fef2f2; font-weight:600; }
svg { display:block; width:100%; height:auto; }
svg text { font:11px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif; fill:#475467;
           paint-order:stroke; stroke:rgba(255,255,255,.85); stroke-width:3px; stroke-linejoin:round; }
svg .axis { stroke:#98a2b3; stroke-width:1; }
svg .grid { stroke:#eef0f3; stroke-width:1; }
svg rect.t { stroke:#fff; stroke-width:.6; cursor:pointer; }
svg rect.t:hover { stroke:#111; stroke-width:1.6; }
svg .bound { stroke:#c2410c; stroke-width:1.3; stroke-dasharray:6 4; fill:none; }
svg .arena { stroke:#1f2430; stroke-width:1.2; fill:none; }
svg .curve { stroke:#2563eb; stroke-width:1.6; fill:rgba(37,99,235,.12); }
.legend { display:flex; flex-wrap:wrap; gap:14px; color:var(--muted); font-size:12.5px; margin:6px 0 2px; }
.legend i { display:inline-block; width:12px; height:12px; border-radius:3px; vertical-align:-2px; margin-right:5px; }
.legend i.dash { height:0; border-top:2px dashed #c2410c; border-radius:0; width:18px; vertical-align:3px; }
.legend i.solid { height:0; border-top:2px solid #1f2430; border-radius:0; width:18px; vertical-align:3px; }
.scroll { max-height:560px; overflow:auto; border:1px solid var(--line); border-radius:8px; }
table { border-collapse:collapse; width:100%; background:#fff; }
th, td { padding:5px 9px; border-bottom:1px solid var(--line); text-align:left; white-space:nowrap; }
td.n, th.n { text-align:right; font-variant-numeric:tabular-nums; }
thead th { position:sticky; top:0; background:#f9fafb; font-weight:600; font-size:12.5px; z-index:1; }
table.sortable th { cursor:pointer; user-select:none; }
table.sortable th[data-dir="asc"]::after { content:" \25B2"; font-size:10px; }
table.sortable th[data-dir="desc"]::after { content:" \25BC"; font-size:10px; }
tr.hit td { background:#fef9c3; }
td.name { max-width:420px; overflow:hidden; text-overflow:ellipsis; }
input.filter { padding:6px 10px; border:1px solid var(--line); border-radius:6px; width:280px; margin:4px 0 8px; font:inherit; }
footer { color:var(--muted); font-size:12px; margin-top:30px; }
)css";

constexpr const char* kScript = R"js(
(function () {
  function key(cell) { var v = cell.getAttribute('data-v'); return v === null ? cell.textContent : v; }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('data-dir') !== 'asc';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', asc ? 'asc' : 'desc');
        var numeric = th.classList.contains('n');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]), r;
          if (numeric) {
            var fx = parseFloat(x), fy = parseFloat(y);
            if (isNaN(fx)) fx = -Infinity;
            if (isNaN(fy)) fy = -Infinity;
            r = fx === fy ? 0 : (fx < fy ? -1 : 1);
          } else {
            r = x.localeCompare(y);
          }
          return asc ? r : -r;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  document.querySelectorAll('input.filter').forEach(function (input) {
    input.addEventListener('input', function () {
      var table = document.getElementById(input.getAttribute('data-table'));
      var needle = input.value.toLowerCase();
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        row.style.display = row.cells[1].textContent.toLowerCase().indexOf(needle) >= 0 ? '' : 'none';
      });
    });
  });
  document.querySelectorAll('rect.t').forEach(function (rect) {
    rect.addEventListener('click', function () {
      var row = document.getElementById(rect.getAttribute('data-row'));
      if (!row) return;
      document.querySelectorAll('tr.hit').forEach(function (r) { r.classList.remove('hit'); });
      row.classList.add('hit');
      row.scrollIntoView({block: 'center'});
    });
  });
  document.body.setAttribute('data-ready', '1');  // The render test checks the script ran to the end.
})();
)js";

std::string DeltaHtml(const ModelReport& report, const std::string& key) {
  if (!report.baseline.has_value()) return "";
  for (const FigureDelta& delta : report.baseline->figures) {
    if (delta.key != key) continue;
    const char* css = delta.delta > 0 ? "up" : (delta.delta < 0 ? "down" : "");
    return absl::StrCat("<div class=\"delta ", css, "\">", delta.delta == 0 ? "unchanged" : HtmlEscape(DeltaToString(delta)), " vs baseline</div>");
  }
  return "";
}

// `known` false: a sum of sized tensors only, shown as the lower bound it is ("unknown" when 0).
void AppendFigure(std::string* out, const ModelReport& report, const std::string& label, const std::string& key,
                  int64_t bytes, const std::string& note, bool peak = false, bool known = true) {
  absl::StrAppend(out, "<div class=\"figure", peak ? " peak" : "", "\"><div class=\"label\">", HtmlEscape(label),
                  "</div><div class=\"value\">", HtmlEscape(HumanBytesOrBound(bytes, known)),
                  "</div><div class=\"exact\">", HtmlEscape(ExactBytesOrBound(bytes, known)),
                  known ? " bytes" : bytes == 0 ? "" : " bytes, a lower bound",
                  note.empty() ? "" : absl::StrCat(" · ", HtmlEscape(note)), "</div>", DeltaHtml(report, key), "</div>");
}

std::string Cell(const std::string& text, const std::string& sort_key = "", bool numeric = false) {
  return absl::StrCat("<td", numeric ? " class=\"n\"" : "", sort_key.empty() ? "" : absl::StrCat(" data-v=\"", sort_key, "\""),
                      ">", HtmlEscape(text), "</td>");
}

void AppendTensorTable(std::string* out, const Analysis& analysis, const std::string& id) {
  absl::StrAppend(out, "<input class=\"filter\" type=\"search\" placeholder=\"Filter tensors by name\" data-table=\"",
                  id, "-table\">");
  absl::StrAppend(out, "<div class=\"scroll\"><table class=\"sortable\" id=\"", id,
                  "-table\"><thead><tr><th class=\"n\">#</th><th>name</th><th>role</th><th>dtype</th><th>shape</th>"
                  "<th class=\"n\">bytes</th><th class=\"n\">aligned</th><th class=\"n\">first</th>"
                  "<th class=\"n\">last</th><th class=\"n\">offset</th><th>producer</th></tr></thead><tbody>");
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    const TensorRecord& tensor = analysis.tensors[i];
    absl::StrAppend(out, "<tr id=\"", id, "-r", i, "\">", Cell(absl::StrCat(i), "", true), "<td class=\"name mono\" title=\"",
                    HtmlEscape(tensor.name), "\">", HtmlEscape(tensor.name), "</td>", Cell(TensorRoleName(tensor.role)),
                    Cell(tensor.dtype), Cell(ShapeToString(tensor.shape)));
    if (tensor.bytes.has_value()) {
      absl::StrAppend(out, Cell(WithThousands(*tensor.bytes), absl::StrCat(*tensor.bytes), true),
                      Cell(HumanBytes(tensor.aligned_bytes), absl::StrCat(tensor.aligned_bytes), true));
    } else {
      absl::StrAppend(out, "<td class=\"n\" data-v=\"-1\" title=\"", HtmlEscape(tensor.unsized_reason),
                      "\">unsized</td>", Cell("–", "-1", true));
    }
    absl::StrAppend(out, Cell(absl::StrCat(tensor.first_step), "", true), Cell(absl::StrCat(tensor.last_step), "", true),
                    tensor.offset.has_value()
                        ? Cell(WithThousands(*tensor.offset), absl::StrCat(*tensor.offset), true)
                        : Cell("–", "-1", true),
                    Cell(tensor.producer), "</tr>");
  }
  absl::StrAppend(out, "</tbody></table></div>\n");
}

// The title and the line of what was analyzed how.
void AppendHeading(std::string* out, const Analysis& analysis, bool top_level) {
  absl::StrAppend(out, top_level ? "<h1>" : "<h2>", "onnx-footprint · <code>", HtmlEscape(analysis.model.path),
                  "</code>", top_level ? "</h1>" : "</h2>");
  std::vector<std::string> dims;
  for (const auto& [name, value] : analysis.options.dims) dims.push_back(absl::StrCat(name, "=", value));
  absl::StrAppend(out, "<div class=\"sub\">", analysis.model.nodes, " nodes · ", analysis.schedule.size(),
                  " steps · device ", HtmlEscape(analysis.device.name), " (alignment ",
                  analysis.device.alignment_bytes, " B) · schedule ",
                  analysis.options.optimize_schedule ? "optimized" : "given",
                  analysis.file_order_was_valid ? ""
                  : analysis.modes.accumulate.nodes + analysis.modes.fused_nodes + analysis.modes.reorder_nodes > 0
                      ? " (sorted topologically after the fusions)"
                      : " (file order sorted topologically)", " · alias ",
                  analysis.options.alias ? "on" : "off", " · in-place ", analysis.modes.inplace.enabled ? "on" : "off",
                  " · accumulate ", analysis.modes.accumulate.enabled ? "on" : "off",
                  analysis.modes.qdq.enabled ? absl::StrCat(" · qdq on (", analysis.modes.qdq.groups, " groups)") : "",
                  dims.empty() ? "" : absl::StrCat(" · dims ", HtmlEscape(absl::StrJoin(dims, " "))),
                  analysis.model.producer.empty() ? "" : absl::StrCat(" · from ", HtmlEscape(analysis.model.producer)),
                  "</div>");
}

// First, before any figure: which dims have no value and how to give them
// one, and whether some tensor has no size.
void AppendUnknowns(std::string* out, const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  if (!analysis.unbound_dims.empty()) {
    // First, before any figure: which dims have no value, and how to give them one.
    const std::vector<std::string> examples = BindingExamples(analysis);
    absl::StrAppend(out, "<div class=\"warn\"><b>Unbound input dims:</b> ", HtmlEscape(DescribeUnboundDims(analysis)),
                    ". The sizes that use them are formulas, not counted in the figures. Bind them: ",
                    absl::StrJoin(examples, " or ", [](std::string* o, const std::string& e) {
                      absl::StrAppend(o, "<code>", HtmlEscape(e), "</code>");
                    }),
                    "</div>");
  }
  if (!memory.complete) {
    absl::StrAppend(out, "<div class=\"warn\"><b>Incomplete:</b> ", memory.unsized_tensors,
                    " tensor(s) have no known size; the figures are lower bounds. They are listed as "
                    "<i>unsized</i> in the table below.</div>");
  }
}

// The figures, peak first, each with its note and its change against the baseline.
void AppendFigures(std::string* out, const ModelReport& report) {
  const Analysis& analysis = *report.analysis;
  const MemoryFigures& memory = analysis.memory;
  absl::StrAppend(out, "<div class=\"figures\" style=\"margin-top:14px\">");
  const bool runtime = !analysis.options.runtime.empty();
  const bool known = memory.complete;  // Else every figure that sums tensors is a lower bound.
  const bool weights_known = WeightsKnown(analysis);
  AppendFigure(out, report, "Peak", "peak_bytes", memory.peak_bytes,
               !runtime ? std::string(analysis.options.fold_constants ? "weights + folded + arena" : "weights + arena")
                        : RuntimePeakNote(analysis),
               true, known);
  AppendFigure(out, report, "Weights", "weights_bytes", memory.weights_bytes, "resident", false, weights_known);
  if (analysis.options.fold_constants) {
    AppendFigure(out, report, "Folded weights", "folded_weights_bytes", memory.folded_weights_bytes,
                 absl::StrCat(analysis.modes.fold.nodes, " nodes at load"), false, weights_known);
  }
  AppendFigure(out, report, "Arena", "arena_bytes", memory.arena_bytes,
               analysis.plan.proven_optimal ? "optimal" : analysis.plan.algorithm, false, known);
  if (runtime) {
    AppendFigure(out, report, "Runtime tensors", "runtime_tensor_bytes", memory.runtime_tensor_bytes,
                 absl::StrCat(RuntimeLabel(analysis), "'s own planner"), false, known);
    AppendFigure(out, report, "Runtime overhead", "runtime_overhead_bytes", memory.runtime_overhead_bytes,
                 "no tensor", false, known);
    AppendFigure(out, report, "Runtime reserved", "runtime_reserved_bytes", memory.runtime_reserved_bytes,
                 memory.runtime_peak_reserved ? "after a first run, defaults; in the peak"
                                              : "after a first run, defaults",
                 false, known);
    AppendFigure(out, report, "Runtime weights", "runtime_weights_bytes", memory.runtime_weights_bytes,
                 "after load", false, weights_known);
    if (memory.runtime_mapped_weights_bytes > 0) {
      AppendFigure(out, report, "Runtime mapped", "runtime_mapped_weights_bytes", memory.runtime_mapped_weights_bytes,
                   "external data, mapped: not heap", false, weights_known);
    }
    if (memory.runtime_load_peak_bytes > 0) {
      AppendFigure(out, report, "Runtime load peak", "runtime_load_peak_bytes", memory.runtime_load_peak_bytes,
                   absl::StrCat("creating the session: ", memory.runtime_load_peak_step,
                                memory.runtime_peak_phase == "session creation" ? "; the peak" : ""),
                   false, weights_known);
    }
  }
  const double ratio = memory.lower_bound_bytes == 0
                           ? 1.0
                           : static_cast<double>(memory.arena_bytes) / static_cast<double>(memory.lower_bound_bytes);
  AppendFigure(out, report, "Lower bound", "lower_bound_bytes", memory.lower_bound_bytes,
               absl::StrFormat("arena %.3f×", ratio), false, known);
  AppendFigure(out, report, "Baseline lower bound", "baseline_lower_bound_bytes",
               analysis.modes.baseline_lower_bound_bytes,
               known ? DescribeModeSavings(analysis.modes) : "mode savings unknown", false, known);
  AppendFigure(out, report, "Naive (no reuse)", "naive_bytes", memory.naive_bytes,
               known ? absl::StrFormat("reuse saves %.1f%%", ReuseSavingsPercent(memory)) : "reuse savings unknown",
               false, known);
  absl::StrAppend(out, "<div class=\"figure\"><div class=\"label\">Unsized tensors</div><div class=\"value\">",
                  memory.unsized_tensors, "</div><div class=\"exact\">",
                  memory.unsized_tensors == 0 ? "every size known" : "not counted above", "</div>",
                  DeltaHtml(report, "unsized_tensors"), "</div>");
  if (const int64_t bound = BoundTensorCount(analysis); bound > 0) {
    absl::StrAppend(out, "<div class=\"figure\"><div class=\"label\">Bound tensors</div><div class=\"value\">", bound,
                    "</div><div class=\"exact\">sized as an undecided If's larger branch (upper bounds)</div></div>");
  }
  absl::StrAppend(out, "</div>");
}

// The figures at sample bindings of unbound dims.
void AppendSamples(std::string* out, const Analysis& analysis) {
  if (!analysis.samples.empty()) {
    absl::StrAppend(out, "<div class=\"card\"><h3>Samples</h3><div class=\"sub\">The figures at sample bindings of the "
                         "unbound dims, not their range.</div><table><thead><tr><th>binding</th><th class=\"n\">peak</th>"
                         "<th class=\"n\">arena</th><th class=\"n\">lower bound</th><th class=\"n\">naive</th>"
                         "<th class=\"n\">unsized</th><th></th></tr></thead><tbody>");
    for (const SampleFigures& sample : analysis.samples) {
      std::vector<std::string> binding;
      for (const auto& [name, value] : sample.dims) binding.push_back(absl::StrCat(name, "=", value));
      const bool sample_known = sample.memory.complete;
      absl::StrAppend(out, "<tr>", Cell(absl::StrJoin(binding, " ")),
                      Cell(HumanBytesOrBound(sample.memory.peak_bytes, sample_known), "", true),
                      Cell(HumanBytesOrBound(sample.memory.arena_bytes, sample_known), "", true),
                      Cell(HumanBytesOrBound(sample.memory.lower_bound_bytes, sample_known), "", true),
                      Cell(HumanBytesOrBound(sample.memory.naive_bytes, sample_known), "", true),
                      Cell(absl::StrCat(sample.memory.unsized_tensors), "", true), Cell(sample.label), "</tr>");
    }
    absl::StrAppend(out, "</tbody></table></div>");
  }
}

// The budgets' and the device's verdicts as chips.
void AppendChecks(std::string* out, const Analysis& analysis) {
  const bool known = analysis.memory.complete;
  const bool weights_known = WeightsKnown(analysis);
  if (!analysis.budgets.empty() || analysis.fits.has_value()) {
    absl::StrAppend(out, "<div class=\"chips\">");
    for (const BudgetCheck& check : analysis.budgets) {
      absl::StrAppend(out, "<span class=\"chip ", check.ok ? "ok" : "over", "\">--max-", check.figure, " ",
                      HtmlEscape(HumanBytes(check.limit_bytes)), ": ", check.ok ? "ok" : "OVER", " (",
                      HtmlEscape(HumanBytesOrBound(check.actual_bytes, check.figure == "weights" ? weights_known : known)),
                      ")</span>");
    }
    if (analysis.fits.has_value()) {
      absl::StrAppend(out, "<span class=\"chip ", *analysis.fits ? "ok" : "over", "\">fits on ",
                      HtmlEscape(analysis.device.name), ": ", *analysis.fits ? "yes" : "NO", "</span>");
    }
    absl::StrAppend(out, "</div>");
  }
}

void AppendBaselineSource(std::string* out, const ModelReport& report) {
  const Analysis& analysis = *report.analysis;
  if (report.baseline.has_value()) {
    absl::StrAppend(out, "<div class=\"sub\" style=\"margin-top:8px\">Changes against the baseline report <code>",
                    HtmlEscape(report.baseline->old_figures.source), "</code>",
                    report.baseline->old_figures.model_path != analysis.model.path
                        ? absl::StrCat(" (of <code>", HtmlEscape(report.baseline->old_figures.model_path), "</code>)")
                        : "",
                    "</div>");
  }

}

void AppendModelSection(std::string* out, const ModelReport& report, const std::string& id, bool top_level) {
  const Analysis& analysis = *report.analysis;
  absl::StrAppend(out, "<section id=\"", id, "\">");
  AppendHeading(out, analysis, top_level);
  AppendUnknowns(out, analysis);
  AppendFigures(out, report);
  AppendSamples(out, analysis);
  AppendChecks(out, analysis);
  AppendBaselineSource(out, report);

  for (const TierView& tier : TiersOf(analysis)) AppendTierCard(out, analysis, tier, id);
  absl::StrAppend(out, "<div class=\"card\"><h3>Arena tensors (", analysis.tensors.size(),
                  ")</h3><div class=\"sub\">Click a column to sort.</div>");
  AppendTensorTable(out, analysis, id);
  absl::StrAppend(out, "</div>");
  if (!analysis.warnings.empty()) {
    absl::StrAppend(out, "<div class=\"card\"><h3>Warnings</h3><ul>");
    for (const std::string& warning : analysis.warnings) absl::StrAppend(out, "<li>", HtmlEscape(warning), "</li>");
    absl::StrAppend(out, "</ul></div>");
  }
  absl::StrAppend(out, "</section>\n");
}

void AppendSummary(std::string* out, const std::vector<ModelReport>& reports) {
  absl::StrAppend(out, "<h1>onnx-footprint · ", reports.size(), " models</h1><div class=\"card\"><table>"
                       "<thead><tr><th>model</th><th class=\"n\">peak</th><th class=\"n\">weights</th>"
                       "<th class=\"n\">arena</th><th class=\"n\">lower bound</th><th class=\"n\">unsized</th>"
                       "<th>fits</th><th>status</th></tr></thead><tbody>");
  for (size_t i = 0; i < reports.size(); ++i) {
    const ModelReport& report = reports[i];
    if (!report.analysis.has_value()) {
      absl::StrAppend(out, "<tr><td class=\"mono\">", HtmlEscape(report.path),
                      "</td><td class=\"n\">–</td><td class=\"n\">–</td><td class=\"n\">–</td><td class=\"n\">–</td>"
                      "<td class=\"n\">–</td><td>–</td><td class=\"up\">error: ",
                      HtmlEscape(report.error), "</td></tr>");
      continue;
    }
    const MemoryFigures& memory = report.analysis->memory;
    const std::optional<bool>& fits = report.analysis->fits;
    absl::StrAppend(out, "<tr><td class=\"mono\"><a href=\"#m", i, "\">", HtmlEscape(report.path), "</a></td>",
                    Cell(HumanBytesOrBound(memory.peak_bytes, memory.complete), "", true),
                    Cell(HumanBytesOrBound(memory.weights_bytes, WeightsKnown(*report.analysis)), "", true),
                    Cell(HumanBytesOrBound(memory.arena_bytes, memory.complete), "", true),
                    Cell(HumanBytesOrBound(memory.lower_bound_bytes, memory.complete), "", true),
                    Cell(absl::StrCat(memory.unsized_tensors), "", true),
                    Cell(!fits.has_value() ? "–" : (*fits ? "yes" : "NO")), "<td class=\"",
                    report.exit_code == 0 ? "down" : "up", "\">", HtmlEscape(StatusOf(report)), "</td></tr>");
  }
  absl::StrAppend(out, "</tbody></table></div>\n");
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderHtml(const std::vector<ModelReport>& reports) {
  const bool single = reports.size() == 1 && reports[0].analysis.has_value();
  const std::string title = single ? absl::StrCat("onnx-footprint: ", reports[0].analysis->model.path)
                                   : absl::StrCat("onnx-footprint: ", reports.size(), " models");
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">"
      "<title>",
      HtmlEscape(title), "</title><style>", kStyle, "</style></head><body><main>\n");
  if (single) {
    AppendModelSection(&out, reports[0], "m0", true);
  } else {
    AppendSummary(&out, reports);
    for (size_t i = 0; i < reports.size(); ++i) {
      if (reports[i].analysis.has_value()) AppendModelSection(&out, reports[i], absl::StrCat("m", i), false);
    }
  }
  absl::StrAppend(&out, "<footer>Generated by onnx-footprint. Figures follow the memory model: peak = weights + "
                        "arena; lower bound = the busiest step's live bytes; naive = one buffer per tensor.</footer>\n");
  absl::StrAppend(&out, "</main><script>", kScript, "</script></body></html>\n");
  return out;
}

}  // namespace footprint
