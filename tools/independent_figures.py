#!/usr/bin/python3
"""Independent check of the baseline figures (weights, naive, lower bound).

Written from ../shared/spec/memory-model.md alone, with Debian's python3-onnx,
to cross-check the C++ analyzer's figures in testdata/golden/. Not used by the
build or the tests (nothing there needs Python); run it by hand:
    /usr/bin/python3 tools/independent_figures.py MODEL.onnx [ALIGNMENT]
Prints: weights_bytes naive_bytes lower_bound_bytes unsized
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


def main():
    path = sys.argv[1]
    alignment = int(sys.argv[2]) if len(sys.argv) > 2 else 64
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
    naive = sum(b for _, _, b in intervals)
    live = [0] * max(1, steps)
    for first, last, b in intervals:
        for s in range(first, last + 1):
            live[s] += b
    print(weights, naive, max(live) if live else 0, unsized)


main()
