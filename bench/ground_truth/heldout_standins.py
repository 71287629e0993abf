#!/usr/bin/python3
"""Writes stand-ins for issue 37's held-out models (which cannot be
downloaded here): the structure their exporters write, random weights.

VARIANT tf_audio: an audio embedding model as tf2onnx exports a Keras one:
  input [1, 96, 64, 1] (NHWC log-mel patches), Transpose perm [0, 3, 1, 2]
  to NCHW (tf2onnx's transpose optimizer leaves only this one), Conv stacks
  of 24 and 32 channels (3x3, bias), each Conv followed by LeakyRelu 0.2
  and an elementwise Max of two branches (Keras `Maximum`), MaxPool 2x2
  between stacks, then ReduceMean over H and W, MatMul + Add to 128.
VARIANT ppocr_cls: PaddleOCR's mobile v2 text direction classifier as
  paddle2onnx writes it (opset 11): input [1, 3, 48, 192], MobileNetV3-small
  at scale 0.35 (channels made divisible by 8), Conv + BatchNormalization,
  hardswish as x * HardSigmoid(x) (alpha 1/6), SE blocks (GlobalAveragePool,
  Conv 1x1, Relu, Conv 1x1, HardSigmoid, Mul), rec_mobilenet_v3's strides
  ((1, 2) then (2, 1) three times), a last Conv 1x1, MaxPool 2x2, ClsHead's
  GlobalAveragePool, Flatten, MatMul + Add to 2, Softmax.
VARIANT dbnet: a DBNet text detector (PP-OCR det style) at [1, 3, 640, 640]:
  a MobileNetV3-large-0.5-like backbone (outputs 16, 24, 56, 480 channels at
  strides 4, 8, 16, 32), an FPN neck (1x1 laterals to 96, Resize nearest x2
  + Add top-down, 3x3 Convs to 24, Resize nearest x8/x4/x2 to stride 4,
  Concat of four scales to 96), the head Conv 3x3 + BatchNormalization +
  Relu, ConvTranspose 2x2 s2 + BatchNormalization + Relu, ConvTranspose
  2x2 s2 to 1 channel, Sigmoid: [1, 1, 640, 640].
VARIANT trt_qdq: static QDQ as TensorRT-style explicit quantization writes
  it (pytorch-quantization export): int8 symmetric (zero point 0); float
  weights with QuantizeLinear -> DequantizeLinear (per channel, axis 0) and
  activations with Q -> DQ on the inputs of every Conv and Gemm, a Q -> DQ on
  their outputs, and the float Relu, Add (residual), MaxPool and
  GlobalAveragePool between; a ResNet-18-like net at [1, 3, 224, 224].
VARIANT hardswish_plain|hardswish_swapped|hardswish_alpha02|
  hardswish_third_reader|hardswish_after_add: the probes of NCHWc's HardSwish
  (analyzer/runtimes/onnxruntime/passes/nchwc_layout.cc): Conv 32 -> 32 on
  [1, 32, 28, 28], c * HardSigmoid(c) (alpha 1/6; swapped: Mul(g, c);
  alpha02: alpha 0.2; third_reader: a Relu of c added to the product;
  after_add: c is the sum of two Convs), then a Conv + Relu.
Opset 13 (ppocr_cls 11). Run with Debian's /usr/bin/python3:
  /usr/bin/python3 heldout_standins.py OUT.onnx VARIANT
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
  def __init__(self):
    self.rng = np.random.default_rng(37)
    self.initializers = []
    self.nodes = []
    self.count = 0

  def name(self, base):
    self.count += 1
    return f"{base}_{self.count}"

  def array(self, name, values):
    self.initializers.append(numpy_helper.from_array(values, name))
    return name

  def weight(self, name, shape):
    fan_in = int(np.prod(shape[1:]))
    return self.array(name, (self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32))

  def const(self, name, values, dtype):
    return self.array(name, np.array(values, dtype))

  def node(self, op, inputs, **attrs):
    out = self.name(op.lower())
    self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
    return out

  def conv(self, x, c_in, c_out, k, s=1, groups=1, bias=True):
    name = self.name("conv")
    inputs = [x, self.weight(name + "_w", [c_out, c_in // groups, k, k])]
    if bias:
      inputs.append(self.weight(name + "_b", [c_out]))
    sh, sw = (s, s) if isinstance(s, int) else s
    return self.node("Conv", inputs, kernel_shape=[k, k], strides=[sh, sw], pads=[k // 2] * 4, group=groups)

  def bn(self, x, c):
    name = self.name("bn")
    scale = self.array(name + "_s", (1 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
    bias = self.array(name + "_b", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
    mean = self.array(name + "_m", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
    var = self.array(name + "_v", (1 + 0.1 * self.rng.random(c)).astype(np.float32))
    return self.node("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)

  def resize(self, x, factor):
    scales = self.const(self.name("scales"), [1, 1, factor, factor], np.float32)
    roi = self.const(self.name("roi"), [], np.float32)
    return self.node("Resize", [x, roi, scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")

  def model(self, inputs, outputs, opset=13):
    graph = helper.make_graph(self.nodes, "standin", inputs, outputs, self.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def tf_audio():
  b = Builder()
  x = b.node("Transpose", ["input"], perm=[0, 3, 1, 2])
  c_in = 1
  for stage, (c, blocks) in enumerate([(24, 2), (32, 2), (32, 2)]):
    for _ in range(blocks):
      y = b.node("LeakyRelu", [b.conv(x, c_in, c, 3)], alpha=0.2)
      z = b.node("LeakyRelu", [b.conv(y, c, c, 3)], alpha=0.2)
      x = b.node("Max", [y, z])
      c_in = c
    if stage < 2:
      x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
  pooled = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
  out = b.node("Add", [b.node("MatMul", [pooled, b.weight("fc_w", [c_in, 128])]), b.weight("fc_b", [128])])
  b.nodes[-1].output[0] = "embedding"
  return b.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 96, 64, 1])],
                 [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [1, 128])])


def hardswish(b, x):
  return b.node("Mul", [x, b.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)])


def divisible(v, d=8):
  """PaddleOCR's make_divisible."""
  new_v = max(d, int(v + d / 2) // d * d)
  return new_v + d if new_v < 0.9 * v else new_v


def mobilenet_v3(b, x, config, scale, c_in):
  """Inverted residual blocks: (k, expand, out, se, act, stride); the outputs of each stride's last block."""
  features = []
  for k, exp, out, se, act, stride in config:
    exp, out = divisible(scale * exp), divisible(scale * out)
    y = b.bn(b.conv(x, c_in, exp, 1, bias=False), exp)
    y = hardswish(b, y) if act == "hs" else b.node("Relu", [y])
    y = b.bn(b.conv(y, exp, exp, k, s=stride, groups=exp, bias=False), exp)
    y = hardswish(b, y) if act == "hs" else b.node("Relu", [y])
    if se:
      squeeze = divisible(exp // 4)
      s = b.node("Relu", [b.conv(b.node("GlobalAveragePool", [y]), exp, squeeze, 1)])
      s = b.node("HardSigmoid", [b.conv(s, squeeze, exp, 1)], alpha=0.2, beta=0.5)
      y = b.node("Mul", [y, s])
    y = b.bn(b.conv(y, exp, out, 1, bias=False), out)
    if stride == 1 and c_in == out:
      y = b.node("Add", [x, y])
    features.append((y, out, stride))
    x, c_in = y, out
  return x, c_in, features


def ppocr_cls():
  b = Builder()
  scale = 0.35
  c = divisible(16 * scale)
  x = hardswish(b, b.bn(b.conv("x", 3, c, 3, s=2, bias=False), c))
  config = [(3, 16, 16, True, "relu", (1, 2)), (3, 72, 24, False, "relu", (2, 1)),
            (3, 88, 24, False, "relu", 1), (5, 96, 40, True, "hs", (2, 1)), (5, 240, 40, True, "hs", 1),
            (5, 240, 40, True, "hs", 1), (5, 120, 48, True, "hs", 1), (5, 144, 48, True, "hs", 1),
            (5, 288, 96, True, "hs", (2, 1)), (5, 576, 96, True, "hs", 1), (5, 576, 96, True, "hs", 1)]
  x, c, _ = mobilenet_v3(b, x, config, scale, c)
  last = divisible(576 * scale)
  x = hardswish(b, b.bn(b.conv(x, c, last, 1, bias=False), last))
  x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
  x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)  # ClsHead's AdaptiveAvgPool2D(1).
  x = b.node("Add", [b.node("MatMul", [x, b.weight("fc_w", [last, 2])]), b.weight("fc_b", [2])])
  b.node("Softmax", [x], axis=1)
  b.nodes[-1].output[0] = "prob"
  return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 48, 192])],
                 [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 2])], opset=11)


def dbnet():
  b = Builder()
  scale = 0.5
  c = divisible(16 * scale)
  x = hardswish(b, b.bn(b.conv("x", 3, c, 3, s=2, bias=False), c))
  config = [(3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2), (3, 72, 24, False, "relu", 1),
            (5, 72, 40, True, "relu", 2), (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
            (3, 240, 80, False, "hs", 2), (3, 200, 80, False, "hs", 1), (3, 184, 80, False, "hs", 1),
            (3, 184, 80, False, "hs", 1), (3, 480, 112, True, "hs", 1), (3, 672, 112, True, "hs", 1),
            (5, 672, 160, True, "hs", 2), (5, 960, 160, True, "hs", 1), (5, 960, 160, True, "hs", 1)]
  x, c, features = mobilenet_v3(b, x, config, scale, c)
  last = divisible(960 * scale)
  x = hardswish(b, b.bn(b.conv(x, c, last, 1, bias=False), last))
  # The last feature of each stride (4, 8, 16) and the last Conv (32).
  outs = [features[2], features[5], features[11]]
  scales = [(y, ch) for y, ch, _ in outs] + [(x, last)]
  inner = 96
  laterals = [b.conv(y, ch, inner, 1, bias=False) for y, ch in scales]
  top = laterals[3]
  merged = [top]
  for lateral in reversed(laterals[:3]):
    top = b.node("Add", [lateral, b.resize(top, 2)])
    merged.insert(0, top)
  p = [b.conv(m, inner, inner // 4, 3, bias=False) for m in merged]
  p = [p[0], b.resize(p[1], 2), b.resize(p[2], 4), b.resize(p[3], 8)]
  fuse = b.node("Concat", list(reversed(p)), axis=1)
  h = b.node("Relu", [b.bn(b.conv(fuse, inner, inner // 4, 3, bias=False), inner // 4)])
  up_w = b.weight("up1_w", [inner // 4, inner // 4, 2, 2])
  h = b.node("ConvTranspose", [h, up_w, b.weight("up1_b", [inner // 4])], kernel_shape=[2, 2], strides=[2, 2])
  h = b.node("Relu", [b.bn(h, inner // 4)])
  up_w = b.weight("up2_w", [inner // 4, 1, 2, 2])
  h = b.node("ConvTranspose", [h, up_w, b.weight("up2_b", [1])], kernel_shape=[2, 2], strides=[2, 2])
  b.node("Sigmoid", [h])
  b.nodes[-1].output[0] = "maps"
  return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 640, 640])],
                 [helper.make_tensor_value_info("maps", TensorProto.FLOAT, [1, 1, 640, 640])])


def qdq(b, x, scale, axis=None):
  """Q -> DQ of x, int8 symmetric: one scale, or per channel along axis."""
  name = b.name("qdq")
  s = b.const(name + "_s", scale, np.float32)
  zp = b.const(name + "_zp", np.zeros(np.shape(scale), np.int8), np.int8)
  attrs = {} if axis is None else {"axis": axis}
  q = b.node("QuantizeLinear", [x, s, zp], **attrs)
  return b.node("DequantizeLinear", [q, s, zp], **attrs)


def qconv(b, x, c_in, c_out, k, s=1):
  name = b.name("conv")
  w = b.weight(name + "_w", [c_out, c_in, k, k])
  w_scale = (np.abs(numpy_helper.to_array(b.initializers[-1])).reshape(c_out, -1).max(1) / 127).astype(np.float32)
  inputs = [qdq(b, x, 0.05), qdq(b, w, w_scale, axis=0), b.weight(name + "_b", [c_out])]
  y = b.node("Conv", inputs, kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)
  return qdq(b, y, 0.05)


def trt_qdq():
  b = Builder()
  x = b.node("Relu", [qconv(b, "x", 3, 64, 7, 2)])
  x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
  c = 64
  for out, stride in [(64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
    y = b.node("Relu", [qconv(b, x, c, out, 3, stride)])
    y = qconv(b, y, out, out, 3)
    shortcut = qconv(b, x, c, out, 1, stride) if stride != 1 or c != out else qdq(b, x, 0.05)
    x = b.node("Relu", [b.node("Add", [y, shortcut])])
    c = out
  x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
  w = b.weight("fc_w", [1000, c])
  w_scale = (np.abs(numpy_helper.to_array(b.initializers[-1])).max(1) / 127).astype(np.float32)
  y = b.node("Gemm", [qdq(b, x, 0.05), qdq(b, w, w_scale, axis=0), b.weight("fc_b", [1000])], transB=1)
  qdq(b, y, 0.05)
  b.nodes[-1].output[0] = "logits"
  return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])],
                 [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])])


def hardswish_probe(kind):
  b = Builder()
  y = b.conv("x", 32, 32, 3)
  if kind == "after_add":
    y = b.node("Add", [y, b.conv("x", 32, 32, 3)])
  hs = b.node("HardSigmoid", [y], alpha=0.2 if kind == "alpha02" else 1.0 / 6, beta=0.5)
  z = b.node("Mul", [hs, y] if kind == "swapped" else [y, hs])
  if kind == "third_reader":
    z = b.node("Add", [z, b.node("Relu", [y])])
  b.node("Relu", [b.conv(z, 32, 32, 3)])
  b.nodes[-1].output[0] = "y"
  return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 28, 28])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 28, 28])])


def main():
  out, variant = sys.argv[1], sys.argv[2]
  builders = {"tf_audio": tf_audio, "ppocr_cls": ppocr_cls, "dbnet": dbnet, "trt_qdq": trt_qdq}
  if variant.startswith("hardswish_"):
    model = hardswish_probe(variant[len("hardswish_"):])
  else:
    model = builders[variant]()
  onnx.checker.check_model(model)
  onnx.save(model, out)


if __name__ == "__main__":
  main()
