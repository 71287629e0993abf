// FindUnboundDims (unbound_dims.h).
#include "analyzer/memory/unbound_dims.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

// Past this, a dim the model states is not an input size worth a sample.
constexpr int64_t kMaxExample = int64_t{1} << 20;

// The value v in [1, kMaxExample] of `symbol` for which `dim` (in that symbol
// alone, once `known` is substituted) equals `target`; dims grow with their
// symbols, so a bisection finds it. nullopt when no value gives it exactly.
std::optional<int64_t> Solve(const symbolic::Expr& dim, const std::string& symbol, const symbolic::SymbolValues& known,
                             int64_t target) {
  const symbolic::Expr e = dim.Substitute(known);
  int64_t low = 1, high = kMaxExample;
  while (low < high) {
    const int64_t mid = low + (high - low) / 2;
    std::optional<int64_t> at = e.Evaluate({{symbol, mid}});
    if (!at.has_value()) return std::nullopt;
    if (*at < target) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  std::optional<int64_t> at = e.Evaluate({{symbol, low}});
  if (at != target) return std::nullopt;
  return low;
}

// The sizes the model states: each declared number of an output or
// value_info dim whose engine formula has one unsolved symbol, solved; again
// with those known, until nothing new is found.
symbolic::SymbolValues StatedSizes(const onnx::GraphProto& declared, const symbolic::GraphShapes& shapes,
                                   const std::set<std::string>& unbound) {
  symbolic::SymbolValues solved;
  std::vector<const onnx::ValueInfoProto*> infos;
  for (const onnx::ValueInfoProto& info : declared.output()) infos.push_back(&info);
  for (const onnx::ValueInfoProto& info : declared.value_info()) infos.push_back(&info);
  for (bool progress = true; progress;) {
    progress = false;
    for (const onnx::ValueInfoProto* info : infos) {
      if (!info->type().has_tensor_type() || !info->type().tensor_type().has_shape()) continue;
      const symbolic::SymValue* value = shapes.Find(info->name());
      if (value == nullptr || !value->shape.has_value()) continue;
      const auto& dims = info->type().tensor_type().shape().dim();
      if (dims.size() != static_cast<int>(value->shape->size())) continue;
      for (int d = 0; d < dims.size(); ++d) {
        if (!dims[d].has_dim_value() || dims[d].dim_value() < 1) continue;
        std::set<std::string> symbols;
        (*value->shape)[d].CollectSymbols(symbols);
        std::vector<std::string> open;
        for (const std::string& symbol : symbols) {
          if (!solved.contains(symbol)) open.push_back(symbol);
        }
        if (open.size() != 1 || !unbound.contains(open[0])) continue;
        if (std::optional<int64_t> v = Solve((*value->shape)[d], open[0], solved, dims[d].dim_value())) {
          solved[open[0]] = *v;
          progress = true;
        }
      }
    }
  }
  return solved;
}

}  // namespace

std::vector<UnboundDim> FindUnboundDims(const onnx::ModelProto& bound_model, const symbolic::SymbolValues& engine_dims,
                                        const onnx::GraphProto& declared, const symbolic::GraphShapes* shapes) {
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& tensor : bound_model.graph().initializer()) initializers.insert(tensor.name());
  std::vector<UnboundDim> dims;
  std::map<std::string, size_t> index;
  auto add = [&](const std::string& name, const std::string& input, int64_t axis) {
    if (engine_dims.contains(name)) return;
    auto [it, inserted] = index.try_emplace(name, dims.size());
    if (inserted) dims.push_back(UnboundDim{.name = name});
    dims[it->second].uses.push_back({.input = input, .axis = axis});
  };
  for (const onnx::ValueInfoProto& input : bound_model.graph().input()) {
    if (initializers.contains(input.name()) || !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape()) {
      continue;
    }
    const auto& shape = input.type().tensor_type().shape();
    for (int k = 0; k < shape.dim_size(); ++k) {
      const onnx::TensorShapeProto::Dimension& dim = shape.dim(k);
      if (dim.has_dim_value()) continue;
      if (dim.dim_param().empty()) {
        add(absl::StrCat(input.name(), "_dim", k), input.name(), k);
        continue;
      }
      std::set<std::string> symbols;
      if (std::optional<symbolic::Expr> parsed = symbolic::Expr::Parse(dim.dim_param())) parsed->CollectSymbols(symbols);
      if (symbols.empty()) symbols.insert(dim.dim_param());
      for (const std::string& symbol : symbols) add(symbol, input.name(), k);
    }
  }
  if (shapes != nullptr && !dims.empty()) {
    std::set<std::string> unbound;
    for (const UnboundDim& dim : dims) unbound.insert(dim.name);
    const symbolic::SymbolValues stated = StatedSizes(declared, *shapes, unbound);
    for (UnboundDim& dim : dims) {
      if (auto it = stated.find(dim.name); it != stated.end()) {
        dim.example = it->second;
        dim.stated = true;
      }
    }
  }
  return dims;
}

}  // namespace footprint
