#include "analyzer/report/fit_report.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/report/format.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/markdown.h"

namespace footprint {
namespace {

std::string Verdict(const std::optional<bool>& fits) {
  if (!fits.has_value()) return "unknown";
  return *fits ? "yes" : "no";
}

std::string TierLine(const std::vector<FitTier>& tiers) {
  std::vector<std::string> parts;
  for (const FitTier& tier : tiers) {
    std::string holds = absl::StrCat(tier.holds_weights ? "W" : "", tier.holds_weights && tier.holds_activations ? "+" : "",
                                     tier.holds_activations ? "A" : "");
    parts.push_back(absl::StrCat(tier.name, " ",
                                 tier.capacity_bytes.has_value() ? HumanBytes(*tier.capacity_bytes) : "unknown", " (",
                                 holds, ")"));
  }
  return absl::StrJoin(parts, ", ");
}

void WriteTier(const FitTier& tier, JsonWriter& json, bool planned) {
  json.BeginObject();
  json.Key("tier").String(tier.name);
  if (planned) {
    json.Key("arena_bytes").Int(tier.arena_bytes);
    json.Key("weights_bytes").Int(tier.weights_bytes);
  } else {
    json.Key("capacity_bytes");
    if (tier.capacity_bytes.has_value()) {
      json.Int(*tier.capacity_bytes);
    } else {
      json.Null();
    }
    json.Key("holds_weights").Bool(tier.holds_weights);
    json.Key("holds_activations").Bool(tier.holds_activations);
    json.Key("arena_bytes").Int(tier.arena_bytes);
    json.Key("weights_bytes").Int(tier.weights_bytes);
  }
  json.EndObject();
}

void WriteOptionalBool(const std::optional<bool>& value, JsonWriter& json) {
  if (value.has_value()) {
    json.Bool(*value);
  } else {
    json.Null();
  }
}

void WriteBindings(const std::map<std::string, int64_t>& bindings, JsonWriter& json) {
  json.BeginObject();
  for (const auto& [name, value] : bindings) json.Key(name).Int(value);
  json.EndObject();
}

// "peak P = weights W + arena A" (or the runtime's parts); a lower bound says so.
std::string PeakLine(const FitReport& report) {
  std::vector<std::string> parts;
  for (const FitPeakPart& part : report.peak_parts) {
    parts.push_back(absl::StrCat(part.part, " ", HumanBytesOrBound(part.bytes, part.known)));
  }
  return absl::StrCat("peak ", HumanBytesOrBound(report.peak_bytes, report.complete),
                      parts.empty() ? "" : absl::StrCat(" = ", absl::StrJoin(parts, " + ")),
                      report.complete ? "" : absl::StrCat(" (", report.unsized_tensors, " tensors unsized)"));
}

// One table row per option: the option, its new peak, fits, how to get it.
std::vector<std::vector<std::string>> Rows(const FitReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const FitOption& option : report.options) {
    rows.push_back({option.description, option.planned ? HumanBytesOrBound(option.peak_bytes, option.complete) : "-",
                    Verdict(option.fits), option.change});
  }
  return rows;
}

// The members only options of `option.kind` have.
void WriteKindMembers(const FitOption& option, JsonWriter& json) {
  if (option.kind == "dim") {
    json.Key("dim").String(option.dim);
    json.Key("largest_fitting");
    if (option.largest_fitting.has_value()) {
      json.Int(*option.largest_fitting);
    } else {
      json.Null();
    }
    json.Key("bindings");
    WriteBindings(option.bindings, json);
    json.Key("bindings_above");
    WriteBindings(option.bindings_above, json);
    json.Key("reason").String(option.reason);
  } else if (option.kind == "dtype") {
    json.Key("dtype").String(option.dtype);
    json.Key("quantized_nodes").Int(option.quantized_nodes);
    json.Key("float_ops");
    WriteBindings(option.float_ops, json);
  } else if (option.kind == "tiers") {
    json.Key("ram_bytes").Int(option.ram_bytes);
    json.Key("placement").BeginArray();
    for (const FitTier& tier : option.placement) WriteTier(tier, json, true);
    json.EndArray();
  } else if (option.kind == "patch") {
    json.Key("segments").BeginArray();
    for (const FitPatchSegment& segment : option.segments) {
      json.BeginObject();
      json.Key("first_node").String(segment.first_node);
      json.Key("last_node").String(segment.last_node);
      json.Key("input").String(segment.input);
      if (!segment.other_inputs.empty()) {  // Written only for a segment with several inputs: others' JSON unchanged.
        json.Key("inputs").BeginArray();
        json.String(segment.input);
        for (const std::string& input : segment.other_inputs) json.String(input);
        json.EndArray();
      }
      json.Key("output").String(segment.output);
      json.Key("nodes").Int(segment.nodes);
      json.Key("patches").BeginArray();
      json.Int(segment.rows);
      json.Int(segment.cols);
      json.EndArray();
      json.Key("macs_before").Int(segment.macs_before);
      json.Key("macs_after").Int(segment.macs_after);
      if (segment.output_in_pieces) json.Key("output_in_pieces").Bool(true);
      json.EndObject();
    }
    json.EndArray();
    json.Key("model_macs").Int(option.model_macs);
    json.Key("extra_macs").Int(option.extra_macs);
    json.Key("extra_macs_percent").Double(option.extra_macs_percent);
    json.Key("stream_input").Bool(option.stream_input);
  }
}

void WriteOption(const FitOption& option, JsonWriter& json) {
  json.BeginObject();
  json.Key("kind").String(option.kind);
  json.Key("description").String(option.description);
  json.Key("change").String(option.change);
  for (const auto& [key, value] : {std::pair{"peak_bytes", option.peak_bytes}, std::pair{"arena_bytes", option.arena_bytes},
                                   std::pair{"weights_bytes", option.weights_bytes}}) {
    json.Key(key);
    if (option.planned) {
      json.Int(value);
    } else {
      json.Null();
    }
  }
  json.Key("complete").Bool(option.complete);
  json.Key("fits");
  WriteOptionalBool(option.fits, json);
  json.Key("saved_bytes").Int(option.saved_bytes);
  WriteKindMembers(option, json);
  json.EndObject();
}

}  // namespace

std::string RenderFitJson(const FitReport& report) {
  JsonWriter json;
  json.BeginObject();
  json.Key("schema_version").Int(1);
  json.Key("model").String(report.model);
  json.Key("device").String(report.device);
  json.Key("fits");
  WriteOptionalBool(report.fits, json);
  json.Key("fits_reason").String(report.fits_reason);
  json.Key("peak_bytes").Int(report.peak_bytes);
  json.Key("arena_bytes").Int(report.arena_bytes);
  json.Key("weights_bytes").Int(report.weights_bytes);
  json.Key("complete").Bool(report.complete);
  json.Key("unsized_tensors").Int(report.unsized_tensors);
  json.Key("peak_parts").BeginArray();
  for (const FitPeakPart& part : report.peak_parts) {
    json.BeginObject();
    json.Key("part").String(part.part);
    json.Key("bytes").Int(part.bytes);
    json.Key("known").Bool(part.known);
    json.EndObject();
  }
  json.EndArray();
  json.Key("capacity_bytes").BeginArray();
  for (const FitTier& tier : report.tiers) WriteTier(tier, json, false);
  json.EndArray();
  json.Key("options").BeginArray();
  for (const FitOption& option : report.options) WriteOption(option, json);
  json.EndArray();
  json.Key("notes").BeginArray();
  for (const std::string& note : report.notes) json.String(note);
  json.EndArray();
  json.EndObject();
  return absl::StrCat(std::move(json).Release(), "\n");
}

std::string RenderFitText(const FitReport& report) {
  std::string out = absl::StrCat(report.model, " on ", report.device, ": ",
                                 !report.fits.has_value() ? "fit unknown" : (*report.fits ? "fits" : "does not fit"),
                                 report.fits_reason.empty() ? "" : absl::StrCat(" (", report.fits_reason, ")"), "\n");
  absl::StrAppend(&out, PeakLine(report), "; device: ", TierLine(report.tiers), "\n");
  if (report.options.empty()) {
    absl::StrAppend(&out, "no option to show\n");
  } else {
    const std::vector<std::string> header = {"option", "new peak", "fits", "how"};
    std::vector<std::vector<std::string>> rows = Rows(report);
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
      width[c] = header[c].size();
      for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
    }
    rows.insert(rows.begin(), header);
    absl::StrAppend(&out, "\n");
    for (const auto& row : rows) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const bool last = c + 1 == row.size();
        absl::StrAppend(&line, c == 1 ? std::string(width[c] - row[c].size(), ' ') : "", row[c],
                        last || c == 1 ? "" : std::string(width[c] - row[c].size(), ' '), last ? "" : "  ");
      }
      absl::StrAppend(&out, line, "\n");
    }
  }
  for (const std::string& note : report.notes) absl::StrAppend(&out, "note: ", note, "\n");
  return out;
}

std::string RenderFitMarkdown(const FitReport& report) {
  std::string out = absl::StrCat("### `", MarkdownCode(report.model), "` on `", MarkdownCode(report.device), "`: ",
                                 !report.fits.has_value() ? "fit unknown" : (*report.fits ? "fits" : "does not fit"),
                                 "\n\n");
  if (!report.fits_reason.empty()) absl::StrAppend(&out, MarkdownCell(report.fits_reason), "\n\n");
  std::string peak = PeakLine(report);
  peak[0] = 'P';
  absl::StrAppend(&out, MarkdownCell(peak), "; device: ", MarkdownCell(TierLine(report.tiers)), ".\n\n");
  if (!report.options.empty()) {
    absl::StrAppend(&out, "| option | new peak | fits | how |\n| --- | ---: | --- | --- |\n");
    for (const auto& row : Rows(report)) {
      absl::StrAppend(&out, "| ", MarkdownCell(row[0]), " | ", row[1], " | ", row[2], " | ",
                      row[3].rfind("--", 0) == 0 ? absl::StrCat("`", MarkdownCode(row[3]), "`") : MarkdownCell(row[3]),
                      " |\n");
    }
    absl::StrAppend(&out, "\n");
  }
  for (const std::string& note : report.notes) absl::StrAppend(&out, "- ", MarkdownCell(note), "\n");
  return out;
}

}  // namespace footprint
