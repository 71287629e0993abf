#!/usr/bin/python3
"""Writes detector-shaped models with random weights (issue 25's held-out
detectors, which cannot be downloaded here): the ops and layouts of common
detectors, so that fit's patch option can be checked on them.

VARIANT yolo: a YOLOv8-n-like detector, input [1, 3, 320, 320]. Conv + SiLU
  (Sigmoid * Mul) everywhere; backbone Conv 3x3 s2 stem, stride-2 convs and
  C2f blocks (Conv 1x1, Split along channels, bottlenecks of two Conv 3x3
  with a residual Add, Concat, Conv 1x1); SPPF (Conv 1x1, three chained
  MaxPool 5x5 s1 p2, Concat, Conv 1x1); a PAN neck (Resize nearest x2 +
  Concat up, Conv s2 + Concat down) and decoupled heads at strides 8, 16, 32
  (box 64 + class 80 channels), each flattened (Reshape) and concatenated.
VARIANT yolov5: a YOLOv5-s-like detector before v6 (s widths), input
  [1, 3, 320, 320]: Focus (four strided Slices over H and W, Concat), C3
  blocks, SPP (parallel MaxPool 5, 9, 13), an FPN/PAN neck and anchor heads
  (Reshape, Transpose, Sigmoid, Concat).
VARIANT ssd: an SSD-MobileNet-like detector, input [1, 3, 300, 300]:
  TF-style Pad (bottom/right) before stride-2 convs, inverted residuals with
  depthwise convs and Relu6 (Clip 0..6), HardSwish in the last stages, extra
  layers down to 1x1 and box/class heads at six scales (Transpose, Reshape,
  Concat).
VARIANT centernet: a CenterNet/RetinaFace-like detector, input
  [1, 3, 256, 256]: a ResNet-18-like backbone (BatchNormalization, Relu,
  stride-2 residual blocks with a projection shortcut) to stride 32, an
  upsampling neck (ConvTranspose 4x4 s2, Resize linear x2, DepthToSpace 2)
  back to stride 4 and heads at stride 4 (heatmap with Sigmoid, size,
  offset).
VARIANT retinaface: a RetinaFace-MobileNet-0.25-like face detector, input
  [1, 3, 640, 640]: depthwise-separable convs with BatchNormalization and
  LeakyRelu, an FPN (1x1 laterals, Resize nearest to stored sizes, Add),
  SSH context modules (Concat of 3x3 branches, Relu) and box, class and
  landmark heads at strides 8, 16, 32 (Transpose, Reshape, Concat,
  Softmax).
VARIANT resnet50: not a detector but the backbone of many: ResNet-50 v1 as
  light_resnet50 has it (Caffe2-style bottlenecks: Conv 1x1, 3x3 with the
  stride, 1x1, BatchNormalization, a projection shortcut 1x1 with the
  stride, Sum, Relu; stages of 3, 4, 6, 3 blocks; a 100 MB file), input
  [1, 3, 224, 224], AveragePool 7x7, Flatten, Gemm to 1000 classes: the
  residual stages that chained patch segments keep in pieces.
VARIANT dbnet: PaddleOCR's PP-OCRv4 mobile text detector (DBNet) as
  paddle2onnx writes it at opset 11, input [1, 3, 640, 640] (the export
  leaves N, H and W dynamic: a --dim binds them there): PPLCNetV3 x0.75
  (det) with its re-parameterized blocks (each a Conv with bias, then
  LearnableAffineBlock's Mul and Add by one-element weights; hardswish as
  Add 3, Clip 0..6, Mul, Div 6 with Constant nodes; no activation after a
  stride-2 depthwise conv; SE as GlobalAveragePool, Conv, Relu, Conv,
  HardSigmoid, Mul in the last stage), whose stem holds two 320 x 320 x 32
  tensors; 1x1 convs to 12, 18, 42, 360 channels at strides 4 to 32; the
  RSEFPN neck (RSE layers: Conv, then x + x * SE(x) with HardSigmoid 0.2;
  laterals to 96 channels, Resize nearest x2 + Add top-down, 3x3 RSE layers
  to 24, Resize nearest x8, x4, x2 to stride 4 with Constant roi and scales
  as paddle2onnx writes them, Concat of the four scales) and DBHead's shrink
  map (Conv 3x3, BatchNormalization, Relu, ConvTranspose 2x2 s2,
  BatchNormalization, Relu, ConvTranspose 2x2 s2, Sigmoid): [1, 1, 640, 640].
Weights are random (numpy, seed 25), opset 13 (HardSwish needs 14: ssd is
opset 14; dbnet 11). Run with Debian's /usr/bin/python3:
  /usr/bin/python3 detector_models.py OUT.onnx yolo|yolov5|ssd|centernet|retinaface|resnet50|dbnet
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
  def __init__(self):
    self.rng = np.random.default_rng(25)
    self.initializers = []
    self.nodes = []
    self.count = 0

  def name(self, base):
    self.count += 1
    return f"{base}_{self.count}"

  def weight(self, name, shape, scale=1.0):
    fan_in = int(np.prod(shape[1:]))
    self.initializers.append(numpy_helper.from_array(
        (scale * self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name))
    return name

  def const(self, name, values, dtype):
    self.initializers.append(numpy_helper.from_array(np.array(values, dtype), name))
    return name

  def node(self, op, inputs, outputs=None, **attrs):
    out = outputs or [self.name(op.lower())]
    self.nodes.append(helper.make_node(op, inputs, out, name=out[0], **attrs))
    return out[0] if len(out) == 1 else out

  def conv(self, x, c_in, c_out, k, s=1, groups=1, pads=None, bias=True):
    name = self.name("conv")
    inputs = [x, self.weight(name + "_w", [c_out, c_in // groups, k, k])]
    if bias:
      inputs.append(self.weight(name + "_b", [c_out]))
    p = k // 2 if pads is None else pads
    return self.node("Conv", inputs, [name], kernel_shape=[k, k], strides=[s, s], group=groups,
                     pads=[p] * 4 if isinstance(p, int) else p)

  def silu(self, x):
    return self.node("Mul", [x, self.node("Sigmoid", [x])])

  def conv_silu(self, x, c_in, c_out, k, s=1):
    return self.silu(self.conv(x, c_in, c_out, k, s))

  def bn(self, x, c):
    name = self.name("bn")
    scale = self.const(name + "_s", 1 + 0.1 * self.rng.standard_normal(c), np.float32)
    bias = self.const(name + "_b", 0.1 * self.rng.standard_normal(c), np.float32)
    mean = self.const(name + "_m", 0.1 * self.rng.standard_normal(c), np.float32)
    var = self.const(name + "_v", 1 + 0.1 * self.rng.random(c), np.float32)
    return self.node("BatchNormalization", [x, scale, bias, mean, var], [name])

  def relu6(self, x):
    return self.node("Clip", [x, self.const(self.name("zero"), 0.0, np.float32),
                              self.const(self.name("six"), 6.0, np.float32)])


def yolo(b):
  def c2f(x, c_in, c_out, n, shortcut=True):
    hidden = c_out // 2
    y = b.conv_silu(x, c_in, 2 * hidden, 1)
    parts = b.node("Split", [y, b.const(b.name("split"), [hidden, hidden], np.int64)],
                   [b.name("split_a"), b.name("split_b")], axis=1)
    outs = list(parts)
    last = parts[1]
    for _ in range(n):
      m = b.conv_silu(b.conv_silu(last, hidden, hidden, 3), hidden, hidden, 3)
      last = b.node("Add", [last, m]) if shortcut else m
      outs.append(last)
    cat = b.node("Concat", outs, axis=1)
    return b.conv_silu(cat, (2 + n) * hidden, c_out, 1)

  def sppf(x, c):
    hidden = c // 2
    y = b.conv_silu(x, c, hidden, 1)
    pools = [y]
    for _ in range(3):
      pools.append(b.node("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2]))
    return b.conv_silu(b.node("Concat", pools, axis=1), 4 * hidden, c, 1)

  scales = b.const("up_scales", [1, 1, 2, 2], np.float32)

  def up(x):
    return b.node("Resize", [x, "", scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                  nearest_mode="floor")

  x = b.conv_silu("images", 3, 16, 3, 2)        # 160
  x = b.conv_silu(x, 16, 32, 3, 2)              # 80
  x = c2f(x, 32, 32, 1)
  x = b.conv_silu(x, 32, 64, 3, 2)              # 40
  p3 = c2f(x, 64, 64, 2)
  x = b.conv_silu(p3, 64, 128, 3, 2)            # 20
  p4 = c2f(x, 128, 128, 2)
  x = b.conv_silu(p4, 128, 256, 3, 2)           # 10
  x = c2f(x, 256, 256, 1)
  p5 = sppf(x, 256)
  n4 = c2f(b.node("Concat", [up(p5), p4], axis=1), 384, 128, 1, shortcut=False)
  n3 = c2f(b.node("Concat", [up(n4), p3], axis=1), 192, 64, 1, shortcut=False)
  m4 = c2f(b.node("Concat", [b.conv_silu(n3, 64, 64, 3, 2), n4], axis=1), 192, 128, 1, shortcut=False)
  m5 = c2f(b.node("Concat", [b.conv_silu(m4, 128, 128, 3, 2), p5], axis=1), 384, 256, 1, shortcut=False)
  flat = []
  for feature, c in ((n3, 64), (m4, 128), (m5, 256)):
    box = b.conv(b.conv_silu(b.conv_silu(feature, c, 64, 3), 64, 64, 3), 64, 64, 1)
    cls = b.conv(b.conv_silu(b.conv_silu(feature, c, 80, 3), 80, 80, 3), 80, 80, 1)
    head = b.node("Concat", [box, cls], axis=1)
    flat.append(b.node("Reshape", [head, b.const(b.name("shape"), [1, 144, -1], np.int64)]))
  b.node("Concat", flat, ["output0"], axis=2)
  return [1, 3, 320, 320], {"output0": [1, 144, 2100]}, 13


def yolov5(b):
  def c3(x, c_in, c_out, n, shortcut=True):
    hidden = c_out // 2
    m = b.conv_silu(x, c_in, hidden, 1)
    for _ in range(n):
      y = b.conv_silu(b.conv_silu(m, hidden, hidden, 1), hidden, hidden, 3)
      m = b.node("Add", [m, y]) if shortcut else y
    return b.conv_silu(b.node("Concat", [m, b.conv_silu(x, c_in, hidden, 1)], axis=1), 2 * hidden, c_out, 1)

  scales = b.const("up_scales", [1, 1, 2, 2], np.float32)

  def up(x):
    return b.node("Resize", [x, "", scales], mode="nearest", coordinate_transformation_mode="asymmetric",
                  nearest_mode="floor")

  # Focus: the four pixel phases as channels (strided Slices over H and W), then a Conv.
  phases = []
  for h0, w0 in ((0, 0), (1, 0), (0, 1), (1, 1)):
    phases.append(b.node("Slice", ["images", b.const(b.name("starts"), [h0, w0], np.int64),
                                   b.const(b.name("ends"), [320, 320], np.int64),
                                   b.const(b.name("axes"), [2, 3], np.int64),
                                   b.const(b.name("steps"), [2, 2], np.int64)]))
  w = [32, 64, 128, 256, 512]  # YOLOv5-s's widths.
  x = b.conv_silu(b.node("Concat", phases, axis=1), 12, w[0], 3)  # 160
  x = b.conv_silu(x, w[0], w[1], 3, 2)                             # 80
  x = c3(x, w[1], w[1], 1)
  x = b.conv_silu(x, w[1], w[2], 3, 2)                             # 40
  p3 = c3(x, w[2], w[2], 3)
  x = b.conv_silu(p3, w[2], w[3], 3, 2)                            # 20
  p4 = c3(x, w[3], w[3], 3)
  x = b.conv_silu(p4, w[3], w[4], 3, 2)                            # 10
  y = b.conv_silu(x, w[4], w[3], 1)                                # SPP: parallel 5, 9, 13
  pools = [y] + [b.node("MaxPool", [y], kernel_shape=[k, k], strides=[1, 1], pads=[k // 2] * 4) for k in (5, 9, 13)]
  x = c3(b.conv_silu(b.node("Concat", pools, axis=1), 4 * w[3], w[4], 1), w[4], w[4], 1, shortcut=False)
  h5 = b.conv_silu(x, w[4], w[3], 1)
  x = c3(b.node("Concat", [up(h5), p4], axis=1), 2 * w[3], w[3], 1, shortcut=False)
  h4 = b.conv_silu(x, w[3], w[2], 1)
  n3 = c3(b.node("Concat", [up(h4), p3], axis=1), 2 * w[2], w[2], 1, shortcut=False)
  n4 = c3(b.node("Concat", [b.conv_silu(n3, w[2], w[2], 3, 2), h4], axis=1), 2 * w[2], w[3], 1, shortcut=False)
  n5 = c3(b.node("Concat", [b.conv_silu(n4, w[3], w[3], 3, 2), h5], axis=1), 2 * w[3], w[4], 1, shortcut=False)
  flat = []
  for feature, c, size in ((n3, w[2], 40), (n4, w[3], 20), (n5, w[4], 10)):
    y = b.node("Reshape", [b.conv(feature, c, 255, 1, pads=0), b.const(b.name("shape"), [1, 3, 85, size * size], np.int64)])
    y = b.node("Sigmoid", [b.node("Transpose", [y], perm=[0, 1, 3, 2])])
    flat.append(b.node("Reshape", [y, b.const(b.name("shape"), [1, -1, 85], np.int64)]))
  b.node("Concat", flat, ["output"], axis=1)
  return [1, 3, 320, 320], {"output": None}, 13


def ssd(b):
  def tf_pad(x):
    # TF "SAME" for a stride-2 3x3 on an even size: one row and column after.
    return b.node("Pad", [x, b.const(b.name("pads"), [0, 0, 0, 0, 0, 0, 1, 1], np.int64)], mode="constant")

  def act(x, hard):
    return b.node("HardSwish", [x]) if hard else b.relu6(x)

  def inverted(x, c_in, c_out, expand, s, hard):
    hidden = c_in * expand
    y = act(b.bn(b.conv(x, c_in, hidden, 1, bias=False), hidden), hard) if expand != 1 else x
    if s == 2:
      y = b.conv(tf_pad(y), hidden, hidden, 3, 2, groups=hidden, pads=0, bias=False)
    else:
      y = b.conv(y, hidden, hidden, 3, 1, groups=hidden, bias=False)
    y = act(b.bn(y, hidden), hard)
    y = b.bn(b.conv(y, hidden, c_out, 1, bias=False), c_out)
    return b.node("Add", [x, y]) if s == 1 and c_in == c_out else y

  x = b.relu6(b.bn(b.conv(tf_pad("image"), 3, 32, 3, 2, pads=0, bias=False), 32))  # 150
  x = inverted(x, 32, 16, 1, 1, False)
  x = inverted(x, 16, 24, 6, 2, False)   # 75
  x = inverted(x, 24, 24, 6, 1, False)
  x = inverted(x, 24, 32, 6, 2, False)   # 38 (75 padded to 76)
  x = inverted(x, 32, 32, 6, 1, False)
  x = inverted(x, 32, 64, 6, 2, True)    # 19
  x = inverted(x, 64, 64, 6, 1, True)
  f1 = inverted(x, 64, 96, 6, 1, True)
  x = inverted(f1, 96, 160, 6, 2, True)  # 10
  f2 = inverted(x, 160, 160, 6, 1, True)
  features = [(f1, 96), (f2, 160)]
  x = f2
  for c_mid, c_out in ((128, 256), (64, 128), (64, 128), (32, 64)):  # 5, 3, 2, 1
    y = b.relu6(b.conv(x, features[-1][1], c_mid, 1))
    x = b.relu6(b.conv(y, c_mid, c_out, 3, 2))
    features.append((x, c_out))
  boxes, scores = [], []
  for feature, c in features:
    for channels, out in ((4 * 6, boxes), (91 * 6, scores)):
      y = b.node("Transpose", [b.conv(feature, c, channels, 3)], perm=[0, 2, 3, 1])
      out.append(b.node("Reshape", [y, b.const(b.name("shape"), [1, -1, channels // 6], np.int64)]))
  b.node("Concat", boxes, ["boxes"], axis=1)
  b.node("Softmax", [b.node("Concat", scores, axis=1)], ["scores"], axis=-1)
  return [1, 3, 300, 300], {"boxes": None, "scores": None}, 14


def centernet(b):
  def block(x, c_in, c_out, s):
    y = b.node("Relu", [b.bn(b.conv(x, c_in, c_out, 3, s, bias=False), c_out)])
    y = b.bn(b.conv(y, c_out, c_out, 3, bias=False), c_out)
    skip = x if s == 1 and c_in == c_out else b.bn(b.conv(x, c_in, c_out, 1, s, pads=0, bias=False), c_out)
    return b.node("Relu", [b.node("Add", [y, skip])])

  x = b.node("Relu", [b.bn(b.conv("input", 3, 64, 7, 2, bias=False), 64)])   # 128
  x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 64
  x = block(block(x, 64, 64, 1), 64, 64, 1)     # ResNet-18's widths
  x = block(block(x, 64, 128, 2), 128, 128, 1)  # 32
  x = block(block(x, 128, 256, 2), 256, 256, 1)  # 16
  x = block(block(x, 256, 256, 2), 256, 256, 1)  # 8 (ResNet-18 has 512 here: a smaller file)
  # Neck: ConvTranspose 4x4 s2 (CenterNet's), Resize linear, DepthToSpace.
  name = b.name("deconv")
  x = b.node("ConvTranspose", [x, b.weight(name + "_w", [256, 128, 4, 4]), b.weight(name + "_b", [128])], [name],
             kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])  # 16
  x = b.node("Relu", [b.bn(x, 128)])
  x = b.node("Resize", [x, "", b.const("linear_scales", [1, 1, 2, 2], np.float32)], mode="linear",
             coordinate_transformation_mode="half_pixel")  # 32
  x = b.node("Relu", [b.bn(b.conv(x, 128, 256, 3, bias=False), 256)])
  x = b.node("DepthToSpace", [x], blocksize=2, mode="DCR")  # 64 x 64, 64 channels
  x = b.node("Relu", [b.bn(b.conv(x, 64, 64, 3, bias=False), 64)])
  outputs = {}
  for head, channels in (("heatmap", 80), ("wh", 2), ("reg", 2)):
    y = b.conv(b.node("Relu", [b.conv(x, 64, 64, 3)]), 64, channels, 1)
    if head == "heatmap":
      y = b.node("Sigmoid", [y])
    b.node("Identity", [y], [head])
    outputs[head] = [1, channels, 64, 64]
  return [1, 3, 256, 256], outputs, 13


def retinaface(b):
  def conv_bn(x, c_in, c_out, k, s=1, groups=1, leaky=True):
    y = b.bn(b.conv(x, c_in, c_out, k, s, groups=groups, bias=False), c_out)
    return b.node("LeakyRelu", [y], alpha=0.1) if leaky else y

  def dw(x, c_in, c_out, s):
    return conv_bn(conv_bn(x, c_in, c_in, 3, s, groups=c_in), c_in, c_out, 1)

  def up_to(x, size):
    sizes = b.const(b.name("sizes"), size, np.int64)
    return b.node("Resize", [x, "", "", sizes], mode="nearest", coordinate_transformation_mode="asymmetric",
                  nearest_mode="floor")

  def ssh(x, c):
    a = conv_bn(x, c, c // 2, 3, leaky=False)
    t = conv_bn(x, c, c // 4, 3)
    bb = conv_bn(t, c // 4, c // 4, 3, leaky=False)
    cc = conv_bn(conv_bn(t, c // 4, c // 4, 3), c // 4, c // 4, 3, leaky=False)
    return b.node("Relu", [b.node("Concat", [a, bb, cc], axis=1)])

  # MobileNet-0.25 backbone at 640 x 640.
  x = conv_bn("input", 3, 8, 3, 2)      # 320
  x = dw(x, 8, 16, 1)
  x = dw(x, 16, 32, 2)                  # 160
  x = dw(x, 32, 32, 1)
  x = dw(x, 32, 64, 2)                  # 80
  c3 = dw(x, 64, 64, 1)
  x = dw(c3, 64, 128, 2)                # 40
  for _ in range(5):
    x = dw(x, 128, 128, 1)
  c4 = x
  c5 = dw(dw(c4, 128, 256, 2), 256, 256, 1)  # 20
  # FPN (static sizes, as onnx-simplified exports have them) and SSH.
  o3, o4, o5 = conv_bn(c3, 64, 64, 1), conv_bn(c4, 128, 64, 1), conv_bn(c5, 256, 64, 1)
  o4 = conv_bn(b.node("Add", [o4, up_to(o5, [1, 64, 40, 40])]), 64, 64, 3)
  o3 = conv_bn(b.node("Add", [o3, up_to(o4, [1, 64, 80, 80])]), 64, 64, 3)
  heads = {"loc": 4, "conf": 2, "landms": 10}
  flat = {k: [] for k in heads}
  for feature in (ssh(o3, 64), ssh(o4, 64), ssh(o5, 64)):
    for head, channels in heads.items():
      y = b.node("Transpose", [b.conv(feature, 64, 2 * channels, 1, pads=0)], perm=[0, 2, 3, 1])
      flat[head].append(b.node("Reshape", [y, b.const(b.name("shape"), [1, -1, channels], np.int64)]))
  b.node("Concat", flat["loc"], ["loc"], axis=1)
  b.node("Softmax", [b.node("Concat", flat["conf"], axis=1)], ["conf"], axis=-1)
  b.node("Concat", flat["landms"], ["landms"], axis=1)
  return [1, 3, 640, 640], {"loc": None, "conf": None, "landms": None}, 13


def resnet50(b):
  def block(x, c_in, c_mid, c_out, s):
    y = b.node("Relu", [b.bn(b.conv(x, c_in, c_mid, 1, pads=0, bias=False), c_mid)])
    y = b.node("Relu", [b.bn(b.conv(y, c_mid, c_mid, 3, s, bias=False), c_mid)])
    y = b.bn(b.conv(y, c_mid, c_out, 1, pads=0, bias=False), c_out)
    skip = x if c_in == c_out and s == 1 else b.bn(b.conv(x, c_in, c_out, 1, s, pads=0, bias=False), c_out)
    return b.node("Relu", [b.node("Sum", [y, skip])])

  x = b.node("Relu", [b.bn(b.conv("input", 3, 64, 7, 2, pads=3, bias=False), 64)])  # 112
  x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])  # 56
  c_in = 64
  for blocks, c_mid, stride in ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)):
    for k in range(blocks):
      x = block(x, c_in, c_mid, 4 * c_mid, stride if k == 0 else 1)
      c_in = 4 * c_mid
  x = b.node("AveragePool", [x], kernel_shape=[7, 7], strides=[1, 1])
  x = b.node("Flatten", [x])
  b.node("Gemm", [x, b.weight("fc_w", [1000, c_in]), b.weight("fc_b", [1000])], ["logits"], transB=1)
  return [1, 3, 224, 224], {"logits": [1, 1000]}, 13


def dbnet(b):
  def constant(values):
    name = b.name("constant")
    return b.node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.float32), name))

  def affine(x):
    # LearnableAffineBlock: scale * x + bias, each a one-element weight.
    scale, bias = 1 + 0.1 * b.rng.standard_normal(1), 0.1 * b.rng.standard_normal(1)
    return b.node("Add", [b.node("Mul", [b.const(b.name("lab_scale"), scale, np.float32), x]),
                          b.const(b.name("lab_bias"), bias, np.float32)])

  def hardswish(x):
    # paddle2onnx before opset 14: x * Clip(x + 3, 0, 6) / 6.
    clipped = b.node("Clip", [b.node("Add", [x, constant(3.0)]), constant(0.0), constant(6.0)])
    return b.node("Div", [b.node("Mul", [x, clipped]), constant(6.0)])

  def rep_layer(x, c_in, c_out, k, s=1, groups=1):
    # LearnableRepLayer after rep(): one Conv with bias; no activation after a stride 2.
    y = affine(b.conv(x, c_in, c_out, k, s, groups=groups))
    return y if s == 2 else affine(hardswish(y))

  def se(x, c, reduction, alpha):
    s = b.node("Relu", [b.conv(b.node("GlobalAveragePool", [x]), c, c // reduction, 1)])
    s = b.node("HardSigmoid", [b.conv(s, c // reduction, c, 1)], alpha=alpha, beta=0.5)
    return b.node("Mul", [x, s])

  def divisible(v):
    new_v = max(16, int(v + 8) // 16 * 16)
    return new_v + 16 if new_v < 0.9 * v else new_v

  def rse_layer(x, c_in, c_out, k):
    y = b.conv(x, c_in, c_out, k, bias=False)
    return b.node("Add", [y, se(y, c_out, 4, 0.2)])

  def up(x, factor):
    roi = constant([1.0] * 8)
    return b.node("Resize", [x, roi, constant([1.0, 1.0, factor, factor]), ""], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")

  scale = 0.75
  c = divisible(16 * scale)
  x = b.bn(b.conv("x", 3, c, 3, 2, bias=False), c)  # 320
  stages = [[(3, 16, 32, 1, False)], [(3, 32, 64, 2, False), (3, 64, 64, 1, False)],
            [(3, 64, 128, 2, False), (3, 128, 128, 1, False)],
            [(3, 128, 256, 2, False)] + [(5, 256, 256, 1, False)] * 4,
            [(5, 256, 512, 2, True), (5, 512, 512, 1, True), (5, 512, 512, 1, False), (5, 512, 512, 1, False)]]
  features = []
  for stage, blocks in enumerate(stages):
    for k, c_in, c_out, s, use_se in blocks:
      c_in, c_out = divisible(c_in * scale), divisible(c_out * scale)
      x = rep_layer(x, c_in, c_in, k, s, groups=c_in)
      if use_se:
        x = se(x, c_in, 4, 1.0 / 6)
      x = rep_layer(x, c_in, c_out, 1)
    if stage > 0:
      features.append((x, c_out))
  # The det backbone's 1x1 convs (with bias) to 16, 24, 56, 480 x 0.75 channels.
  features = [(b.conv(f, ch, int(mv * scale), 1), int(mv * scale)) for (f, ch), mv in zip(features, [16, 24, 56, 480])]
  inner = 96
  ins = [rse_layer(f, ch, inner, 1) for f, ch in features]
  outs = [ins[3]]
  for lateral in reversed(ins[:3]):
    outs.insert(0, b.node("Add", [lateral, up(outs[0], 2)]))
  p = [rse_layer(o, inner, inner // 4, 3) for o in outs]
  fuse = b.node("Concat", [up(p[3], 8), up(p[2], 4), up(p[1], 2), p[0]], axis=1)
  h = b.node("Relu", [b.bn(b.conv(fuse, inner, inner // 4, 3, bias=False), inner // 4)])
  name = b.name("deconv")
  h = b.node("ConvTranspose", [h, b.weight(name + "_w", [inner // 4, inner // 4, 2, 2]), b.weight(name + "_b", [inner // 4])],
             [name], kernel_shape=[2, 2], strides=[2, 2])
  h = b.node("Relu", [b.bn(h, inner // 4)])
  name = b.name("deconv")
  h = b.node("ConvTranspose", [h, b.weight(name + "_w", [inner // 4, 1, 2, 2]), b.weight(name + "_b", [1])], [name],
             kernel_shape=[2, 2], strides=[2, 2])
  b.node("Sigmoid", [h], ["sigmoid_0.tmp_0"])
  return [1, 3, 640, 640], {"sigmoid_0.tmp_0": [1, 1, 640, 640]}, 11


def main():
  variants = {"resnet50": (resnet50, "input"), "yolo": (yolo, "images"), "yolov5": (yolov5, "images"), "ssd": (ssd, "image"), "centernet": (centernet, "input"),
              "retinaface": (retinaface, "input"), "dbnet": (dbnet, "x")}
  if len(sys.argv) != 3 or sys.argv[2] not in variants:
    sys.exit("usage: detector_models.py OUT.onnx " + "|".join(variants))
  build, input_name = variants[sys.argv[2]]
  b = Builder()
  input_shape, outputs, opset = build(b)
  graph = helper.make_graph(b.nodes, f"{sys.argv[2]}_like",
                            [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, input_shape)],
                            [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outputs.items()],
                            b.initializers)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnx-footprint")
  model.ir_version = 7
  # Output shapes as onnx infers them (the sizes follow from the strides).
  inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.output}
  for output in model.graph.output:
    if not output.type.tensor_type.HasField("shape"):
      output.type.CopyFrom(inferred[output.name].type)
  onnx.checker.check_model(model, full_check=True)
  onnx.save(model, sys.argv[1])


if __name__ == "__main__":
  main()
