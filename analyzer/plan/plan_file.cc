#include "analyzer/plan/plan_file.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace footprint {
namespace {

constexpr const char* kGenerator = "onnx-footprint 0.1.0";

nlohmann::json OptionsJson(const Analysis& analysis) {
  const AnalyzeOptions& options = analysis.options;
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& [name, value] : options.dims) dims[name] = value;
  nlohmann::json input_shapes = nlohmann::json::object();
  for (const auto& [name, shape] : options.input_shapes) input_shapes[name] = shape;
  nlohmann::json tensor_shapes = nlohmann::json::object();
  for (const auto& [name, shape] : options.tensor_shapes) tensor_shapes[name] = shape;
  nlohmann::json input_values = nlohmann::json::object();
  for (const auto& [name, value] : options.input_values) input_values[name] = value;
  nlohmann::json plan_options = nlohmann::json{
      {"device", analysis.device.name},
      {"alignment", analysis.device.alignment_bytes},
      {"schedule", analysis.modes.schedule.name},
      {"alias", analysis.modes.alias.enabled},
      {"inplace", analysis.modes.inplace.enabled},
      {"dims", dims},
      {"input_shapes", input_shapes},
      {"dim_default", options.dim_default.has_value() ? nlohmann::json(*options.dim_default) : nlohmann::json()},
      {"tensor_shapes", tensor_shapes},
      {"input_values", input_values},
      {"fold", options.fold_constants},
      {"accumulate", analysis.modes.accumulate.enabled},
      {"runtime", options.runtime.empty() ? nlohmann::json() : nlohmann::json(options.runtime)},
  };
  if (analysis.modes.qdq.enabled) plan_options["qdq"] = true;  // Absent when off, as in plans before the mode.
  return plan_options;
}

// The flag that sizes an unsized tensor: a formula in unbound dims needs
// them bound; anything else needs its shape given.
std::string SizingFlag(const TensorRecord& tensor) {
  if (!tensor.bytes_expr.empty()) return absl::StrCat("--dim or --dim-default (bytes = ", tensor.bytes_expr, ")");
  return absl::StrCat("--tensor-shape ", tensor.name, "=DIMS");
}

absl::Status Field(bool ok, const std::string& where, const char* expected) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(where, ": expected ", expected));
}

absl::StatusOr<int64_t> IntField(const nlohmann::json& object, const std::string& key, const std::string& where,
                                 int64_t min) {
  const auto it = object.find(key);
  const std::string at = absl::StrCat(where, key);
  if (it == object.end()) return absl::InvalidArgumentError(absl::StrCat(at, ": missing"));
  if (!it->is_number_integer()) return absl::InvalidArgumentError(absl::StrCat(at, ": expected an integer"));
  const int64_t value = it->get<int64_t>();
  if (value < min) return absl::InvalidArgumentError(absl::StrCat(at, ": expected at least ", min, ", got ", value));
  return value;
}

absl::StatusOr<std::string> StringField(const nlohmann::json& object, const std::string& key,
                                        const std::string& where) {
  const auto it = object.find(key);
  const std::string at = absl::StrCat(where, key);
  if (it == object.end()) return absl::InvalidArgumentError(absl::StrCat(at, ": missing"));
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat(at, ": expected a string"));
  return it->get<std::string>();
}

#define PLAN_ASSIGN(lhs, expr)           \
  do {                                   \
    auto value_or = (expr);              \
    if (!value_or.ok()) return value_or.status(); \
    lhs = *std::move(value_or);          \
  } while (false)

// A C string literal of `text` (octal escapes for anything not plain ASCII,
// so that no escape runs into the next character).
std::string CString(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f && c != '?') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("\\%03o", c);
    }
  }
  return out + "\"";
}

// `text` safe inside a C comment: printable ASCII only, and no "*/".
std::string CommentText(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    const char printable = c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    if (printable == '/' && !out.empty() && out.back() == '*') out += ' ';
    out += printable;
  }
  return out;
}

template <typename T, typename F>
void Table(std::string& out, const char* type, const std::string& name, const std::vector<T>& rows, F cell) {
  absl::StrAppend(&out, "static const ", type, " ", name, "[", std::max<size_t>(rows.size(), 1), "] FP_PLAN_UNUSED = {");
  for (size_t i = 0; i < rows.size(); ++i) {
    absl::StrAppend(&out, i % 8 == 0 ? "\n    " : " ", cell(rows[i]), i + 1 < rows.size() ? "," : "");
  }
  if (rows.empty()) absl::StrAppend(&out, "\n    0");
  absl::StrAppend(&out, "\n};\n");
}

}  // namespace

std::string CIdentifier(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (unsigned char c : name) out += std::isalnum(c) ? static_cast<char>(std::toupper(c)) : '_';
  return out.empty() ? "_" : out;
}

absl::StatusOr<std::string> ModelHash(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot read the model file"));
  // Four independent multiply-xor lanes over 8-byte words (a 3 GiB model is
  // hashed at memory speed), then the length and the lanes folded together.
  uint64_t lanes[4] = {0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL, 0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
  uint64_t length = 0;
  std::vector<char> buffer(1 << 20);
  while (file) {
    file.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const size_t got = static_cast<size_t>(file.gcount());
    if (got < buffer.size()) std::fill(buffer.begin() + got, buffer.begin() + (got + 31) / 32 * 32, 0);
    for (size_t i = 0; i < got; i += 32) {
      for (int lane = 0; lane < 4; ++lane) {
        uint64_t word;
        std::memcpy(&word, buffer.data() + i + 8 * lane, 8);
        lanes[lane] = (lanes[lane] ^ word) * 0x9E3779B97F4A7C15ULL;
        lanes[lane] ^= lanes[lane] >> 29;
      }
    }
    length += got;
  }
  if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  uint64_t hash = length * 0xBF58476D1CE4E5B9ULL;
  for (uint64_t lane : lanes) {
    hash = (hash ^ lane) * 0x94D049BB133111EBULL;
    hash ^= hash >> 31;
  }
  return absl::StrFormat("mx64:%016x", hash);
}

absl::StatusOr<ArenaPlan> PlanFromAnalysis(const Analysis& analysis, const std::string& model_hash) {
  std::vector<std::string> unsized;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (!tensor.bytes.has_value()) unsized.push_back(absl::StrCat("'", tensor.name, "' (", SizingFlag(tensor), ")"));
  }
  if (!unsized.empty()) {
    const size_t shown = std::min<size_t>(unsized.size(), 5);
    return absl::FailedPreconditionError(absl::StrCat(
        "no plan: ", unsized.size(), " arena tensors are unsized: ",
        absl::StrJoin(unsized.begin(), unsized.begin() + shown, ", "), unsized.size() > shown ? ", ..." : ""));
  }
  ArenaPlan plan;
  plan.generator = kGenerator;
  plan.model_path = analysis.model.path;
  plan.model_hash = model_hash;
  plan.model_nodes = analysis.model.nodes;
  plan.options = OptionsJson(analysis);
  plan.schedule = analysis.schedule;
  std::map<std::string, int> tier_index;
  for (const TierSummary& tier : analysis.tiers) {
    bool used = tier.holds_activations;
    for (const TensorRecord& tensor : analysis.tensors) used = used || tensor.tier == tier.name;
    if (!used) continue;
    tier_index[tier.name] = static_cast<int>(plan.tiers.size());
    plan.tiers.push_back(PlanTier{.name = tier.name, .arena_bytes = tier.arena_bytes,
                                  .alignment = std::max<int64_t>(tier.alignment_bytes, 1)});
  }
  // Zero-byte tensors get no tier from the planner: they occupy no bytes
  // and are left out of the plan, so ids are renumbered.
  std::vector<int64_t> id_of(analysis.tensors.size(), -1);
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    const TensorRecord& tensor = analysis.tensors[i];
    const auto tier = tier_index.find(tensor.tier);
    if (tier == tier_index.end() || !tensor.tier_offset.has_value()) {
      if (*tensor.bytes == 0) continue;
      return absl::InternalError(absl::StrCat("no plan: tensor '", tensor.name, "' of ", *tensor.bytes,
                                              " bytes has no memory tier"));
    }
    id_of[i] = static_cast<int64_t>(plan.tensors.size());
    plan.tensors.push_back(PlanTensor{
        .name = tensor.name,
        .role = TensorRoleName(tensor.role),
        .producer = tensor.producer,
        .tier = tier->second,
        .offset = *tensor.tier_offset,
        .size = *tensor.bytes,
        .aligned_size = tensor.aligned_bytes,
        .first_step = tensor.first_step,
        .last_step = tensor.last_step,
    });
  }
  for (size_t i = 0; i < analysis.tensors.size(); ++i) {
    const TensorRecord& tensor = analysis.tensors[i];
    if (id_of[i] < 0 || tensor.shares_with_index < 0) continue;
    const int64_t source = id_of[tensor.shares_with_index];
    if (source < 0) continue;
    plan.tensors[id_of[i]].shares_with = source;
    plan.tensors[id_of[i]].sharing = tensor.sharing;
  }
  return plan;
}

std::string RenderPlanJson(const ArenaPlan& plan) {
  // ordered_json: the fields in the order the README documents them.
  using Json = nlohmann::ordered_json;
  Json tiers = Json::array();
  for (const PlanTier& tier : plan.tiers) {
    tiers.push_back(Json{{"name", tier.name}, {"arena_bytes", tier.arena_bytes}, {"alignment", tier.alignment}});
  }
  Json tensors = Json::array();
  for (size_t id = 0; id < plan.tensors.size(); ++id) {
    const PlanTensor& tensor = plan.tensors[id];
    tensors.push_back(Json{
        {"id", id},
        {"name", tensor.name},
        {"role", tensor.role},
        {"producer", tensor.producer},
        {"tier", plan.tiers[tensor.tier].name},
        {"offset", tensor.offset},
        {"size", tensor.size},
        {"aligned_size", tensor.aligned_size},
        {"first_step", tensor.first_step},
        {"last_step", tensor.last_step},
        {"shares_with", tensor.shares_with >= 0 ? Json(tensor.shares_with) : Json()},
        {"sharing", tensor.sharing.empty() ? Json() : Json(tensor.sharing)},
    });
  }
  const Json root = {
      {"plan_version", plan.plan_version},
      {"generator", plan.generator},
      {"model", Json{{"path", plan.model_path}, {"hash", plan.model_hash}, {"nodes", plan.model_nodes}}},
      {"options", Json::parse(plan.options.is_null() ? "{}" : plan.options.dump())},
      {"schedule", plan.schedule},
      {"tiers", tiers},
      {"tensors", tensors},
  };
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RenderPlanHeader(const ArenaPlan& plan, const std::string& guard_stem) {
  const std::string guard = absl::StrCat("FP_PLAN_", CIdentifier(guard_stem), "_H_");
  std::string out;
  absl::StrAppend(&out, "/* The arena plan of ", CommentText(plan.model_path), " (", CommentText(plan.model_hash),
                  "),\n * generated by ", CommentText(plan.generator), "; do not edit. runtime/fp_arena.h serves it:\n",
                  " *   static const fp_plan plan = FP_PLAN_INITIALIZER; */\n");
  absl::StrAppend(&out, "#ifndef ", guard, "\n#define ", guard, "\n\n#include <stddef.h>\n#include <stdint.h>\n\n");
  absl::StrAppend(&out,
                  "#if defined(__GNUC__)\n#define FP_PLAN_UNUSED __attribute__((unused))\n#else\n"
                  "#define FP_PLAN_UNUSED\n#endif\n\n");
  absl::StrAppend(&out, "#define FP_PLAN_VERSION ", plan.plan_version, "\n");
  absl::StrAppend(&out, "#define FP_MODEL_HASH ", CString(plan.model_hash), "\n");
  absl::StrAppend(&out, "#define FP_NUM_TIERS ", plan.tiers.size(), "u\n");
  absl::StrAppend(&out, "#define FP_NUM_TENSORS ", plan.tensors.size(), "u\n");
  absl::StrAppend(&out, "#define FP_NUM_STEPS ", plan.schedule.size(), "u\n\n");
  std::set<std::string> tier_taken;
  for (size_t t = 0; t < plan.tiers.size(); ++t) {
    std::string tier = CIdentifier(plan.tiers[t].name);
    if (!tier_taken.insert(tier).second) tier = absl::StrCat(tier, "_", t);  // "l2-ram" and "l2_ram".
    absl::StrAppend(&out, "#define FP_TIER_", tier, " ", t, "u\n");
    absl::StrAppend(&out, "#define FP_ARENA_SIZE_", tier, " ", plan.tiers[t].arena_bytes, "u\n");
    absl::StrAppend(&out, "#define FP_ARENA_ALIGN_", tier, " ", plan.tiers[t].alignment, "u\n");
  }
  // Tensor ids: FP_T_<NAME>; a name that sanitizes to one already taken gets its id appended.
  std::set<std::string> taken;
  absl::StrAppend(&out, "\nenum fp_tensor_id {");
  for (size_t id = 0; id < plan.tensors.size(); ++id) {
    std::string name = absl::StrCat("FP_T_", CIdentifier(plan.tensors[id].name));
    if (!taken.insert(name).second) {
      name = absl::StrCat(name, "_", id);
      taken.insert(name);
    }
    absl::StrAppend(&out, id == 0 ? "\n  " : ",\n  ", name, " = ", id);
  }
  absl::StrAppend(&out, plan.tensors.empty() ? "\n  FP_T_NONE_ = 0" : "", "\n};\n\n");

  std::vector<int> tier_rows(plan.tiers.size());
  for (size_t t = 0; t < tier_rows.size(); ++t) tier_rows[t] = static_cast<int>(t);
  Table(out, "size_t", "fp_tier_arena_size", tier_rows,
        [&](int t) { return absl::StrCat(plan.tiers[t].arena_bytes, "u"); });
  Table(out, "size_t", "fp_tier_alignment", tier_rows,
        [&](int t) { return absl::StrCat(plan.tiers[t].alignment, "u"); });
  Table(out, "char* const", "fp_tier_name", tier_rows, [&](int t) { return CString(plan.tiers[t].name); });
  Table(out, "uint32_t", "fp_tensor_tier", plan.tensors, [](const PlanTensor& t) { return absl::StrCat(t.tier, "u"); });
  Table(out, "size_t", "fp_tensor_offset", plan.tensors, [](const PlanTensor& t) { return absl::StrCat(t.offset, "u"); });
  Table(out, "size_t", "fp_tensor_size", plan.tensors, [](const PlanTensor& t) { return absl::StrCat(t.size, "u"); });
  Table(out, "size_t", "fp_tensor_aligned_size", plan.tensors,
        [](const PlanTensor& t) { return absl::StrCat(t.aligned_size, "u"); });
  Table(out, "int32_t", "fp_tensor_first_step", plan.tensors,
        [](const PlanTensor& t) { return absl::StrCat(t.first_step); });
  Table(out, "int32_t", "fp_tensor_last_step", plan.tensors,
        [](const PlanTensor& t) { return absl::StrCat(t.last_step); });
  Table(out, "int32_t", "fp_tensor_shares_with", plan.tensors,
        [](const PlanTensor& t) { return absl::StrCat(t.shares_with); });
  Table(out, "uint8_t", "fp_tensor_sharing", plan.tensors, [](const PlanTensor& t) {
    return std::string(t.sharing == "alias" ? "1u" : t.sharing == "inplace" ? "2u" : "0u");
  });
  Table(out, "char* const", "fp_tensor_name", plan.tensors, [](const PlanTensor& t) { return CString(t.name); });
  Table(out, "char* const", "fp_node_name", plan.schedule, [](const std::string& n) { return CString(n); });
  absl::StrAppend(&out,
                  "\n/* The fp_plan of runtime/fp_arena.h, field by field. */\n"
                  "#define FP_PLAN_INITIALIZER { \\\n"
                  "    FP_NUM_TIERS, fp_tier_arena_size, fp_tier_alignment, fp_tier_name, \\\n"
                  "    FP_NUM_TENSORS, fp_tensor_tier, fp_tensor_offset, fp_tensor_size, fp_tensor_aligned_size, \\\n"
                  "    fp_tensor_first_step, fp_tensor_last_step, fp_tensor_shares_with, fp_tensor_sharing, \\\n"
                  "    fp_tensor_name, \\\n"
                  "    FP_NUM_STEPS, fp_node_name }\n\n#endif /* ", guard, " */\n");
  return out;
}

absl::StatusOr<std::string> RenderPlanFile(const ArenaPlan& plan, const std::string& path) {
  if (absl::EndsWith(path, ".json")) return RenderPlanJson(plan);
  if (absl::EndsWith(path, ".h")) {
    std::string stem = path.substr(0, path.size() - 2);
    const size_t slash = stem.find_last_of('/');
    if (slash != std::string::npos) stem = stem.substr(slash + 1);
    return RenderPlanHeader(plan, stem);
  }
  return absl::InvalidArgumentError(absl::StrCat("--emit-plan: ", path, ": the file must end in .json or .h"));
}

absl::StatusOr<std::string> PlanFileFor(const Analysis& analysis, const std::string& path) {
  absl::StatusOr<std::string> hash = ModelHash(analysis.model.path);
  if (!hash.ok()) return hash.status();
  absl::StatusOr<ArenaPlan> plan = PlanFromAnalysis(analysis, *hash);
  if (!plan.ok()) return plan.status();
  return RenderPlanFile(*plan, path);
}

namespace {

// plan_version, generator, model, options and schedule.
absl::Status ParsePlanHead(const nlohmann::json& root, ArenaPlan& plan) {
  int64_t version = 0;
  PLAN_ASSIGN(version, IntField(root, "plan_version", "", 0));
  if (version != kPlanVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan_version ", version, " is not supported (this build reads ", kPlanVersion, ")"));
  }
  plan.plan_version = static_cast<int>(version);
  if (root.contains("generator") && root["generator"].is_string()) plan.generator = root["generator"];
  const auto model = root.find("model");
  if (absl::Status s = Field(model != root.end() && model->is_object(), "model", "an object"); !s.ok()) return s;
  PLAN_ASSIGN(plan.model_path, StringField(*model, "path", "model."));
  PLAN_ASSIGN(plan.model_hash, StringField(*model, "hash", "model."));
  PLAN_ASSIGN(plan.model_nodes, IntField(*model, "nodes", "model.", 0));
  if (root.contains("options")) plan.options = root["options"];
  const auto schedule = root.find("schedule");
  if (absl::Status s = Field(schedule != root.end() && schedule->is_array(), "schedule", "an array of node names");
      !s.ok()) {
    return s;
  }
  for (size_t k = 0; k < schedule->size(); ++k) {
    const nlohmann::json& name = (*schedule)[k];
    if (absl::Status s = Field(name.is_string(), absl::StrCat("schedule[", k, "]"), "a string"); !s.ok()) return s;
    plan.schedule.push_back(name.get<std::string>());
  }
  return absl::OkStatus();
}

// plan.tiers, and each tier's index by name.
absl::Status ParsePlanTiers(const nlohmann::json& root, ArenaPlan& plan, std::map<std::string, int>& tier_index) {
  const auto tiers = root.find("tiers");
  if (absl::Status s = Field(tiers != root.end() && tiers->is_array(), "tiers", "an array"); !s.ok()) return s;
  for (size_t t = 0; t < tiers->size(); ++t) {
    const nlohmann::json& tier = (*tiers)[t];
    const std::string where = absl::StrCat("tiers[", t, "].");
    if (absl::Status s = Field(tier.is_object(), where, "an object"); !s.ok()) return s;
    PlanTier parsed;
    PLAN_ASSIGN(parsed.name, StringField(tier, "name", where));
    PLAN_ASSIGN(parsed.arena_bytes, IntField(tier, "arena_bytes", where, 0));
    PLAN_ASSIGN(parsed.alignment, IntField(tier, "alignment", where, 1));
    if (!tier_index.emplace(parsed.name, static_cast<int>(t)).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, "name: tier '", parsed.name, "' appears twice"));
    }
    plan.tiers.push_back(std::move(parsed));
  }
  return absl::OkStatus();
}

// Tensor `id` (plan.tensors holds the ones before it), its tier, steps and
// sharing checked against what is parsed already.
absl::StatusOr<PlanTensor> ParsePlanTensor(const nlohmann::json& tensor, size_t id, const ArenaPlan& plan,
                                           const std::map<std::string, int>& tier_index) {
  const std::string where = absl::StrCat("tensors[", id, "].");
  if (absl::Status s = Field(tensor.is_object(), where, "an object"); !s.ok()) return s;
  PlanTensor parsed;
  int64_t listed_id = 0;
  PLAN_ASSIGN(listed_id, IntField(tensor, "id", where, 0));
  if (listed_id != static_cast<int64_t>(id)) {
    return absl::InvalidArgumentError(absl::StrCat(where, "id: expected ", id, ", got ", listed_id));
  }
  PLAN_ASSIGN(parsed.name, StringField(tensor, "name", where));
  PLAN_ASSIGN(parsed.role, StringField(tensor, "role", where));
  PLAN_ASSIGN(parsed.producer, StringField(tensor, "producer", where));
  std::string tier;
  PLAN_ASSIGN(tier, StringField(tensor, "tier", where));
  const auto found = tier_index.find(tier);
  if (found == tier_index.end()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "tier: no tier named '", tier, "' in tiers"));
  }
  parsed.tier = found->second;
  PLAN_ASSIGN(parsed.offset, IntField(tensor, "offset", where, 0));
  PLAN_ASSIGN(parsed.size, IntField(tensor, "size", where, 0));
  PLAN_ASSIGN(parsed.aligned_size, IntField(tensor, "aligned_size", where, parsed.size));
  PLAN_ASSIGN(parsed.first_step, IntField(tensor, "first_step", where, 0));
  PLAN_ASSIGN(parsed.last_step, IntField(tensor, "last_step", where, parsed.first_step));
  const int64_t steps = static_cast<int64_t>(plan.schedule.size());
  if (parsed.last_step >= std::max<int64_t>(steps, 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "last_step: ", parsed.last_step, " is past the schedule's ", steps, " steps"));
  }
  const auto shares = tensor.find("shares_with");
  if (shares == tensor.end() || shares->is_null()) return parsed;
  PLAN_ASSIGN(parsed.shares_with, IntField(tensor, "shares_with", where, 0));
  if (parsed.shares_with >= static_cast<int64_t>(id)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "shares_with: ", parsed.shares_with, " is not an earlier tensor's id"));
  }
  PLAN_ASSIGN(parsed.sharing, StringField(tensor, "sharing", where));
  if (parsed.sharing != "alias" && parsed.sharing != "inplace") {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "sharing: expected \"alias\" or \"inplace\", got '", parsed.sharing, "'"));
  }
  if (plan.tensors[parsed.shares_with].shares_with >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "shares_with: tensor ", parsed.shares_with, " shares another's bytes itself"));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<ArenaPlan> ParsePlanJson(std::string_view text) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!root.is_object()) return absl::InvalidArgumentError("expected a JSON object");
  ArenaPlan plan;
  if (absl::Status s = ParsePlanHead(root, plan); !s.ok()) return s;
  std::map<std::string, int> tier_index;
  if (absl::Status s = ParsePlanTiers(root, plan, tier_index); !s.ok()) return s;
  const auto tensors = root.find("tensors");
  if (absl::Status s = Field(tensors != root.end() && tensors->is_array(), "tensors", "an array"); !s.ok()) return s;
  for (size_t id = 0; id < tensors->size(); ++id) {
    absl::StatusOr<PlanTensor> parsed = ParsePlanTensor((*tensors)[id], id, plan, tier_index);
    if (!parsed.ok()) return parsed.status();
    plan.tensors.push_back(*std::move(parsed));
  }
  return plan;
}

}  // namespace footprint
