// Shape functions of the com.microsoft ops that exported transformers and
// quantized models use, after onnxruntime's ContribOperators.md and its
// shape inference (contrib_ops/*_defs.cc). Past/present key-value caches are
// the biggest tensors of an LLM's step, so they are sized exactly:
// present = past with the sequence axis grown by the new tokens.
#include <algorithm>

#include "analyzer/shapes/op_context.h"
#include "analyzer/shapes/ops/op_helpers.h"

namespace footprint::symbolic {
namespace {

// Output o (when present) has input i's shape and type.
void SameAs(const SymValue& input, Outputs& out, size_t o) {
  if (o >= out.size()) return;
  out[o] = TensorOf(input.elem_type, *input.shape);
}

// Outputs 0.. of an op that keeps its first input's shape (activations,
// rotary embeddings, bias ops).
bool SameShapeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  for (size_t o = 0; o < out.size(); ++o) SameAs(*x, out, o);
  return true;
}

// LayerNorm statistics: the input's shape with the normalized axes (from
// `axis`, default -1) set to 1.
SymValue StatsShape(const SymValue& x, int64_t axis, int32_t type) {
  std::vector<Expr> shape = *x.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::optional<int64_t> a = NormalizeAxis(axis, rank);
  if (a.has_value()) {
    for (int64_t i = *a; i < rank; ++i) shape[i] = Expr(1);
  }
  return TensorOf(type, std::move(shape));
}

// SkipLayerNormalization / SkipSimplifiedLayerNormalization:
// (output, mean, inv_std_var, input_skip_bias_sum); mean and inv_std_var are
// float with the last axis reduced.
bool SkipLayerNormFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  SameAs(*x, out, 0);
  for (size_t o = 1; o < out.size(); ++o) {
    if (o == 3) {
      SameAs(*x, out, o);
    } else {
      out[o] = StatsShape(*x, -1, onnx::TensorProto::FLOAT);
    }
  }
  return true;
}

// LayerNormalization-style ops in the default or com.microsoft domain:
// (Y, Mean, InvStdDev) or (Y, InvStdDev) for the simplified ones.
bool LayerNormFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  SameAs(*x, out, 0);
  const int64_t axis = ctx.Int("axis", -1);
  const int32_t stash = static_cast<int32_t>(ctx.Int("stash_type", onnx::TensorProto::FLOAT));
  for (size_t o = 1; o < out.size(); ++o) out[o] = StatsShape(*x, axis, stash);
  return true;
}

// Attention(input (B,S,D), weights (D, Dq+Dk+Dv), bias, mask_index, past
// (2,B,N,P,H), ...) -> (output (B,S,Dv), present (2,B,N,P+S,H)).
bool AttentionFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* input = ctx.Input(0);
  const SymValue* weights = ctx.Input(1);
  if (!Ranked(input) || input->shape->size() != 3) return false;
  Expr v_hidden = Expr::Unknown();
  if (auto sizes = ctx.Ints("qkv_hidden_sizes"); sizes.has_value() && sizes->size() == 3) {
    v_hidden = Expr((*sizes)[2]);
  } else if (Ranked(weights) && weights->shape->size() == 2) {
    v_hidden = Expr::DivideExact((*weights->shape)[1], Expr(3));
  } else if (const SymValue* bias = ctx.Input(2); Ranked(bias) && bias->shape->size() == 1) {
    v_hidden = Expr::DivideExact((*bias->shape)[0], Expr(3));
  }
  out[0] = TensorOf(input->elem_type, {(*input->shape)[0], (*input->shape)[1], v_hidden});
  if (out.size() > 1) {
    const SymValue* past = ctx.Input(4);
    if (Ranked(past) && past->shape->size() == 5) {
      std::vector<Expr> present = *past->shape;
      if (ctx.Int("past_present_share_buffer", 0) == 0) present[3] = present[3] + (*input->shape)[1];
      out[1] = TensorOf(past->elem_type, std::move(present));
    } else {
      const int64_t heads = ctx.Int("num_heads", 0);
      Expr head_size = heads > 0 ? Expr::DivideExact(v_hidden, Expr(heads)) : Expr::Unknown();
      out[1] = TensorOf(input->elem_type,
                        {Expr(2), (*input->shape)[0], Expr(heads), (*input->shape)[1], head_size});
    }
  }
  return true;
}

// MultiHeadAttention(query, key, value, bias, key_padding_mask,
// attention_bias, past_key, past_value, ...) -> (output, present_key,
// present_value, qk).
bool MultiHeadAttentionFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* query = ctx.Input(0);
  const SymValue* key = ctx.Input(1);
  const SymValue* value = ctx.Input(2);
  if (!Ranked(query)) return false;
  const int64_t heads = ctx.Int("num_heads", 0);
  const std::vector<Expr>& q = *query->shape;
  Expr batch = q[0], sequence = q.size() >= 2 ? q[1] : Expr::Unknown();
  Expr out_hidden = Expr::Unknown();
  Expr kv_sequence = Expr::Unknown();
  Expr head_size = Expr::Unknown(), v_head_size = Expr::Unknown();
  if (q.size() == 5) {  // Packed QKV (B, S, N, 3, H).
    out_hidden = q[2] * q[4];
    kv_sequence = q[1];
    head_size = v_head_size = q[4];
  } else if (q.size() == 3) {
    if (heads > 0) head_size = Expr::DivideExact(q[2], Expr(heads));
    if (Ranked(value) && value->shape->size() == 3) {
      out_hidden = (*value->shape)[2];
      kv_sequence = (*value->shape)[1];
      if (heads > 0) v_head_size = Expr::DivideExact(out_hidden, Expr(heads));
    } else if (Ranked(value) && value->shape->size() == 4) {  // (B, N, L, H): cross attention, no concat.
      out_hidden = (*value->shape)[1] * (*value->shape)[3];
      v_head_size = (*value->shape)[3];
    } else if (Ranked(key) && key->shape->size() == 5) {  // Packed KV (B, L, N, 2, H).
      out_hidden = q[2];
      kv_sequence = (*key->shape)[1];
      v_head_size = (*key->shape)[4];
    } else if (key == nullptr && value == nullptr) {
      out_hidden = q[2];
      kv_sequence = q[1];
      v_head_size = head_size;
    }
  } else {
    return false;
  }
  out[0] = TensorOf(query->elem_type, {batch, sequence, out_hidden});
  const SymValue* past_key = ctx.Input(6);
  const SymValue* past_value = ctx.Input(7);
  for (size_t o = 1; o <= 2 && o < out.size(); ++o) {
    const SymValue* past = o == 1 ? past_key : past_value;
    const Expr& per_head = o == 1 ? head_size : v_head_size;
    if (Ranked(past) && past->shape->size() == 4) {
      std::vector<Expr> present = *past->shape;
      // A shared buffer keeps the past's (maximum) length; else the new tokens append.
      if (ctx.Int("past_present_share_buffer", 0) == 0) present[2] = present[2] + kv_sequence;
      out[o] = TensorOf(past->elem_type, std::move(present));
    } else if (Ranked(value) && value->shape->size() == 4 && o == 2) {
      out[o] = TensorOf(value->elem_type, *value->shape);
    } else if (Ranked(key) && key->shape->size() == 4 && o == 1) {
      out[o] = TensorOf(key->elem_type, *key->shape);
    } else {
      out[o] = TensorOf(query->elem_type, {batch, Expr(heads), kv_sequence, per_head});
    }
  }
  if (out.size() > 3) {  // qk: (B, N, S, total).
    Expr total = Ranked(past_key) && past_key->shape->size() == 4 ? (*past_key->shape)[2] + kv_sequence : kv_sequence;
    out[3] = TensorOf(query->elem_type, {batch, Expr(heads), sequence, total});
  }
  return true;
}

// GroupQueryAttention(query, key, value, past_key, past_value, seqlens_k,
// total_sequence_length, cos_cache, sin_cache, ...) -> (output, present_key,
// present_value). present's sequence axis is max(past, total_sequence_length)
// (the cache may be a shared max-length buffer).
bool GroupQueryAttentionFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* query = ctx.Input(0);
  if (!Ranked(query) || query->shape->size() != 3) return false;
  const std::vector<Expr>& q = *query->shape;
  const int64_t heads = ctx.Int("num_heads", 0);
  const int64_t kv_heads = ctx.Int("kv_num_heads", 0);
  const SymValue* value = ctx.Input(2);
  Expr hidden = q[2];
  Expr head_size = heads > 0 ? Expr::DivideExact(q[2], Expr(heads)) : Expr::Unknown();
  if (!Ranked(value)) {  // Packed QKV: (B, S, (N + 2 kvN) H).
    head_size = heads + 2 * kv_heads > 0 ? Expr::DivideExact(q[2], Expr(heads + 2 * kv_heads)) : Expr::Unknown();
    hidden = head_size * Expr(heads);
  }
  out[0] = TensorOf(query->elem_type, {q[0], q[1], hidden});
  Expr total = Expr::Unknown();
  if (const SymValue* t = ctx.Input(6); t != nullptr && t->ints.has_value() && t->ints->size() == 1) total = (*t->ints)[0];
  for (size_t o = 1; o <= 2 && o < out.size(); ++o) {
    const SymValue* past = ctx.Input(o == 1 ? 3 : 4);
    if (Ranked(past) && past->shape->size() == 4) {
      std::vector<Expr> present = *past->shape;
      present[2] = Expr::Max(present[2], total);
      out[o] = TensorOf(past->elem_type, std::move(present));
      if (!total.known()) out[o].reason = "GroupQueryAttention: total_sequence_length not known before running";
    } else {
      out[o] = TensorOf(query->elem_type, {q[0], Expr(kv_heads), total, head_size});
    }
  }
  return true;
}

// EmbedLayerNormalization(input_ids (B,S), segment_ids, word_embedding (V,D),
// ...) -> (output (B,S,D), mask_index (B) int32, embedding_sum (B,S,D)).
bool EmbedLayerNormFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* ids = ctx.Input(0);
  const SymValue* word = ctx.Input(2);
  if (!Ranked(ids) || ids->shape->size() != 2) return false;
  Expr hidden = Ranked(word) && word->shape->size() == 2 ? (*word->shape)[1] : Expr::Unknown();
  const int32_t type = word != nullptr ? word->elem_type : onnx::TensorProto::FLOAT;
  out[0] = TensorOf(type, {(*ids->shape)[0], (*ids->shape)[1], hidden});
  if (out.size() > 1) out[1] = TensorOf(onnx::TensorProto::INT32, {(*ids->shape)[0]});
  if (out.size() > 2) out[2] = out[0];
  return true;
}

// MatMulNBits(A (..., K), B packed, ...) -> (..., N).
bool MatMulNBitsFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  if (!Ranked(a) || a->shape->empty()) return false;
  std::vector<Expr> shape = *a->shape;
  shape.back() = Expr(ctx.Int("N", 0));
  out[0] = TensorOf(a->elem_type, std::move(shape));
  return true;
}

std::optional<std::vector<Expr>> MatMulShape(std::vector<Expr> a, std::vector<Expr> b) {
  if (a.empty() || b.empty()) return std::nullopt;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Expr(1));
  if (b_vector) b.push_back(Expr(1));
  std::vector<Expr> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  std::vector<Expr> shape = Broadcast(batch_a, batch_b);
  if (!a_vector) shape.push_back(a[a.size() - 2]);
  if (!b_vector) shape.push_back(b.back());
  return shape;
}

// Matmuls whose inputs sit at (a, b): MatMulInteger16, MatMulIntegerToFloat,
// DynamicQuantizeMatMul, QLinearMatMul-like, FusedMatMul (transA/transB).
ShapeFunction MatMulAt(size_t a_index, size_t b_index, int32_t out_type) {
  return [=](const OpContext& ctx, Outputs& out) {
    const SymValue* a = ctx.Input(a_index);
    const SymValue* b = ctx.Input(b_index);
    if (!Ranked(a) || !Ranked(b)) return false;
    std::vector<Expr> sa = *a->shape, sb = *b->shape;
    if (ctx.Int("transA", 0) != 0 && sa.size() >= 2) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (ctx.Int("transB", 0) != 0 && sb.size() >= 2) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    std::optional<std::vector<Expr>> shape = MatMulShape(sa, sb);
    if (!shape.has_value()) return false;
    int32_t type = out_type;
    if (type == 0) type = a->elem_type;
    if (type < 0) {  // From the output zero point (input -type), default uint8.
      const SymValue* zp = ctx.Input(static_cast<size_t>(-type));
      type = zp != nullptr && zp->elem_type != 0 ? zp->elem_type : onnx::TensorProto::UINT8;
    }
    out[0] = TensorOf(type, *std::move(shape));
    return true;
  };
}

// QuantizeLinear: type of the zero point (default uint8); DequantizeLinear:
// type of the scale.
bool QuantizeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const SymValue* zp = ctx.Input(2);
  out[0] = TensorOf(zp != nullptr && zp->elem_type != 0 ? zp->elem_type : onnx::TensorProto::UINT8, *x->shape);
  return true;
}
bool DequantizeFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  const SymValue* scale = ctx.Input(1);
  if (!Ranked(x)) return false;
  out[0] = TensorOf(scale != nullptr && scale->elem_type != 0 ? scale->elem_type : onnx::TensorProto::FLOAT,
                    *x->shape);
  return true;
}

// QLinearAdd/QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp).
bool QLinearBinaryFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* a = ctx.Input(0);
  const SymValue* b = ctx.Input(3);
  if (!Ranked(a) || !Ranked(b)) return false;
  out[0] = TensorOf(a->elem_type, Broadcast(*a->shape, *b->shape));
  return true;
}

// QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...).
bool QLinearConcatFunction(const OpContext& ctx, Outputs& out) {
  std::vector<const SymValue*> parts;
  for (size_t i = 2; i < ctx.inputs.size(); i += 3) {
    if (!Ranked(ctx.inputs[i])) return false;
    parts.push_back(ctx.inputs[i]);
  }
  std::optional<Concatenation> joined = ConcatenatedShape(parts, ctx.Int("axis", 0));
  if (!joined.has_value()) return false;
  out[0] = TensorOf(parts[0]->elem_type, std::move(joined->shape));
  return true;
}

// QLinearGlobalAveragePool: NCHW -> NC11 (channels_last: NHWC -> N11C).
bool QLinearGlobalPoolFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x) || x->shape->size() < 3) return false;
  std::vector<Expr> shape = *x->shape;
  const bool channels_last = ctx.Int("channels_last", 0) != 0;
  for (size_t i = 1; i < shape.size(); ++i) {
    const bool channel = channels_last ? i == shape.size() - 1 : i == 1;
    if (!channel) shape[i] = Expr(1);
  }
  out[0] = TensorOf(x->elem_type, std::move(shape));
  return true;
}

// QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp) -> (M, N);
// float output without y_scale.
bool QGemmFunction(const OpContext& ctx, Outputs& out) {
  std::optional<std::vector<Expr>> shape = GemmOutputShape(ctx, ctx.Input(0), ctx.Input(3));
  if (!shape.has_value()) return false;
  const SymValue* y_zp = ctx.Input(8);
  const int32_t type = ctx.Input(7) == nullptr ? onnx::TensorProto::FLOAT
                                               : (y_zp != nullptr ? y_zp->elem_type : onnx::TensorProto::UINT8);
  out[0] = TensorOf(type, *std::move(shape));
  return true;
}

// DynamicQuantizeMatMul / MatMulIntegerToFloat: float results.
const ShapeFunctionTable& ContribFunctions() {
  static const auto* functions = [] {
    auto* m = new ShapeFunctionTable();
    for (const char* op : {"BiasGelu", "FastGelu", "Gelu", "QuickGelu", "RotaryEmbedding", "BiasAdd", "BiasSoftmax",
                           "BiasDropout", "GemmFastGelu", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
                           "NhwcMaxPool", "GroupNorm", "SkipGroupNorm", "Inverse", "FusedGemm"}) {
      (*m)[op] = SameShapeFunction;
    }
    (*m)["SkipLayerNormalization"] = SkipLayerNormFunction;
    (*m)["SkipSimplifiedLayerNormalization"] = SkipLayerNormFunction;
    (*m)["SimplifiedLayerNormalization"] = LayerNormFunction;
    (*m)["LayerNormalization"] = LayerNormFunction;
    (*m)["Attention"] = AttentionFunction;
    (*m)["QAttention"] = AttentionFunction;
    (*m)["MultiHeadAttention"] = MultiHeadAttentionFunction;
    (*m)["GroupQueryAttention"] = GroupQueryAttentionFunction;
    (*m)["EmbedLayerNormalization"] = EmbedLayerNormFunction;
    (*m)["MatMulNBits"] = MatMulNBitsFunction;
    (*m)["FusedMatMul"] = MatMulAt(0, 1, 0);
    (*m)["MatMulInteger16"] = MatMulAt(0, 1, onnx::TensorProto::INT32);
    (*m)["MatMulIntegerToFloat"] = MatMulAt(0, 1, onnx::TensorProto::FLOAT);
    (*m)["DynamicQuantizeMatMul"] = MatMulAt(0, 1, onnx::TensorProto::FLOAT);
    (*m)["QuantizeLinear"] = QuantizeFunction;
    (*m)["DequantizeLinear"] = DequantizeFunction;
    (*m)["QLinearAdd"] = QLinearBinaryFunction;
    (*m)["QLinearMul"] = QLinearBinaryFunction;
    (*m)["QLinearConcat"] = QLinearConcatFunction;
    (*m)["QLinearGlobalAveragePool"] = QLinearGlobalPoolFunction;
    (*m)["QGemm"] = QGemmFunction;
    (*m)["QLinearAveragePool"] = PoolShapeFunction;
    return m;
  }();
  return *functions;
}

// --- ai.onnx.ml (ONNX 1.12 gives most of them no shape function) -----------

ShapeFunction MlSameShape(int32_t type) {
  return [type](const OpContext& ctx, Outputs& out) {
    const SymValue* x = ctx.Input(0);
    if (!Ranked(x)) return false;
    out[0] = TensorOf(type != 0 ? type : x->elem_type, *x->shape);
    return true;
  };
}

// Y = X[..., indices]: X's shape with the last axis the number of indices (a 1-D X gives [1, n]).
bool ArrayFeatureExtractorFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  const SymValue* indices = ctx.Input(1);
  if (!Ranked(x) || !Ranked(indices) || x->shape->empty()) return false;
  std::vector<Expr> shape = *x->shape;
  if (shape.size() == 1) shape.insert(shape.begin(), Expr(1));
  shape.back() = ElementCount(*indices->shape);
  out[0] = TensorOf(x->elem_type, std::move(shape));
  return true;
}

// One float per category appended to the input's shape.
bool OneHotEncoderFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  const onnx::AttributeProto* ints = ctx.Attribute("cats_int64s");
  const onnx::AttributeProto* strings = ctx.Attribute("cats_strings");
  const int64_t categories = ints != nullptr ? ints->ints_size() : strings != nullptr ? strings->strings_size() : 0;
  std::vector<Expr> shape = *x->shape;
  shape.push_back(Expr(categories));
  out[0] = TensorOf(onnx::TensorProto::FLOAT, std::move(shape));
  return true;
}

// [N, sum(inputdimensions)] floats, N from the first input.
bool FeatureVectorizerFunction(const OpContext& ctx, Outputs& out) {
  const SymValue* x = ctx.Input(0);
  if (!Ranked(x)) return false;
  Expr total = 0;
  for (int64_t d : ctx.Ints("inputdimensions").value_or(std::vector<int64_t>{})) total = total + Expr(d);
  const Expr rows = x->shape->size() >= 2 ? (*x->shape)[0] : Expr(1);
  out[0] = TensorOf(onnx::TensorProto::FLOAT, {rows, total});
  return true;
}

// onnxruntime-extensions' image codecs: the sizes are the image file's.
bool DecodeImageFunction(const OpContext& ctx, Outputs& out) {
  out[0] = TensorOf(onnx::TensorProto::UINT8, {Expr::Unknown(), Expr::Unknown(), Expr(3)});
  out[0].reason = "data-dependent shape: DecodeImage's output is as large as the encoded image";
  return true;
}
bool EncodeImageFunction(const OpContext& ctx, Outputs& out) {
  out[0] = TensorOf(onnx::TensorProto::UINT8, {Expr::Unknown()});
  out[0].reason = "data-dependent shape: EncodeImage's output size depends on the compressed image";
  return true;
}

const ShapeFunctionTable& MlFunctions() {
  static const auto* functions = [] {
    auto* m = new ShapeFunctionTable();
    (*m)["Scaler"] = MlSameShape(onnx::TensorProto::FLOAT);
    (*m)["Normalizer"] = MlSameShape(onnx::TensorProto::FLOAT);
    (*m)["Binarizer"] = MlSameShape(0);
    (*m)["Imputer"] = MlSameShape(0);
    (*m)["ArrayFeatureExtractor"] = ArrayFeatureExtractorFunction;
    (*m)["OneHotEncoder"] = OneHotEncoderFunction;
    (*m)["FeatureVectorizer"] = FeatureVectorizerFunction;
    (*m)["DecodeImage"] = DecodeImageFunction;  // com.microsoft.extensions.
    (*m)["EncodeImage"] = EncodeImageFunction;
    return m;
  }();
  return *functions;
}

}  // namespace

const ShapeFunction* FindMlShapeFunction(const std::string& op_type) {
  return FindInTable(MlFunctions(), op_type);
}

const ShapeFunction* FindContribShapeFunction(const std::string& op_type) {
  return FindInTable(ContribFunctions(), op_type);
}

// Shared with the default domain: onnxruntime registers
// SimplifiedLayerNormalization there.
bool LayerNormShapeFunction(const OpContext& ctx, std::vector<SymValue>& out) { return LayerNormFunction(ctx, out); }

}  // namespace footprint::symbolic
