#!/usr/bin/python3
"""Makes fp16, static-QDQ and dynamic-quantized copies of ONNX models (issue 23).

Usage: /usr/bin/python3 tools/make_quantized_copies.py [--out DIR] [--kinds fp16,qdq,dynamic]
           [--activation-type uint8|int8|uint16|int16] [other options, --help] [MODEL.onnx ...]
With no model, copies every model under ../shared/models. Writes DIR/<stem>.<kind><suffix>.onnx
(default DIR: build/quantized, never committed) and prints one line per copy, or why
a model has no copy of that kind. Needs only Debian's python3-onnx and numpy.

The other ways the same tools write them (defaults as below; --help lists all):
- qdq, quantize_static's options: --per-tensor (per_channel=False), --reduce-range,
  --weight-type uint8 (U8U8), --weight-symmetric true|false, --activation-symmetric,
  --dedicated-qdq-pair, --float-weights (as QAT exports write weights: float, then
  QuantizeLinear -> DequantizeLinear; the bias float), --qdq-contrib-ops (Q/DQ in com.microsoft; always for 16-bit
  activations, as its quantizer does below opset 21), --op-list ort (its whole default
  op_types_to_quantize: also Pad, Slice, GatherElements, Where, ArgMax and the
  normalizations, whose scale is a weight and bias int32);
- dynamic, quantize_dynamic's: --per-channel (MatMul weights per column), --weight-type uint8;
- fp16, convert_float_to_float16's: --no-keep-io-types, --fp16-op-block-list OPS;
- any kind: --opset N first (ONNX's converter; past 17, the model at 17 relabelled when none
  of its ops changed meaning), --input-dims NAME=DxD (or *=DxD for every input of that
  rank), --suffix to name the variant.

The copies are written the way common tools write them, so that runtimes see the
graphs they meet in the field:
- fp16: as onnxconverter-common's convert_float_to_float16(keep_io_types=True):
  float32 graph inputs and outputs with Casts at the edges, every float initializer,
  Constant and value type in float16, Cast(to=float) turned into Cast(to=float16),
  the ops its default block list keeps in float behind Casts.
- qdq: as ONNX Runtime's quantize_static in QDQ format, after its pre-processing's
  constant folding (ConstantOfShape weights become initializers) and Conv+BatchNormalization
  fusion: QuantizeLinear ->
  DequantizeLinear on every float activation that a quantized op reads or writes
  (one pair per tensor, shared by its readers), weights stored int8 with a
  DequantizeLinear (per output channel for Conv, Gemm and 2-D MatMul weights from
  opset 13), biases int32 at scale input_scale * weight_scale; uint8 activations
  (or int8 with --activation-type int8). A Relu or Clip right after a quantized op
  is removed, as its quantizer does (QDQRemovableActivation): the op's output is
  quantized with the activation's range.
- dynamic: as ONNX Runtime's quantize_dynamic: a MatMul with a weight becomes
  DynamicQuantizeLinear + MatMulInteger (int8 weight) + Cast + Mul by the product
  of scales; a Conv becomes DynamicQuantizeLinear + ConvInteger (uint8 weight, the
  only one ORT's CPU ConvInteger takes) + Cast + Mul (+ Add of the bias).
Scales and zero points are not calibrated: weights' scales come from their own
values, activations get one fixed valid scale. Only the memory layout matters here.
"""

import argparse
import os
import pathlib
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

FLOAT = TensorProto.FLOAT
FLOAT16 = TensorProto.FLOAT16

# onnxconverter-common's DEFAULT_OP_BLOCK_LIST (float16.py): kept in float32.
FP16_BLOCK_LIST = {
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
    "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
    "Normalizer", "OneHotEncoder", "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler",
    "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK",
    "RoiAlign", "Range", "CumSum", "Min", "Max", "Upsample",
}

# The ops ORT's QDQ quantizer quantizes by default (registry.py QDQRegistry), and
# which of their inputs are quantized activations (None: all of them).
QDQ_OPS = {
    "Conv": [0], "ConvTranspose": [0], "MatMul": [0, 1], "Gemm": [0], "Add": None, "Mul": None,
    "Concat": None, "MaxPool": [0], "AveragePool": [0], "GlobalAveragePool": [0],
    "Relu": [0], "Clip": [0], "LeakyRelu": [0], "Sigmoid": [0], "Softmax": [0],
    "Resize": [0], "Reshape": [0], "Transpose": [0], "Squeeze": [0], "Unsqueeze": [0],
    "Flatten": [0], "Split": [0], "Gather": [0],
}
# --op-list ort: the rest of quantize_static's default op_types_to_quantize (the union
# of registry.py's QLinearOpsRegistry and QDQRegistry keys); Flatten is not in it.
QDQ_OPS_ORT_EXTRA = {
    "Pad": [0], "Slice": [0], "GatherElements": [0], "Where": [1, 2], "ArgMax": [0],
    "InstanceNormalization": [0], "LayerNormalization": [0], "BatchNormalization": [0],
}
# The ops whose output ORT's quantizer quantizes with its input's parameters.
SAME_PARAMS_AS_INPUT = {"MaxPool", "Resize", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
                        "Split", "Gather", "Slice"}
ACTIVATION_SCALE = 0.05  # Any positive scale is valid; nothing is calibrated.


def opset_of(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return 0


def has_subgraphs(graph):
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for n in graph.node for a in n.attribute)


def float_tensors(model):
    """Names of the float32 values of the main graph (after ONNX's shape inference)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    names = set()
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == FLOAT:
            names.add(vi.name)
    for init in g.initializer:
        if init.data_type == FLOAT:
            names.add(init.name)
    return names


class Namer:
    def __init__(self, graph):
        self.used = {n for node in graph.node for n in list(node.input) + list(node.output)}
        self.used |= {i.name for i in graph.initializer} | {i.name for i in graph.input}

    def __call__(self, base):
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


def replace_uses(graph, old, new, skip=()):
    for node in graph.node:
        if id(node) in skip:
            continue
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new


# ---------------------------------------------------------------- fp16

def to_fp16(model, opts):
    if has_subgraphs(model.graph):
        return None, "has subgraphs (If/Loop/Scan): not converted"
    block_list = FP16_BLOCK_LIST if opts.fp16_op_block_list is None else set(opts.fp16_op_block_list)
    floats = float_tensors(model)
    g = model.graph
    name = Namer(g)
    inits = {i.name: i for i in g.initializer}
    # Initializers that a blocked op (or Resize's roi/scales) reads stay float32.
    keep_float = set()
    for node in g.node:
        if node.op_type in block_list:
            keep_float.update(node.input)
        if node.op_type == "Resize":
            keep_float.update(node.input[1:3])
    new_nodes = []
    # Graph inputs: float32 in, Cast to float16 for the readers.
    for inp in g.input:
        if inp.name in inits or inp.type.tensor_type.elem_type != FLOAT:
            continue
        if not opts.keep_io_types:  # keep_io_types=False: the input itself is float16.
            inp.type.tensor_type.elem_type = FLOAT16
            continue
        cast_out = name(inp.name + "_fp16")
        replace_uses(g, inp.name, cast_out)
        new_nodes.append(helper.make_node("Cast", [inp.name], [cast_out], to=FLOAT16,
                                          name=name("graph_input_cast_" + inp.name)))
    body = []
    for node in g.node:
        if node.op_type == "Cast":
            for a in node.attribute:
                if a.name == "to" and a.i == FLOAT:
                    a.i = FLOAT16
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value" and a.t.data_type == FLOAT:
                    a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
                if a.name in ("value_float", "value_floats"):
                    return None, "Constant with value_float(s): not converted"
        if node.op_type == "ConstantOfShape":
            for a in node.attribute:
                if a.name == "value" and a.t.data_type == FLOAT:
                    a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
        if node.op_type == "Resize":
            # roi and scales stay float32 (onnxconverter-common's ALWAYS_FLOAT_INPUTS): a
            # computed one gets a Cast back to float32.
            for i in (1, 2):
                if i < len(node.input) and node.input[i] in floats and node.input[i] not in inits:
                    cast_out = name(node.input[i] + "_fp32")
                    body.append(helper.make_node("Cast", [node.input[i]], [cast_out], to=FLOAT,
                                                 name=name("cast_in_" + node.input[i])))
                    node.input[i] = cast_out
        if node.op_type in block_list:
            # Float16 in, Cast to float32 for the op, Cast back after.
            for i, x in enumerate(node.input):
                if x not in floats or x in inits:
                    continue
                cast_out = name(x + "_fp32")
                body.append(helper.make_node("Cast", [x], [cast_out], to=FLOAT, name=name("cast_in_" + x)))
                node.input[i] = cast_out
            body.append(node)
            for i, y in enumerate(node.output):
                if y not in floats:
                    continue
                inner = name(y + "_fp32")
                node.output[i] = inner
                body.append(helper.make_node("Cast", [inner], [y], to=FLOAT16, name=name("cast_out_" + y)))
            continue
        body.append(node)
    # Initializers to float16.
    for init in g.initializer:
        if init.data_type == FLOAT and init.name not in keep_float:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    # Initializers also listed as graph inputs (IR < 4 models) take their new type.
    converted = {i.name for i in g.initializer if i.data_type == FLOAT16}
    for inp in g.input:
        if inp.name in converted and inp.type.tensor_type.elem_type == FLOAT:
            inp.type.tensor_type.elem_type = FLOAT16
    # Graph outputs: the producer writes float16, a Cast gives float32.
    tail = []
    produced = {y for node in body for y in node.output}
    for out in g.output:
        if out.type.tensor_type.elem_type != FLOAT or out.name not in produced:
            continue
        if not opts.keep_io_types:
            out.type.tensor_type.elem_type = FLOAT16
            continue
        inner = name(out.name + "_fp16")
        for node in body:
            for i, y in enumerate(node.output):
                if y == out.name:
                    node.output[i] = inner
        for node in body:
            for i, x in enumerate(node.input):
                if x == out.name:
                    node.input[i] = inner
        tail.append(helper.make_node("Cast", [inner], [out.name], to=FLOAT, name=name("graph_output_cast_" + out.name)))
    del g.node[:]
    g.node.extend(new_nodes + body + tail)
    for vi in g.value_info:
        if vi.type.tensor_type.elem_type == FLOAT:
            vi.type.tensor_type.elem_type = FLOAT16
    return model, None


# ---------------------------------------------------------------- static QDQ

def weight_scales(w, axis):
    """Symmetric int8 scales of `w`, per slice along `axis` (None: per tensor)."""
    if axis is None:
        m = float(np.max(np.abs(w))) if w.size else 0.0
        return np.array(max(m, 1e-8) / 127.0, dtype=np.float32)
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    m = np.max(np.abs(moved), axis=1) if moved.size else np.zeros(w.shape[axis])
    return (np.maximum(m, 1e-8) / 127.0).astype(np.float32)


def quantized_weight(w, axis, opts):
    """`w` as quantize_static stores a weight under `opts` (weight_type, weight_symmetric,
    reduce_range): (quantized values, scale, zero point), per slice along `axis` or per tensor."""
    dtype = np.uint8 if opts.weight_type == "uint8" else np.int8
    symmetric = opts.weight_symmetric if opts.weight_symmetric is not None else dtype == np.int8
    if dtype == np.int8:  # quant_utils.get_qmin_qmax_for_qType: symmetric int8 is [-127, 127].
        qmin, qmax = (-64, 64) if opts.reduce_range and symmetric else (-64, 63) if opts.reduce_range \
            else (-127, 127) if symmetric else (-128, 127)
    else:
        qmin, qmax = (0, 127) if opts.reduce_range else (0, 255)
    moved = w.reshape(1, -1) if axis is None else np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    lo = np.minimum(np.min(moved, axis=1), 0) if moved.size else np.zeros(moved.shape[0])
    hi = np.maximum(np.max(moved, axis=1), 0) if moved.size else np.zeros(moved.shape[0])
    if symmetric:
        m = np.maximum(np.abs(lo), np.abs(hi))
        scale = np.maximum(m, 1e-8) / ((qmax - qmin) / 2)
        zp = np.full(scale.shape, (qmin + qmax + 1) // 2)
    else:
        scale = np.maximum((hi - lo) / (qmax - qmin), 1e-8)
        zp = np.round(qmin - lo / scale)
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    b = (lambda v: v.reshape(shape)) if axis is not None else (lambda v: v.reshape(()))
    q = np.clip(np.round(w / b(scale)) + b(zp), qmin, qmax).astype(dtype)
    if axis is None:
        scale, zp = scale.reshape(()), zp.reshape(())
    return q, scale.astype(np.float32), zp.astype(dtype)


def quantize_weight(w, scale, axis, dtype):
    if axis is None:
        q = np.round(w / scale)
    else:
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.round(w / scale.reshape(shape))
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def upgrade_opset(model, target=13):
    """As ORT's quantizer: a model below opset 13 (per-channel QuantizeLinear; 21 for 16-bit
    QuantizeLinear) is upgraded to it."""
    opset = opset_of(model)
    if opset == 0 or opset >= target:
        return model
    from onnx import version_converter
    model = version_converter.convert_version(model, target)
    if model.ir_version < 4:
        # IR 3 listed every initializer as a graph input too; from IR 4 on that
        # makes it an input the caller may override (not a constant to ORT), so
        # they go, as ORT's tools/python/remove_initializer_from_input.py does.
        inits = {i.name for i in model.graph.initializer}
        kept = [i for i in model.graph.input if i.name not in inits]
        del model.graph.input[:]
        model.graph.input.extend(kept)
    # Opset 13's IR (initializers need not be inputs); opset 21's is 10.
    model.ir_version = max(model.ir_version, 10 if target >= 21 else 7)
    return model


def remove_removable_activations(g, quantized_nodes, outputs):
    """Removes each Relu or Clip whose input only it reads and a quantized op (not itself a
    Relu or Clip) writes; that op writes the activation's output. Returns the outputs kept."""
    producer = {y: n for n in g.node for y in n.output}
    readers = {}
    for n in g.node:
        for x in n.input:
            readers[x] = readers.get(x, 0) + 1
    quantized = {id(n) for n in quantized_nodes}
    removed, kept_outputs = set(), set()
    for node in g.node:
        if node.op_type not in ("Relu", "Clip") or id(node) not in quantized or not node.input:
            continue
        x = node.input[0]
        up = producer.get(x)
        if up is None or id(up) not in quantized or up.op_type in ("Relu", "Clip") or id(up) in removed:
            continue
        if readers.get(x, 0) != 1 or x in outputs:
            continue
        up.output[list(up.output).index(x)] = node.output[0]
        removed.add(id(node))
        kept_outputs.add(node.output[0])
    kept = [n for n in g.node if id(n) not in removed]
    del g.node[:]
    g.node.extend(kept)
    return kept_outputs


def fold_constant_of_shape(graph):
    """As ORT's quantizer pre-processing (its constant folding): a ConstantOfShape whose
    shape is an initializer becomes an initializer, so that a weight it writes is
    quantized like any other (the onnx/light_* models store every weight so)."""
    inits = {i.name: i for i in graph.initializer}
    kept = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.domain in ("", "ai.onnx") and node.input \
                and node.input[0] in inits:
            dims = [int(d) for d in numpy_helper.to_array(inits[node.input[0]]).reshape(-1)]
            value = next((numpy_helper.to_array(a.t).reshape(-1) for a in node.attribute if a.name == "value"),
                         np.zeros(1, dtype=np.float32))
            graph.initializer.append(numpy_helper.from_array(np.full(dims, value[0], dtype=value.dtype),
                                                             node.output[0]))
            continue
        kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)


def fold_batch_norm(graph):
    """As ORT's quantizer pre-processing (its Conv+BatchNormalization fusion): a
    BatchNormalization whose statistics are initializers and whose input is a Conv's
    output read by it alone is folded into that Conv's weight and bias."""
    inits = {i.name: i for i in graph.initializer}
    readers = {}
    for node in graph.node:
        for x in node.input:
            readers[x] = readers.get(x, 0) + 1
    producer = {y: node for node in graph.node for y in node.output}
    outputs = {o.name for o in graph.output}
    removed = set()
    for bn in graph.node:
        if bn.op_type != "BatchNormalization" or len(bn.input) < 5 or len(bn.output) != 1:
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or readers.get(bn.input[0]) != 1 or bn.input[0] in outputs:
            continue
        if len(conv.input) < 2 or conv.input[1] not in inits or not all(x in inits for x in bn.input[1:5]) \
                or (len(conv.input) > 2 and conv.input[2] not in inits):
            continue
        if readers.get(conv.input[1]) != 1 or (len(conv.input) > 2 and readers.get(conv.input[2]) != 1):
            continue
        gamma, beta, mean, var = (numpy_helper.to_array(inits[x]).astype(np.float32) for x in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        factor = gamma / np.sqrt(var + eps)
        w = numpy_helper.to_array(inits[conv.input[1]]).astype(np.float32)
        b = numpy_helper.to_array(inits[conv.input[2]]).astype(np.float32) if len(conv.input) > 2 \
            else np.zeros(w.shape[0], dtype=np.float32)
        inits[conv.input[1]].CopyFrom(numpy_helper.from_array(w * factor.reshape(-1, *[1] * (w.ndim - 1)),
                                                              conv.input[1]))
        bias = numpy_helper.from_array(((b - mean) * factor + beta).astype(np.float32),
                                       conv.input[2] if len(conv.input) > 2 else bn.output[0] + "_folded_bias")
        if len(conv.input) > 2:
            inits[conv.input[2]].CopyFrom(bias)
        else:
            graph.initializer.append(bias)
            conv.input.append(bias.name)
        conv.output[0] = bn.output[0]
        removed.add(id(bn))
    kept = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(kept)


ACTIVATION_TYPES = {  # numpy type, asymmetric zero point, zero point of a range starting at 0
    "uint8": (np.uint8, 128, 0), "int8": (np.int8, 0, -128),
    "uint16": (np.uint16, 32768, 0), "int16": (np.int16, 0, -32768),
}


def to_qdq(model, opts):
    activation_type = opts.activation_type
    if opset_of(model) == 0:
        return None, "no default-domain opset"
    model = upgrade_opset(model)
    opset = opset_of(model)
    # 16-bit QuantizeLinear needs opset 21: below it ORT's quantizer writes every Q and DQ in
    # the com.microsoft domain (as UseQDQContribOps does for any type).
    qdq_domain = "com.microsoft" if opts.qdq_contrib_ops or activation_type in ("int16", "uint16") else ""
    if qdq_domain and not any(o.domain == qdq_domain for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(qdq_domain, 1))
    qdq_kw = {"domain": qdq_domain} if qdq_domain else {}  # No domain field at all for ONNX's.
    if has_subgraphs(model.graph):
        return None, "has subgraphs (If/Loop/Scan): not quantized"
    fold_constant_of_shape(model.graph)
    fold_batch_norm(model.graph)
    per_channel = opset >= 13 and not opts.per_tensor
    qdq_ops = dict(QDQ_OPS)
    if opts.op_list == "ort":
        qdq_ops.update(QDQ_OPS_ORT_EXTRA)
    floats = float_tensors(model)
    g = model.graph
    name = Namer(g)
    inits = {i.name: i for i in g.initializer}
    outputs = {o.name for o in g.output}
    act_np, act_zp, range_zp = ACTIVATION_TYPES[activation_type]
    if opts.activation_symmetric:  # ActivationSymmetric: every range is symmetric about 0.
        range_zp = act_zp
    a_scale = name("activation_scale")
    a_zp = name("activation_zero_point")
    new_inits = [numpy_helper.from_array(np.array(ACTIVATION_SCALE, dtype=np.float32), a_scale),
                 numpy_helper.from_array(np.array(act_zp, dtype=act_np), a_zp)]
    quantized_nodes = [n for n in g.node if n.domain in ("", "ai.onnx") and n.op_type in qdq_ops]
    if not quantized_nodes:
        return None, "no op that ORT's QDQ quantizer quantizes"
    # As ORT's quantizer (operators/activation.py, QDQRemovableActivation, asymmetric
    # activations): a Relu or Clip whose input a quantized op writes for it alone is
    # removed, that op writing the activation's output; the range then starts at 0,
    # so that tensor's zero point is the type's minimum.
    relu_outputs = set() if opts.activation_symmetric else \
        remove_removable_activations(g, quantized_nodes, outputs)
    quantized_nodes = [n for n in g.node if n.domain in ("", "ai.onnx") and n.op_type in qdq_ops]
    relu_zp = name("activation_zero_point_relu")
    new_inits.append(numpy_helper.from_array(np.array(range_zp, dtype=act_np), relu_zp))
    # Activations: the quantized ops' float inputs (not weights) and float outputs.
    acts = []
    seen = set()
    for node in quantized_nodes:
        slots = qdq_ops[node.op_type]
        slots = range(len(node.input)) if slots is None else slots
        cands = [node.input[i] for i in slots if i < len(node.input)] + list(node.output)
        for t in cands:
            if t and t in floats and t not in inits and t not in seen:
                seen.add(t)
                acts.append(t)
    # Weights: int8 with a DequantizeLinear; biases int32.
    weight_dq = {}  # (node id, input index) -> DQ output name
    dq_nodes = []
    for node in quantized_nodes:
        op = node.op_type
        w_slot, axis = None, None
        if op in ("Conv", "ConvTranspose"):
            w_slot, axis = 1, (0 if op == "Conv" else 1)
        elif op == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            w_slot, axis = 1, (0 if trans_b else 1)
        elif op == "MatMul" and len(node.input) > 1 and node.input[1] in inits:
            w_slot, axis = 1, 1 if inits[node.input[1]].dims.__len__() == 2 else None
        elif op in ("InstanceNormalization", "LayerNormalization", "BatchNormalization"):
            w_slot, axis = 1, 0  # QDQNormalization: the scale is a weight, the bias int32.
        weight_scale_of = {}
        for i, x in enumerate(node.input):
            if x not in inits or inits[x].data_type != FLOAT:
                continue
            w = numpy_helper.to_array(inits[x]).astype(np.float32)
            if i == w_slot:
                ax = axis if per_channel and axis is not None and w.ndim > axis else None
                q, scale, zp = quantized_weight(w, ax, opts)
            elif i == 2 and w_slot is not None and node.input[1] in inits and opts.float_weights:
                continue  # QAT exports keep the bias float, read as it is.
            elif i == 2 and w_slot is not None and node.input[1] in inits:
                # Bias: int32 at input_scale * weight_scale (per channel when the weight is).
                wq = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
                ax = axis if per_channel and axis is not None and wq.ndim > axis else None
                scale = (ACTIVATION_SCALE * quantized_weight(wq, ax, opts)[1]).astype(np.float32)
                if ax is not None and scale.shape != w.shape:
                    # A bias that is not 1-D per channel (Gemm's [1, N] C): one scale, as a
                    # DequantizeLinear takes a scalar or 1-D scale only.
                    scale = np.array(float(np.max(scale)), dtype=np.float32)
                q = np.clip(np.round(w / scale), -2**31, 2**31 - 1).astype(np.int32)
                zp = np.zeros(scale.shape, dtype=np.int32)
                ax = 0 if scale.ndim == 1 else None
            elif op in ("Add", "Mul", "Concat", "MatMul", "Gemm", "Where"):
                ax = None
                q, scale, zp = quantized_weight(w, None, opts)
            else:
                continue  # Clip's bounds, Resize's scales...: ORT keeps them float.
            base = name(x + "_quantized")
            new_inits += [numpy_helper.from_array(q, base),
                          numpy_helper.from_array(scale, name(x + "_scale")),
                          numpy_helper.from_array(zp, name(x + "_zero_point"))]
            out = name(x + "_DequantizeLinear_Output")
            attrs = {"axis": ax} if ax is not None and scale.ndim == 1 else {}
            if opts.float_weights:
                # As QAT exports write it: the (fake-quantized) float weight, then a
                # QuantizeLinear whose output the DequantizeLinear reads.
                shape = [1] * q.ndim
                if ax is not None:
                    shape[ax] = -1
                dequantized = ((q.astype(np.float32) - zp.astype(np.float32).reshape(shape if ax is not None else ()))
                               * scale.reshape(shape if ax is not None else ())).astype(np.float32)
                float_name = name(x + "_fake_quantized")
                new_inits[-3] = numpy_helper.from_array(dequantized, float_name)
                dq_nodes.append(helper.make_node("QuantizeLinear", [float_name, new_inits[-2].name, new_inits[-1].name],
                                                 [base], name=name(x + "_QuantizeLinear"), **qdq_kw, **attrs))
            dq_nodes.append(helper.make_node("DequantizeLinear", [base, new_inits[-2].name, new_inits[-1].name],
                                             [out], name=name(x + "_DequantizeLinear"), **qdq_kw,
                                             **attrs))
            weight_dq[(id(node), i)] = out
    for node in quantized_nodes:
        for i, x in enumerate(node.input):
            if (id(node), i) in weight_dq:
                node.input[i] = weight_dq[(id(node), i)]
    # The data-movement ops' outputs take their input's parameters (QDQDirect8BitOp's
    # quantize_output_same_as_input), so the runtime can drop the Q/DQ around them.
    same_params_as_relu = set(relu_outputs)
    for node in g.node:
        if node.op_type in SAME_PARAMS_AS_INPUT and node.input and node.input[0] in same_params_as_relu:
            same_params_as_relu.update(node.output)
    # Activations: one Q -> DQ pair per tensor, shared by its readers.
    pairs = {}
    readers_of = {}
    for node in g.node:
        for x in node.input:
            readers_of.setdefault(x, []).append(node)
    for t in acts:
        if opts.dedicated_qdq_pair and t not in outputs and len(readers_of.get(t, [])) > 1:
            # DedicatedQDQPair: a Q -> DQ pair of its own for each reader.
            zp = relu_zp if t in same_params_as_relu else a_zp
            pairs[t] = []
            for k, reader in enumerate(readers_of[t]):
                q_out = name(f"{t}_QuantizeLinear_Output_{k + 1}")
                dq_out = name(f"{t}_DequantizeLinear_Output_{k + 1}")
                for i, x in enumerate(reader.input):
                    if x == t:
                        reader.input[i] = dq_out
                pairs[t] += [helper.make_node("QuantizeLinear", [t, a_scale, zp], [q_out],
                                              name=name(f"{t}_QuantizeLinear_{k + 1}"), **qdq_kw),
                             helper.make_node("DequantizeLinear", [q_out, a_scale, zp], [dq_out],
                                              name=name(f"{t}_DequantizeLinear_{k + 1}"), **qdq_kw)]
            continue
        source = t
        if t in outputs:
            source = name(t + "_float")
            for node in g.node:
                for i, y in enumerate(node.output):
                    if y == t:
                        node.output[i] = source
        q_out = name(t + "_QuantizeLinear_Output")
        dq_out = t if t in outputs else name(t + "_DequantizeLinear_Output")
        if t not in outputs:
            replace_uses(g, t, dq_out)
        else:
            replace_uses(g, t, dq_out)  # Same name: the readers read the DequantizeLinear output.
        zp = relu_zp if t in same_params_as_relu else a_zp
        pairs[source] = [helper.make_node("QuantizeLinear", [source, a_scale, zp], [q_out],
                                          name=name(t + "_QuantizeLinear"), **qdq_kw),
                         helper.make_node("DequantizeLinear", [q_out, a_scale, zp], [dq_out],
                                          name=name(t + "_DequantizeLinear"), **qdq_kw)]
    # Order: weight DQs first, input pairs, then each pair after its producer.
    order = list(dq_nodes)
    for inp in g.input:
        order += pairs.pop(inp.name, [])
    for node in g.node:
        order.append(node)
        for y in node.output:
            order += pairs.pop(y, [])
    for rest in pairs.values():  # Values produced nowhere in the main graph (none expected).
        order = rest + order
    del g.node[:]
    g.node.extend(order)
    used = {x for n in g.node for x in n.input}
    kept = [i for i in g.initializer if i.name in used or i.name in outputs]
    dropped = {i.name for i in g.initializer} - {i.name for i in kept}
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    # A model that lists its initializers as inputs too (IR < 4, or from IR 4 as
    # overridable defaults) without an opset upgrade: a replaced weight is no
    # input of the copy.
    inputs = [i for i in g.input if i.name not in dropped]
    del g.input[:]
    g.input.extend(inputs)
    del g.value_info[:]
    return model, None


# ---------------------------------------------------------------- dynamic

def to_dynamic(model, opts):
    if opset_of(model) == 0:
        return None, "no default-domain opset"
    model = upgrade_opset(model)
    if has_subgraphs(model.graph):
        return None, "has subgraphs (If/Loop/Scan): not quantized"
    g = model.graph
    name = Namer(g)
    floats = float_tensors(model)
    inits = {i.name: i for i in g.initializer}
    new_inits, order, changed = [], [], 0
    for node in g.node:
        op = node.op_type
        is_matmul = op == "MatMul" and node.input[1] in inits and inits[node.input[1]].data_type == FLOAT \
            and node.input[0] in floats
        is_conv = op == "Conv" and node.input[1] in inits and inits[node.input[1]].data_type == FLOAT \
            and node.input[0] in floats
        if not (is_matmul or is_conv):
            order.append(node)
            continue
        changed += 1
        x, w_name, y = node.input[0], node.input[1], node.output[0]
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
        stem = node.name or y
        if is_matmul:  # int8 weight, zero point 0 (symmetric); uint8 asymmetric with --weight-type uint8.
            axis = 1 if opts.per_channel and w.ndim == 2 else None  # One scale per output column.
            q, scale, zp = quantized_weight(w, axis, opts)
        else:  # uint8 weight, zero point 128.
            scale = weight_scales(w, None)
            q = (quantize_weight(w, scale, None, np.int8).astype(np.int16) + 128).astype(np.uint8)
            zp = np.array(128, dtype=np.uint8)
        wq, ws, wz = name(w_name + "_quantized"), name(w_name + "_scale"), name(w_name + "_zero_point")
        new_inits += [numpy_helper.from_array(q, wq), numpy_helper.from_array(scale, ws),
                      numpy_helper.from_array(zp, wz)]
        xq, xs, xz = name(x + "_quantized"), name(x + "_scale"), name(x + "_zero_point")
        order.append(helper.make_node("DynamicQuantizeLinear", [x], [xq, xs, xz], name=name(x + "_QuantizeLinear")))
        int_out = name(y + "_output_quantized")
        if is_matmul:
            order.append(helper.make_node("MatMulInteger", [xq, wq, xz, wz], [int_out], name=name(stem + "_quant")))
        else:
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            order.append(helper.make_node("ConvInteger", [xq, wq, xz, wz], [int_out], name=name(stem + "_quant"), **attrs))
        cast_out = name(y + "_output_quantized_cast_output")
        order.append(helper.make_node("Cast", [int_out], [cast_out], to=FLOAT, name=name(stem + "_quant_cast")))
        scale_out = name(y + "_quant_scales_mul_output")
        order.append(helper.make_node("Mul", [xs, ws], [scale_out], name=name(stem + "_quant_scales_mul")))
        has_bias = is_conv and len(node.input) > 2 and node.input[2]
        mul_out = name(y + "_scaled") if has_bias else y
        order.append(helper.make_node("Mul", [cast_out, scale_out], [mul_out], name=name(stem + "_quant_output_scale_mul")))
        if has_bias:
            bias = node.input[2]
            shape_name = name(bias + "_reshape_shape")
            new_inits.append(numpy_helper.from_array(np.array([1, -1] + [1] * (w.ndim - 2), dtype=np.int64), shape_name))
            reshaped = name(bias + "_reshaped")
            order.append(helper.make_node("Reshape", [bias, shape_name], [reshaped], name=name(bias + "_reshape")))
            order.append(helper.make_node("Add", [mul_out, reshaped], [y], name=name(stem + "_bias_add")))
    if changed == 0:
        return None, "no MatMul or Conv with a float weight"
    del g.node[:]
    g.node.extend(order)
    used = {x for n in g.node for x in n.input} | {o.name for o in g.output}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept + new_inits)
    return model, None


def set_input_dims(model, overrides):
    """Fixes graph inputs' dims (NAME=DxD..., or *=... for every input of that rank) and
    forgets the inferred shapes that depended on the old ones, as a re-export would."""
    g = model.graph
    inits = {i.name for i in g.initializer}
    for spec in overrides:
        name, _, dims = spec.partition("=")
        dims = [int(d) for d in dims.split("x")]
        hit = False
        for inp in g.input:
            if inp.name in inits or not inp.type.HasField("tensor_type"):
                continue
            shape = inp.type.tensor_type.shape
            if inp.name == name or (name == "*" and len(shape.dim) == len(dims)):
                del shape.dim[:]
                for d in dims:
                    shape.dim.add().dim_value = d
                hit = True
        if not hit:
            raise ValueError(f"--input-dims {spec}: no such input")
    del g.value_info[:]
    for out in g.output:
        if out.type.HasField("tensor_type"):
            for k, d in enumerate(out.type.tensor_type.shape.dim):
                d.Clear()
                d.dim_param = f"{out.name}_dim{k}"
    return model


# Ops whose meaning changed between opset 17 and 21 (axes and sizes that became
# inputs, new defaults): a model that has one is not relabelled.
CHANGED_AFTER_17 = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                    "ReduceLogSumExp", "ReduceSumSquare", "Split", "Pad", "Resize", "Col2Im", "ScatterND",
                    "ScatterElements", "GroupNormalization", "Upsample", "DequantizeLinear", "QuantizeLinear"}


def convert_opset(model, target):
    """The model at `target`: ONNX's version converter (Debian's goes to 17); above 17 the
    model at 17 relabelled when none of its ops changed meaning after 17."""
    from onnx import version_converter
    if target <= 17:
        return version_converter.convert_version(model, target), True
    if opset_of(model) != 17:
        model = version_converter.convert_version(model, 17)
    changed = sorted({n.op_type for n in model.graph.node if n.domain in ("", "ai.onnx")} & CHANGED_AFTER_17)
    if changed:
        raise ValueError(f"--opset {target}: {', '.join(changed)} changed after opset 17; not relabelled")
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            entry.version = target
    if model.ir_version < 4:  # As upgrade_opset: IR 3's initializer inputs would become overridable.
        inits = {i.name for i in model.graph.initializer}
        kept = [i for i in model.graph.input if i.name not in inits]
        del model.graph.input[:]
        model.graph.input.extend(kept)
    model.ir_version = max(model.ir_version, 10)
    return model, False  # Debian's checker does not know opsets past 17.


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--out", default="build/quantized")
    parser.add_argument("--kinds", default="fp16,qdq,dynamic")
    parser.add_argument("--suffix", default="", help="added to each copy's kind in its name")
    parser.add_argument("--opset", type=int, help="convert the model to this opset first")
    parser.add_argument("--input-dims", action="append", default=[],
                        help="NAME=DxD... (or *=DxD... for every input of that rank), before copying")
    qdq = parser.add_argument_group("qdq (quantize_static's options)")
    qdq.add_argument("--activation-type", choices=sorted(ACTIVATION_TYPES), default="uint8")
    qdq.add_argument("--weight-type", choices=["int8", "uint8"], default="int8", help="also dynamic's MatMul")
    qdq.add_argument("--per-tensor", action="store_true", help="per_channel=False")
    qdq.add_argument("--reduce-range", action="store_true", help="7-bit weights")
    qdq.add_argument("--activation-symmetric", action="store_true", help="ActivationSymmetric=True")
    qdq.add_argument("--weight-symmetric", choices=["true", "false"],
                     help="WeightSymmetric (default: true for int8 weights, false for uint8)")
    qdq.add_argument("--qdq-contrib-ops", action="store_true",
                     help="UseQDQContribOps=True: Q and DQ in the com.microsoft domain (always for 16-bit)")
    qdq.add_argument("--dedicated-qdq-pair", action="store_true", help="DedicatedQDQPair=True")
    qdq.add_argument("--float-weights", action="store_true",
                     help="as QAT exports (torch fake-quant, pytorch-quantization, tf2onnx) write weights: "
                          "the float weight -> QuantizeLinear -> DequantizeLinear, the bias float")
    qdq.add_argument("--op-list", choices=["common", "ort"], default="common",
                     help="ort: every op of quantize_static's default op_types_to_quantize")
    dyn = parser.add_argument_group("dynamic (quantize_dynamic's options)")
    dyn.add_argument("--per-channel", action="store_true", help="per_channel=True (MatMul weights)")
    f16 = parser.add_argument_group("fp16 (convert_float_to_float16's options)")
    f16.add_argument("--no-keep-io-types", dest="keep_io_types", action="store_false",
                     help="keep_io_types=False: float16 graph inputs and outputs")
    f16.add_argument("--fp16-op-block-list", type=lambda v: [x for x in v.split(",") if x],
                     help="op_block_list (replaces the default list; empty: none)")
    args = parser.parse_args()
    args.weight_symmetric = None if args.weight_symmetric is None else args.weight_symmetric == "true"
    models = args.models
    if not models:
        root = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "models"
        models = sorted(str(p) for p in root.rglob("*.onnx"))
    os.makedirs(args.out, exist_ok=True)
    makers = {"fp16": lambda m: to_fp16(m, args), "qdq": lambda m: to_qdq(m, args),
              "dynamic": lambda m: to_dynamic(m, args)}
    failures = 0
    for path in models:
        for kind in args.kinds.split(","):
            if kind not in makers:
                print(f"{kind}: unknown kind (fp16, qdq, dynamic)", file=sys.stderr)
                return 2
            try:
                model = onnx.load(path)
                try:  # Debian's checker is older than some models: check the copy only when it checks the original.
                    onnx.checker.check_model(model)
                    checkable = True
                except Exception:
                    checkable = False
                if args.input_dims:
                    model = set_input_dims(model, args.input_dims)
                if args.opset and opset_of(model) != args.opset:
                    model, still_checkable = convert_opset(model, args.opset)
                    checkable = checkable and still_checkable
                copy, why = makers[kind](model)
            except Exception as error:  # A model ONNX cannot load or infer: say which, go on.
                copy, why = None, f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            if copy is None:
                print(f"skip {kind} {path}: {why}")
                continue
            out = os.path.join(args.out, f"{pathlib.Path(path).stem}.{kind}{args.suffix}.onnx")
            try:
                if checkable:
                    onnx.checker.check_model(copy)
            except Exception as error:
                print(f"FAIL {kind} {path}: the copy does not check: {str(error).splitlines()[0]}")
                failures += 1
                continue
            onnx.save(copy, out)
            print(f"wrote {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
