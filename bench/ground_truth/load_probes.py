#!/usr/bin/python3
"""Writes the probe models behind ONNX Runtime's load peak (issue 37): what
the heap holds while InferenceSession is created from a path, one effect per
family, each small enough to run in a second:
  load_plain_*     N float32 initializers of S MiB, each read by an Add of a
                   graph input (nothing to fold, fuse or pack): the file read,
                   the initializers made tensors one by one;
  load_fold_*      an initializer -> Transpose -> Add: constant folding's input
                   and output alive together;
  load_conv_*      a chain of 3x3 Convs on big filters (NCHWc reorders them
                   on x86), with and without a BatchNormalization after each
                   (Conv + BN fusion makes new filters);
  load_matmul_*    MatMuls on constant B (MLAS packs B at load);
  load_fp16_*      float16 Convs (ORT converts the filters to float32 at load);
  *_ext            the same with every initializer in an external data file.
Usage: /usr/bin/python3 load_probes.py DIR, then node process_peak.js on each
(bench/ground_truth/README.md).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MIB = 1 << 20


def save(directory, name, nodes, inputs, outputs, initializers, external=False, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = os.path.join(directory, name + ".onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".onnx.data", size_threshold=1024)
    else:
        onnx.save_model(model, path)


def value(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def plain(directory, count, mib, external):
    elements = mib * MIB // 4
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(elements).astype(np.float32), f"w{i}") for i in range(count)]
    nodes = [helper.make_node("Add", ["x", f"w{i}"], [f"y{i}"]) for i in range(count)]
    outs = [value(f"y{i}", TensorProto.FLOAT, [elements]) for i in range(count)]
    save(directory, f"load_plain_{count}x{mib}{'_ext' if external else ''}", nodes,
         [value("x", TensorProto.FLOAT, [1])], outs, inits, external)


def fold(directory, mib, external):
    side = int((mib * MIB // 4) ** 0.5)
    w = numpy_helper.from_array(np.random.default_rng(2).standard_normal((side, side)).astype(np.float32), "w")
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]), helper.make_node("Add", ["x", "wt"], ["y"])]
    save(directory, f"load_fold_{mib}{'_ext' if external else ''}", nodes,
         [value("x", TensorProto.FLOAT, [1, side])], [value("y", TensorProto.FLOAT, [side, side])], [w], external)


def conv_chain(directory, channels, count, bn, external, dtype=np.float32):
    rng = np.random.default_rng(3)
    onnx_type = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    inits, nodes = [], []
    previous = "x"
    for i in range(count):
        inits.append(numpy_helper.from_array((rng.standard_normal((channels, channels, 3, 3)) * 0.01).astype(dtype), f"w{i}"))
        nodes.append(helper.make_node("Conv", [previous, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]))
        previous = f"c{i}"
        if bn:
            for part, fill in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0)):
                inits.append(numpy_helper.from_array(np.full(channels, fill, dtype=dtype), f"{part}{i}"))
            nodes.append(helper.make_node("BatchNormalization", [previous, f"scale{i}", f"bias{i}", f"mean{i}", f"var{i}"],
                                          [f"b{i}"]))
            previous = f"b{i}"
    nodes.append(helper.make_node("Identity", [previous], ["y"]))
    kind = "fp16" if dtype == np.float16 else "conv"
    name = f"load_{kind}_{count}x{channels}{'_bn' if bn else ''}{'_ext' if external else ''}"
    save(directory, name, nodes, [value("x", onnx_type, [1, channels, 8, 8])],
         [value("y", onnx_type, [1, channels, 8, 8])], inits, external)


def matmul_chain(directory, size, count, external):
    rng = np.random.default_rng(4)
    inits = [numpy_helper.from_array((rng.standard_normal((size, size)) * 0.01).astype(np.float32), f"b{i}")
             for i in range(count)]
    nodes, previous = [], "x"
    for i in range(count):
        nodes.append(helper.make_node("MatMul", [previous, f"b{i}"], [f"m{i}"]))
        previous = f"m{i}"
    nodes.append(helper.make_node("Identity", [previous], ["y"]))
    save(directory, f"load_matmul_{count}x{size}{'_ext' if external else ''}", nodes,
         [value("x", TensorProto.FLOAT, [1, size])], [value("y", TensorProto.FLOAT, [1, size])], inits, external)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    for external in (False, True):
        plain(directory, 8, 4, external)
        plain(directory, 2, 16, external)
        fold(directory, 16, external)
        conv_chain(directory, 512, 4, False, external)
        conv_chain(directory, 512, 4, True, external)
        matmul_chain(directory, 2048, 4, external)
        conv_chain(directory, 512, 4, False, external, np.float16)


if __name__ == "__main__":
    main()
