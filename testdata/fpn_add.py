#!/usr/bin/python3
"""Writes fpn_add.onnx, the docs' example of a binding the model cannot take (docs/symbolic-sizes.md).

The model of FpnAddModel (analyzer/testing/test_models.h) with one level: x [1, 3, height,
width] -> Conv 3x3 s2 p1 -> c2 -> Conv 3x3 s2 p1 -> c4 -> Resize nearest x2 -> up ->
Add(c2, up) "fpn_add" -> Relu -> y. The add needs ceil(height / 2) even (480 and 483 fit, 481
does not). Run with Debian's /usr/bin/python3 (python3-onnx):
  /usr/bin/python3 testdata/fpn_add.py testdata/fpn_add.onnx
"""

import sys

import onnx
from onnx import TensorProto, helper


def main():
  conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}
  nodes = [
      helper.make_node("Conv", ["x", "c2_w"], ["c2"], "conv_c2", **conv),
      helper.make_node("Conv", ["c2", "c4_w"], ["c4"], "conv_c4", **conv),
      helper.make_node("Resize", ["c4", "", "scales"], ["up"], "upsample2", mode="nearest"),
      helper.make_node("Add", ["c2", "up"], ["sum2"], "fpn_add"),
      helper.make_node("Relu", ["sum2"], ["y"], "relu"),
  ]
  weights = [
      helper.make_tensor("c2_w", TensorProto.FLOAT, [8, 3, 3, 3], [0.0] * 216),
      helper.make_tensor("c4_w", TensorProto.FLOAT, [8, 8, 3, 3], [0.0] * 576),
      helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0]),
  ]
  graph = helper.make_graph(nodes, "fpn_add",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "height", "width"])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, None, None])], weights)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="testdata/fpn_add.py")
  onnx.checker.check_model(model)
  onnx.save(model, sys.argv[1])


if __name__ == "__main__":
  main()
