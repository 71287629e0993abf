#!/usr/bin/python3
"""Independent check of the baseline figures (weights, naive, lower bound), and of the
lower bounds with aliasing and in-place reuse on the file's order (--sharing).

Written from the memory model (docs/figures.md) alone, with Debian's python3-onnx,
to cross-check the C++ analyzer's figures in testdata/golden/. Not used by the
build or the tests (nothing there needs Python); run it by hand:
    /usr/bin/python3 tools/independent_figures.py MODEL.onnx [ALIGNMENT] [--sharing]
Prints: weights_bytes naive_bytes lower_bound_bytes unsized
With --sharing, two more: the lower bound with aliasing, then with aliasing and in-place
reuse, on the file's order (the README's rules, for graphs without subgraphs).
"""
import sys

import onnx
from onnx import shape_inference

BITS = {1: 32, 2: 8, 3: 8, 4: 16, 5: 16, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 12: 32, 13: 64,
        14: 64, 15: 128, 16: 16, 17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4}


def nbytes(dims, elem_type):
    if elem_type not in BITS:
        return None
    count = 1
    for d in dims:
        count *= d
    return (count * BITS[elem_type] + 7) // 8


def align(n, a):
    return (n + a - 1) // a * a


def type_bytes(t):
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in t.tensor_type.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return nbytes(dims, t.tensor_type.elem_type)


VIEW_OPS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
ELEMENTWISE_OPS = {
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu", "Celu",
    "Gelu", "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Clip", "Abs", "Neg", "Exp", "Log", "Sqrt",
    "Reciprocal", "Ceil", "Floor", "Round", "Sign", "Erf", "Not", "Sin", "Cos", "Tan", "Asin", "Acos",
    "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or",
    "Xor", "Sum", "Max", "Min", "Mean", "Dropout", "BatchNormalization"}
BINARY_OPS = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Sum", "Max", "Min", "Mean"}


def training_batch_norm(n):
    return n.op_type == "BatchNormalization" and any(a.name == "training_mode" and a.i for a in n.attribute)


def peak(intervals, steps):
    live = [0] * max(1, steps)
    for first, last, b in intervals:
        for s in range(first, last + 1):
            live[s] += b
    return max(live) if live else 0


def shared_peak(tensors, nodes, steps, alias, inplace):
    """tensors: name -> dict(first, last, bytes, aligned, elem, produced, output)."""
    owner = {name: name for name in tensors}
    handed = set()
    for k, n in enumerate(nodes):
        if n.domain not in ("", "ai.onnx"):
            continue
        outs = [o for o in n.output if o]
        if len(outs) != 1 or outs[0] not in tensors or tensors[outs[0]]["bytes"] == 0:
            continue
        if alias and n.op_type in VIEW_OPS:
            kind, cands = "alias", [n.input[0]] if n.input and n.input[0] else []
        elif inplace and n.op_type in ELEMENTWISE_OPS and not training_batch_norm(n):
            kind = "inplace"
            if n.op_type in BINARY_OPS:
                cands = [i for i in n.input if i]
            else:
                cands = [n.input[0]] if n.input and n.input[0] else []
        else:
            continue
        out = tensors[outs[0]]
        for c in cands:
            t = tensors.get(c)
            if t is None or not t["produced"] or t["output"] or c in handed or t["last"] != k:
                continue
            if t["bytes"] != out["bytes"] or (kind == "inplace" and t["elem"] != out["elem"]):
                continue
            handed.add(c)
            owner[outs[0]] = owner[c]
            break
    groups = {}
    for name, t in tensors.items():
        g = groups.setdefault(owner[name], [t["first"], t["last"], 0])
        g[0] = min(g[0], t["first"])
        g[1] = max(g[1], t["last"])
        g[2] = max(g[2], t["aligned"])
    return peak(groups.values(), steps)


def main():
    sharing = "--sharing" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--sharing"]
    path = args[0]
    alignment = int(args[1]) if len(args) > 1 else 64
    model = onnx.load(path, load_external_data=False)
    model = shape_inference.infer_shapes(model, data_prop=True)
    g = model.graph
    types = {}
    for vi in list(g.value_info) + list(g.output) + list(g.input):
        types[vi.name] = vi.type
    inits = {t.name for t in g.initializer}
    weights = 0
    unsized = 0
    for t in g.initializer:
        b = nbytes(t.dims, t.data_type)
        if b is None:
            unsized += 1
        else:
            weights += b
    nodes = []
    for n in g.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
            a = n.attribute[0]
            if a.name == "value":
                weights += nbytes(a.t.dims, a.t.data_type)
            elif a.name in ("value_float", "value_int"):
                weights += 4 if a.name == "value_float" else 8
            elif a.name == "value_floats":
                weights += 4 * len(a.floats)
            elif a.name == "value_ints":
                weights += 8 * len(a.ints)
            else:
                unsized += 1
            continue
        nodes.append(n)
    # The spec's baseline schedule is the file order (assumed valid here).
    steps = len(nodes)
    outputs = {o.name for o in g.output}
    last_use = {}
    for k, n in enumerate(nodes):
        for i in n.input:
            last_use[i] = k
    intervals = []  # (first, last, aligned bytes)
    tensors = {}  # Sized arena tensors, for --sharing.
    for vi in g.input:
        if vi.name in inits:
            continue
        first = 0
        last = last_use.get(vi.name, 0)
        if vi.name in outputs:
            last = max(last, steps - 1)
        b = type_bytes(vi.type)
        if b is None:
            unsized += 1
            continue
        intervals.append((first, last, align(b, alignment)))
        tensors[vi.name] = dict(first=first, last=last, bytes=b, aligned=align(b, alignment),
                                elem=vi.type.tensor_type.elem_type, produced=False, output=vi.name in outputs)
    for k, n in enumerate(nodes):
        for o in n.output:
            if not o:
                continue
            first = k
            last = max(k, last_use.get(o, k))
            if o in outputs:
                last = max(last, steps - 1)
            b = type_bytes(types[o]) if o in types else None
            if b is None:
                unsized += 1
                continue
            intervals.append((first, last, align(b, alignment)))
            tensors[o] = dict(first=first, last=last, bytes=b, aligned=align(b, alignment),
                              elem=types[o].tensor_type.elem_type, produced=True, output=o in outputs)
    naive = sum(b for _, _, b in intervals)
    live = [0] * max(1, steps)
    for first, last, b in intervals:
        for s in range(first, last + 1):
            live[s] += b
    figures = [weights, naive, max(live) if live else 0, unsized]
    if sharing:
        figures.append(shared_peak(tensors, nodes, steps, alias=True, inplace=False))
        figures.append(shared_peak(tensors, nodes, steps, alias=True, inplace=True))
    print(*figures)


main()
