#!/usr/bin/python3
"""Writes a small segmenter whose peak is in two places: its first,
full-resolution stage and its upsampling head (issue 25's second segment).

Input x float [1, 3, 192, 192] -> Conv 3x3 (16) -> Relu -> Conv 3x3 s2 (32)
-> Relu -> Conv 3x3 s2 (32) -> Relu -> Conv 3x3 s2 (32) -> Relu -> a
squeeze-excitation gate (GlobalAveragePool, Conv 1x1, Sigmoid, Mul: not
patchable, it ends the prefix) -> head: Resize nearest x2 (asymmetric,
floor, scales) -> Conv 3x3 (16) -> Relu -> ConvTranspose 3x3 s2 pads 1
output_padding 1 (8) -> Relu -> Resize linear x2 (half_pixel, sizes) ->
Conv 3x3 (8) -> Relu -> Conv 1x1 (2) -> y [1, 2, 192, 192].
VARIANT deconv_last puts the ConvTranspose at full resolution instead:
head Resize linear x2 (half_pixel, sizes) -> Conv 3x3 (16) -> Relu ->
Resize nearest x2 (asymmetric, floor, scales) -> Conv 3x3 (8) -> Relu ->
ConvTranspose 3x3 s2 pads 1 output_padding 1 (8) -> Relu -> Conv 1x1 (2).
Weights are random (numpy, seed 25), opset 13. Run with Debian's
/usr/bin/python3:
  /usr/bin/python3 upsampling_segmenter.py OUT.onnx [resize_last|deconv_last]
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
  variant = sys.argv[2] if len(sys.argv) > 2 else "resize_last"
  if variant not in ("resize_last", "deconv_last"):
    sys.exit(f"unknown variant {variant}: resize_last or deconv_last")
  rng = np.random.default_rng(25)
  initializers = []
  nodes = []

  def weight(name, shape):
    fan_in = int(np.prod(shape[1:]))
    initializers.append(numpy_helper.from_array(
        (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name))
    return name

  def conv(source, output, c_in, c_out, kernel, stride=1, relu=True):
    pad = kernel // 2
    nodes.append(helper.make_node(
        "Conv", [source, weight(output + "_w", [c_out, c_in, kernel, kernel]),
                 weight(output + "_b", [c_out])], [output], name=output,
        kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4))
    if not relu:
      return output
    nodes.append(helper.make_node("Relu", [output], [output + "_relu"], name=output + "_relu"))
    return output + "_relu"

  x = conv("x", "stem", 3, 16, 3)
  x = conv(x, "down1", 16, 32, 3, 2)
  x = conv(x, "down2", 32, 32, 3, 2)
  x = conv(x, "down3", 32, 32, 3, 2)
  nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="pooled"))
  gate = conv("pooled", "gate", 32, 32, 1, relu=False)
  nodes.append(helper.make_node("Sigmoid", [gate], ["gate_sigmoid"], name="gate_sigmoid"))
  nodes.append(helper.make_node("Mul", [x, "gate_sigmoid"], ["feature"], name="feature"))
  initializers.append(numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "nearest_scales"))

  def nearest(source, output):
    nodes.append(helper.make_node("Resize", [source, "", "nearest_scales"], [output], name=output, mode="nearest",
                                  coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    return output

  def linear(source, output, size):
    initializers.append(numpy_helper.from_array(np.array(size, np.int64), output + "_sizes"))
    nodes.append(helper.make_node("Resize", [source, "", "", output + "_sizes"], [output], name=output, mode="linear",
                                  coordinate_transformation_mode="half_pixel"))
    return output

  def deconv(source, c_in, c_out):
    nodes.append(helper.make_node(
        "ConvTranspose", [source, weight("deconv_w", [c_in, c_out, 3, 3]), weight("deconv_b", [c_out])], ["deconv"],
        name="deconv", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]))
    nodes.append(helper.make_node("Relu", ["deconv"], ["deconv_relu"], name="deconv_relu"))
    return "deconv_relu"

  if variant == "resize_last":
    x = conv(nearest("feature", "up1"), "head1", 32, 16, 3)
    x = deconv(x, 16, 8)
    x = conv(linear(x, "up2", [1, 8, 192, 192]), "head2", 8, 8, 3)
  else:
    x = conv(linear("feature", "up1", [1, 32, 48, 48]), "head1", 32, 16, 3)
    x = conv(nearest(x, "up2"), "head2", 16, 8, 3)
    x = deconv(x, 8, 8)
  conv(x, "y", 8, 2, 1, relu=False)
  graph = helper.make_graph(nodes, "upsampling_segmenter",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 192, 192])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 192, 192])],
                            initializers)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnx-footprint")
  model.ir_version = 7
  onnx.checker.check_model(model, full_check=True)
  onnx.save(model, sys.argv[1])


if __name__ == "__main__":
  main()
