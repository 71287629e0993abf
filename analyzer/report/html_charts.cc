#include "analyzer/report/html_charts.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/report/format.h"
#include "analyzer/report/html.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

// Chart geometry, in SVG user units (the SVG scales to the page width).
constexpr double kChartWidth = 1240;
constexpr double kLeft = 78;
constexpr double kRight = 16;
constexpr double kTop = 14;
constexpr double kBottom = 34;

std::string Num(double value) { return absl::StrFormat("%.2f", value); }

std::string RoleColor(TensorRole role, size_t index) {
  // Alternating lightness keeps neighbours apart without a rainbow.
  const int lightness = 44 + static_cast<int>(index % 4) * 6;
  switch (role) {
    case TensorRole::kGraphInput: return absl::StrFormat("hsl(152,48%%,%d%%)", lightness);
    case TensorRole::kGraphOutput: return absl::StrFormat("hsl(275,45%%,%d%%)", lightness + 4);
    case TensorRole::kSubgraphWorkspace: return absl::StrFormat("hsl(32,70%%,%d%%)", lightness + 4);
    case TensorRole::kKernelWorkspace: return absl::StrFormat("hsl(0,60%%,%d%%)", lightness + 4);
    case TensorRole::kActivation: break;
  }
  return absl::StrFormat("hsl(212,62%%,%d%%)", lightness + 2);
}

// Up to `count` tick values from 0 to `max`, at a round step (1, 2, 5 x 10^k).
std::vector<int64_t> Ticks(int64_t max, int count) {
  std::vector<int64_t> ticks;
  if (max <= 0) return {0};
  const double raw = static_cast<double>(max) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (step >= raw) break;
  }
  const int64_t whole = std::max<int64_t>(1, static_cast<int64_t>(std::llround(step)));
  for (int64_t value = 0; value <= max; value += whole) ticks.push_back(value);
  return ticks;
}

// Byte ticks at binary-round steps so labels read "256 KiB", not "262 KB":
// the smallest power of two that gives at most `count` intervals.
std::vector<int64_t> ByteTicks(int64_t max, int count) {
  if (max <= 0) return {0};
  __int128 step = 1;
  while (step * count < max) step *= 2;
  std::vector<int64_t> ticks;
  for (__int128 value = 0; value <= max; value += step) ticks.push_back(static_cast<int64_t>(value));
  return ticks;
}

struct Axes {
  double width = kChartWidth;
  double height = 0;
  int64_t steps = 1;     // x runs over [0, steps).
  int64_t max_bytes = 1;  // y runs over [0, max_bytes].
  double PlotWidth() const { return width - kLeft - kRight; }
  double PlotHeight() const { return height - kTop - kBottom; }
  double X(double step) const { return kLeft + PlotWidth() * step / static_cast<double>(steps); }
  double Y(double bytes) const { return kTop + PlotHeight() * (1.0 - bytes / static_cast<double>(max_bytes)); }
};

void AppendAxes(std::string* out, const Axes& axes) {
  for (int64_t value : ByteTicks(axes.max_bytes, 6)) {
    const double y = axes.Y(static_cast<double>(value));
    absl::StrAppend(out, "<line class=\"grid\" x1=\"", Num(kLeft), "\" x2=\"", Num(axes.width - kRight), "\" y1=\"",
                    Num(y), "\" y2=\"", Num(y), "\"/>");
    absl::StrAppend(out, "<text x=\"", Num(kLeft - 6), "\" y=\"", Num(y + 4), "\" text-anchor=\"end\">",
                    HtmlEscape(HumanBytes(value)), "</text>");
  }
  const double bottom = kTop + axes.PlotHeight();
  for (int64_t step : Ticks(axes.steps, 12)) {
    if (step >= axes.steps && axes.steps > 1) break;
    const double x = axes.X(static_cast<double>(step) + 0.5);
    absl::StrAppend(out, "<line class=\"axis\" x1=\"", Num(x), "\" x2=\"", Num(x), "\" y1=\"", Num(bottom),
                    "\" y2=\"", Num(bottom + 4), "\"/>");
    absl::StrAppend(out, "<text x=\"", Num(x), "\" y=\"", Num(bottom + 16), "\" text-anchor=\"middle\">", step,
                    "</text>");
  }
  absl::StrAppend(out, "<text x=\"", Num(kLeft + axes.PlotWidth() / 2), "\" y=\"", Num(axes.height - 2),
                  "\" text-anchor=\"middle\">step</text>");
  absl::StrAppend(out, "<path class=\"axis\" fill=\"none\" d=\"M", Num(kLeft), " ", Num(kTop), " V", Num(bottom),
                  " H", Num(axes.width - kRight), "\"/>");
}

// A labelled horizontal line; the tier size is labelled at the right end and
// the lower bound at the left, so the two labels never collide.
void AppendHorizontal(std::string* out, const Axes& axes, int64_t bytes, const char* css_class,
                      const std::string& label, bool label_left = false) {
  const double y = axes.Y(static_cast<double>(bytes));
  absl::StrAppend(out, "<line class=\"", css_class, "\" x1=\"", Num(kLeft), "\" x2=\"", Num(axes.width - kRight),
                  "\" y1=\"", Num(y), "\" y2=\"", Num(y), "\"/>");
  absl::StrAppend(out, "<text x=\"", Num(label_left ? kLeft + 6 : axes.width - kRight - 4), "\" y=\"", Num(y - 4),
                  "\" text-anchor=\"", label_left ? "start" : "end", "\">", HtmlEscape(label), "</text>");
}

std::string TensorTitle(const TensorRecord& tensor) {
  return absl::StrCat(tensor.name, "\n", tensor.dtype, " ", ShapeToString(tensor.shape), "\n",
                      WithThousands(tensor.bytes.value_or(0)), " bytes (aligned ", WithThousands(tensor.aligned_bytes),
                      ")\nlive steps [", tensor.first_step, ", ", tensor.last_step, "]\noffset ",
                      WithThousands(tensor.offset.value_or(0)),
                      tensor.producer.empty() ? "" : absl::StrCat("\nwritten by ", tensor.producer),
                      tensor.shares_with.empty()
                          ? ""
                          : absl::StrCat("\nshares the bytes of ", tensor.shares_with, " (", tensor.sharing, ")"));
}

// x = step, y = offset; one rect per planned tensor.
void AppendArenaChart(std::string* out, const Analysis& analysis, const TierView& tier, const std::string& id) {
  Axes axes{.height = 440,
            .steps = std::max<int64_t>(1, static_cast<int64_t>(analysis.schedule.size())),
            .max_bytes = std::max<int64_t>(1, tier.size_bytes)};
  absl::StrAppend(out, "<svg viewBox=\"0 0 ", Num(axes.width), " ", Num(axes.height),
                  "\" role=\"img\" aria-label=\"arena: offset by step\">");
  AppendAxes(out, axes);
  size_t index = 0;
  for (size_t i = 0; i < tier.tensors.size(); ++i) {
    const TensorRecord* tensor = tier.tensors[i];
    const int64_t offset = tier.offsets[i];
    const double x = axes.X(static_cast<double>(tensor->first_step));
    const double width =
        std::max(0.8, axes.X(static_cast<double>(tensor->last_step + 1)) - x);
    const double top = axes.Y(static_cast<double>(offset + tensor->aligned_bytes));
    const double height = std::max(1.0, axes.Y(static_cast<double>(offset)) - top);
    absl::StrAppend(out, "<rect class=\"t\" data-row=\"", id, "-r", tensor - analysis.tensors.data(), "\" x=\"",
                    Num(x), "\" y=\"", Num(top), "\" width=\"", Num(width), "\" height=\"", Num(height),
                    "\" fill=\"", RoleColor(tensor->role, index++), "\"><title>", HtmlEscape(TensorTitle(*tensor)),
                    "</title></rect>");
  }
  if (tier.lower_bound_bytes > 0 && tier.lower_bound_bytes < tier.size_bytes) {
    AppendHorizontal(out, axes, tier.lower_bound_bytes, "bound",
                     absl::StrCat("lower bound ", HumanBytes(tier.lower_bound_bytes)), true);
  }
  AppendHorizontal(out, axes, tier.size_bytes, "arena", absl::StrCat(tier.name, " ", HumanBytes(tier.size_bytes)));
  absl::StrAppend(out, "</svg>\n");
}

// Live bytes at each step, as a step curve, with the lower bound and the arena.
void AppendLiveChart(std::string* out, const TierView& tier) {
  const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(tier.live_bytes_per_step.size()));
  Axes axes{.height = 250, .steps = steps, .max_bytes = std::max<int64_t>(1, tier.size_bytes)};
  absl::StrAppend(out, "<svg viewBox=\"0 0 ", Num(axes.width), " ", Num(axes.height),
                  "\" role=\"img\" aria-label=\"live bytes per step\">");
  AppendAxes(out, axes);
  if (!tier.live_bytes_per_step.empty()) {
    std::string path = absl::StrCat("M", Num(axes.X(0)), " ", Num(axes.Y(0)));
    for (size_t step = 0; step < tier.live_bytes_per_step.size(); ++step) {
      const double y = axes.Y(static_cast<double>(tier.live_bytes_per_step[step]));
      absl::StrAppend(&path, " V", Num(y), " H", Num(axes.X(static_cast<double>(step + 1))));
    }
    absl::StrAppend(&path, " V", Num(axes.Y(0)), " Z");
    absl::StrAppend(out, "<path class=\"curve\" d=\"", path, "\"><title>live bytes per step</title></path>");
  }
  AppendHorizontal(out, axes, tier.lower_bound_bytes, "bound",
                   absl::StrCat("lower bound ", HumanBytes(tier.lower_bound_bytes)), true);
  if (tier.size_bytes != tier.lower_bound_bytes) {
    AppendHorizontal(out, axes, tier.size_bytes, "arena", absl::StrCat(tier.name, " ", HumanBytes(tier.size_bytes)));
  }
  absl::StrAppend(out, "</svg>\n");
}

}  // namespace

std::vector<TierView> TiersOf(const Analysis& analysis) {
  // One picture of the single arena (the spec's figures) while every planned
  // tensor sits in one tier; one picture per tier once the device spilled
  // tensors to others, each with its own offsets, curve and bound.
  std::vector<std::string> used;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (!tensor.offset.has_value() || !tensor.bytes.has_value()) continue;
    if (std::find(used.begin(), used.end(), tensor.tier) == used.end()) used.push_back(tensor.tier);
  }
  const TierSummary* only_tier = nullptr;
  for (const TierSummary& tier : analysis.tiers) {
    if (used.size() == 1 && tier.name == used[0]) only_tier = &tier;
  }
  if (used.size() <= 1) {
    TierView arena{.name = only_tier != nullptr ? only_tier->name : "arena",
                   .capacity_bytes = only_tier != nullptr ? only_tier->capacity_bytes : std::nullopt,
                   .size_bytes = analysis.memory.arena_bytes,
                   .lower_bound_bytes = analysis.memory.lower_bound_bytes,
                   .live_bytes_per_step = analysis.live_bytes_per_step};
    for (const TensorRecord& tensor : analysis.tensors) {
      if (!tensor.offset.has_value() || !tensor.bytes.has_value()) continue;
      arena.tensors.push_back(&tensor);
      arena.offsets.push_back(*tensor.offset);
    }
    return {arena};
  }
  std::vector<TierView> views;
  const size_t steps = std::max<size_t>(1, analysis.live_bytes_per_step.size());
  for (const TierSummary& tier : analysis.tiers) {
    if (std::find(used.begin(), used.end(), tier.name) == used.end()) continue;
    TierView view{.name = tier.name, .capacity_bytes = tier.capacity_bytes, .size_bytes = tier.arena_bytes};
    view.live_bytes_per_step.assign(steps, 0);
    for (const TensorRecord& tensor : analysis.tensors) {
      if (tensor.tier != tier.name || !tensor.tier_offset.has_value() || !tensor.bytes.has_value()) continue;
      view.tensors.push_back(&tensor);
      view.offsets.push_back(*tensor.tier_offset);
      if (!tensor.shares_with.empty()) continue;  // Its bytes are its owner's.
      for (int64_t step = tensor.first_step; step <= tensor.last_step && step < static_cast<int64_t>(steps); ++step) {
        view.live_bytes_per_step[step] += tensor.aligned_bytes;
      }
    }
    view.lower_bound_bytes = *std::max_element(view.live_bytes_per_step.begin(), view.live_bytes_per_step.end());
    views.push_back(std::move(view));
  }
  return views;
}

void AppendTierCard(std::string* out, const Analysis& analysis, const TierView& tier, const std::string& id) {
  absl::StrAppend(out, "<div class=\"card\"><h3>Memory tier: ", HtmlEscape(tier.name), "</h3><div class=\"sub\">",
                  HtmlEscape(HumanBytes(tier.size_bytes)), " planned for ", tier.tensors.size(),
                  " tensors · lower bound ", HtmlEscape(HumanBytes(tier.lower_bound_bytes)),
                  tier.capacity_bytes.has_value()
                      ? absl::StrCat(" · capacity ", HtmlEscape(HumanBytes(*tier.capacity_bytes)))
                      : "",
                  "</div>");
  absl::StrAppend(out,
                  "<div class=\"legend\"><span><i style=\"background:hsl(152,48%,50%)\"></i>graph input</span>"
                  "<span><i style=\"background:hsl(212,62%,52%)\"></i>activation</span>"
                  "<span><i style=\"background:hsl(275,45%,54%)\"></i>graph output</span>"
                  "<span><i style=\"background:hsl(32,70%,54%)\"></i>subgraph workspace</span>"
                  "<span><i class=\"solid\"></i>tier size</span><span><i class=\"dash\"></i>lower bound</span>"
                  "<span>hover a block for its tensor; click it to find its row</span></div>");
  AppendArenaChart(out, analysis, tier, id);
  absl::StrAppend(out, "<h3>Live bytes per step</h3>");
  AppendLiveChart(out, tier);
  absl::StrAppend(out, "</div>");
}

}  // namespace footprint
