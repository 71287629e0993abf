#!/usr/bin/python3
"""Probe models for ONNX Runtime's float16 handling on its CPU provider (issue 23).

Usage: /usr/bin/python3 bench/ground_truth/fp16_probes.py OUT_DIR
Writes OUT_DIR/<name>.onnx (Debian's python3-onnx and numpy only). What each shows, read
from ORT's optimized model (session option optimizedModelFilePath) or measured with
run.sh / ort_driver.js, is in analyzer/runtimes/onnxruntime/fp16_casts.h and
docs/ground-truth.md:
- op_<Op>: one op on a float16 graph input and output (opset 17): kept with no Cast (the
  CPU provider has a float16 kernel), run in float32 between inserted Casts, or inlined
  (its ONNX function body, in float32);
- chain_*: float32 graph inputs and outputs with Casts at the edges, as converters write
  them: which Casts cancel, an isolated float16 node run in float32;
- castpair_*: the model's own Cast pairs;
- w_*: float16 weights read by one or two float32 ops (converted at load, or cast at each
  run); matmul_chain_overridable: initializers listed as graph inputs (IR 4);
- cos_same / cos_diff: equal and different ConstantOfShape weights (shared or not);
- big_<Op>_{edge,mid}: ops ORT inlines as their float32 function body (LeakyRelu, PRelu,
  HardSwish, Softmax) next to ones it runs as one float32 kernel (Sigmoid, Relu);
- groupnorm_<opset>_{float32,float16}: GroupNormalization between two Relus (4 MiB), which ORT
  runs as its function body in every type (no kernel); float32 between two Casts from 21.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

H, F = T.FLOAT16, T.FLOAT
rng = np.random.default_rng(0)


def half(name, shape):
    return nh.from_array((rng.random(shape) * 0.01).astype(np.float16), name)


def i64(name, values):
    return nh.from_array(np.array(values, np.int64), name)


def cast(src, dst, to):
    return h.make_node("Cast", [src], [dst], to=to)


def save(out, name, nodes, inputs, outputs, inits, opset=17, ir=8):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = ir
    if not outputs:  # Output types from ONNX's shape inference.
        inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
        types = {v.name: v for v in inferred}
        model.graph.output.extend(types[o] for o in nodes[-1].output if o in types)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def ops(out):
    x = [h.make_tensor_value_info("x", H, [1, 8, 16, 16])]
    inits = [i64("sh", [1, -1]), i64("ax0", [0]), i64("idx", [0, 1]), i64("ex", [2, 8, 16, 16]),
             i64("rep", [1, 1, 1, 2]), half("W", [8, 8, 1, 1]), half("s", [16]), half("b", [16]),
             half("cs", [8]), half("cb", [8]), nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             i64("pads", [0, 0, 1, 1, 0, 0, 1, 1]), i64("k", [2]), i64("a1", 1)]
    unary = ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin",
             "Cos", "Tanh", "Sigmoid", "Relu", "Elu", "Selu", "LeakyRelu", "HardSigmoid", "HardSwish",
             "Softplus", "Softsign", "Erf", "Identity", "IsNaN", "ThresholdedRelu", "Dropout",
             "GlobalAveragePool", "GlobalMaxPool", "Flatten"]
    binary = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Equal", "Less",
              "Greater", "LessOrEqual", "GreaterOrEqual", "PRelu", "MatMul"]
    special = {
        "Softmax": [h.make_node("Softmax", ["x"], ["y"], axis=-1)],
        "LogSoftmax": [h.make_node("LogSoftmax", ["x"], ["y"], axis=-1)],
        "Reshape": [h.make_node("Reshape", ["x", "sh"], ["y"])],
        "Squeeze": [h.make_node("Squeeze", ["x", "ax0"], ["y"])],
        "Unsqueeze": [h.make_node("Unsqueeze", ["x", "ax0"], ["y"])],
        "Gather": [h.make_node("Gather", ["x", "idx"], ["y"], axis=1)],
        "Split": [h.make_node("Split", ["x"], ["y", "y2"], axis=1)],
        "Expand": [h.make_node("Expand", ["x", "ex"], ["y"])],
        "Tile": [h.make_node("Tile", ["x", "rep"], ["y"])],
        "Transpose": [h.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
        "Concat": [h.make_node("Concat", ["x", "x"], ["y"], axis=1)],
        "Slice": [h.make_node("Slice", ["x", "ax0", "k", "a1"], ["y"])],
        "Clip": [h.make_node("Clip", ["x"], ["y"])],
        "Conv": [h.make_node("Conv", ["x", "W"], ["y"])],
        "ConvTranspose": [h.make_node("ConvTranspose", ["x", "W"], ["y"])],
        "LayerNormalization": [h.make_node("LayerNormalization", ["x", "s", "b"], ["y"])],
        "InstanceNormalization": [h.make_node("InstanceNormalization", ["x", "cs", "cb"], ["y"])],
        "BatchNormalization": [h.make_node("BatchNormalization", ["x", "cs", "cb", "cs", "cb"], ["y"])],
        "MaxPool": [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])],
        "AveragePool": [h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])],
        "Resize": [h.make_node("Resize", ["x", "", "sc"], ["y"])],
        "Pad": [h.make_node("Pad", ["x", "pads"], ["y"])],
        "ReduceMean": [h.make_node("ReduceMean", ["x"], ["y"])],
        "ReduceSum": [h.make_node("ReduceSum", ["x"], ["y"])],
        "Where": [h.make_node("Greater", ["x", "x"], ["c"]), h.make_node("Where", ["c", "x", "x"], ["y"])],
        "TopK": [h.make_node("TopK", ["x", "k"], ["y", "i"])],
        "DepthToSpace": [h.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)],
    }
    nodes_of = {op: [h.make_node(op, ["x"], ["y"])] for op in unary}
    nodes_of.update({op: [h.make_node(op, ["x", "x"], ["y"])] for op in binary})
    nodes_of.update(special)
    for op, nodes in nodes_of.items():
        used = {i for n in nodes for i in n.input}
        save(out, "op_" + op, nodes, x, [], [i for i in inits if i.name in used])


def chains(out):
    x4 = [h.make_tensor_value_info("x", F, [1, 32, 56, 56])]
    x3 = [h.make_tensor_value_info("x", F, [1, 128, 256])]
    y = [h.make_tensor_value_info("y", F, None)]

    def chain(name, body, inits, inputs=x4):
        save(out, name, [cast("x", "x16", H)] + body + [cast("z16", "y", F)], inputs, y, inits)

    chain("chain_conv_relu_conv", [h.make_node("Conv", ["x16", "W1"], ["a"], pads=[1, 1, 1, 1]),
                                   h.make_node("Relu", ["a"], ["b"]),
                                   h.make_node("Conv", ["b", "W2"], ["z16"], pads=[1, 1, 1, 1])],
          [half("W1", [32, 32, 3, 3]), half("W2", [32, 32, 3, 3])])
    chain("chain_add_mul", [h.make_node("Add", ["x16", "x16"], ["a"]), h.make_node("Mul", ["a", "x16"], ["z16"])], [])
    chain("chain_matmul_add", [h.make_node("MatMul", ["x16", "W"], ["a"]), h.make_node("Add", ["a", "B"], ["z16"])],
          [half("W", [256, 256]), half("B", [256])], x3)
    chain("chain_layernorm", [h.make_node("LayerNormalization", ["x16", "s", "b"], ["z16"], axis=-1)],
          [half("s", [256]), half("b", [256])], x3)
    chain("chain_softmax", [h.make_node("Softmax", ["x16"], ["z16"], axis=-1)], [], x3)
    chain("chain_resize", [h.make_node("Resize", ["x16", "", "sc"], ["z16"], mode="nearest")],
          [nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc")])
    chain("chain_sigmoid_transpose_sigmoid", [h.make_node("Sigmoid", ["x16"], ["a"]),
                                              h.make_node("Transpose", ["a"], ["b"], perm=[0, 1, 3, 2]),
                                              h.make_node("Sigmoid", ["b"], ["z16"])], [])
    save(out, "castpair_f_h_f", [h.make_node("Relu", ["x"], ["a"]), cast("a", "b", H), cast("b", "c", F),
                                 h.make_node("Relu", ["c"], ["y"])], x4, y, [])


def weights(out):
    x = [h.make_tensor_value_info("x", F, [1, 64, 1024])]
    y = [h.make_tensor_value_info("y", F, None)]
    w = half("W", [1024, 1024])
    save(out, "w_matmul_one", [cast("x", "x16", H), h.make_node("MatMul", ["x16", "W"], ["a"]), cast("a", "y", F)],
         x, y, [w])
    save(out, "w_matmul_two", [cast("x", "x16", H), h.make_node("MatMul", ["x16", "W"], ["a"]),
                               h.make_node("MatMul", ["a", "W"], ["b"]), cast("b", "y", F)], x, y, [w])
    n = 8
    inits = [half("W%d" % i, [512, 512]) for i in range(n)]
    nodes = [cast("x", "a0", H)] + [h.make_node("MatMul", ["a%d" % i, "W%d" % i], ["a%d" % (i + 1)])
                                    for i in range(n)] + [cast("a%d" % n, "y", F)]
    listed = [h.make_tensor_value_info("W%d" % i, H, [512, 512]) for i in range(n)]
    save(out, "matmul_chain_overridable", nodes, [h.make_tensor_value_info("x", F, [1, 16, 512])] + listed, y,
         inits, opset=13, ir=4)
    mm = [cast("x", "a0", H), h.make_node("MatMul", ["a0", "A"], ["a1"]), h.make_node("MatMul", ["a1", "B"], ["a2"]),
          cast("a2", "y", F)]
    shapes = [i64("sA", [256, 256]), i64("sB", [256, 256])]
    for name, second in [("cos_same", 0.5), ("cos_diff", 0.25)]:
        cos = [h.make_node("ConstantOfShape", ["sA"], ["A"], value=nh.from_array(np.array([0.5], np.float16))),
               h.make_node("ConstantOfShape", ["sB"], ["B"], value=nh.from_array(np.array([second], np.float16)))]
        save(out, name, cos + mm, [h.make_tensor_value_info("x", F, [1, 16, 256])], y, shapes, opset=13)


def inlined(out):
    """big_<Op>_{edge,mid}: one 1 MiB float16 op behind the model's Casts, or between two Sigmoids."""
    x = [h.make_tensor_value_info("x", F, [1, 16, 128, 128])]
    y = [h.make_tensor_value_info("y", F, None)]
    slope = nh.from_array(np.full([16, 1, 1], 0.1, np.float16), "s")
    for op, node, inits in [("LeakyRelu", h.make_node("LeakyRelu", ["x16"], ["z16"]), []),
                            ("PRelu", h.make_node("PRelu", ["x16", "s"], ["z16"]), [slope]),
                            ("HardSwish", h.make_node("HardSwish", ["x16"], ["z16"]), []),
                            ("Softmax", h.make_node("Softmax", ["x16"], ["z16"], axis=-1), []),
                            ("Sigmoid", h.make_node("Sigmoid", ["x16"], ["z16"]), []),
                            ("Relu", h.make_node("Relu", ["x16"], ["z16"]), [])]:
        edge = [cast("x", "x16", H), node, cast("z16", "y", F)]
        mid = [cast("x", "x0", H), h.make_node("Sigmoid", ["x0"], ["x16"]), node,
               h.make_node("Sigmoid", ["z16"], ["z1"]), cast("z1", "y", F)]
        save(out, "big_%s_edge" % op, edge, x, y, inits)
        save(out, "big_%s_mid" % op, mid, x, y, inits)


def groupnorm(out):
    """groupnorm_<opset>_<type>: Relu -> GroupNormalization (8 groups) -> Relu on [1, 64, 128, 128]."""
    for opset in (18, 21):
        for elem, np_type, label in ((F, np.float32, "float32"), (H, np.float16, "float16")):
            size = 64 if opset >= 21 else 8  # Scale and bias: per channel from 21, per group before.
            inits = [nh.from_array(np.ones(size, np_type), "scale"), nh.from_array(np.zeros(size, np_type), "bias")]
            nodes = [h.make_node("Relu", ["x"], ["r"]),
                     h.make_node("GroupNormalization", ["r", "scale", "bias"], ["g"], num_groups=8, epsilon=1e-5),
                     h.make_node("Relu", ["g"], ["y"])]
            x = [h.make_tensor_value_info("x", elem, [1, 64, 128, 128])]
            y = [h.make_tensor_value_info("y", elem, [1, 64, 128, 128])]
            save(out, "groupnorm_%d_%s" % (opset, label), nodes, x, y, inits, opset=opset, ir=8 if opset < 21 else 10)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    ops(out)
    chains(out)
    weights(out)
    inlined(out)
    groupnorm(out)


if __name__ == "__main__":
    main()
