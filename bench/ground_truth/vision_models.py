#!/usr/bin/python3
"""Writes vision-transformer and segmentation models with random weights
(issue 23's held-out "real fp16 segmentation model (1024x1024)" cannot be
downloaded here): the ops and layouts torch.onnx.export (opset 17) writes for
them, so that the ORT profile can be checked on shapes our corpus lacks.

VARIANT vit: a ViT-S/16-like encoder at [1, 3, 384, 384] (timm's
  VisionTransformer, 4 blocks, width 384, 6 heads, MLP 1536): patch-embed
  Conv 16x16 stride 16, Reshape + Transpose to tokens, Concat of the class
  token, Add of the position embedding; each block LayerNormalization, the
  qkv Linear (MatMul, then Add of the bias, bias first as PyTorch writes it),
  Reshape [1, N, 3, 6, 64] + Transpose + Gather (qkv.unbind), Transpose of k,
  MatMul, Mul by the scale, Softmax, MatMul, Transpose + Reshape, proj Linear
  and the residual Add; LayerNormalization, fc1 Linear, GELU as PyTorch
  writes it (Div by sqrt 2, Erf, Add 1, Mul, Mul 0.5), fc2 Linear, residual
  Add; a final LayerNormalization, the class token (Gather) and a Gemm head.
VARIANT segformer: a SegFormer-B0/MiT-like segmenter at [1, 3, 512, 512]
  (HuggingFace's SegformerForSemanticSegmentation, 19 classes): four stages
  of overlapping patch-embed Convs (7x7 s4, then 3x3 s2) + LayerNormalization,
  efficient self-attention (query Linear; the reduction Conv k = s = 8, 4, 2
  over the tokens seen as NCHW, LayerNormalization, key and value Linears;
  Reshape + Transpose to heads, MatMul, Div by sqrt(d), Softmax, MatMul) and
  Mix-FFN (Linear, depthwise Conv 3x3 on the NCHW view, GELU, Linear); the
  all-MLP decoder (per stage a Linear to 256, Transpose + Reshape to NCHW,
  Resize bilinear to 1/4 -- the first stage's to its own size, as HF writes
  it --, Concat, 1x1 Conv with the BatchNormalization folded, Relu, 1x1 Conv
  classifier) and a Resize bilinear back to 512 x 512.
VARIANT u2net: an IS-Net/U2Net-like salient-object segmenter at
  [1, 3, 1024, 1024] (the shape of background-removal models): a Conv 3x3 s2
  stem, a MaxPool, then residual U-blocks (RSU-7..4, RSU-4F with dilated
  Convs): Conv + Relu (BatchNormalization folded, as torch.onnx.export
  writes eval models), MaxPool 2x2 ceil_mode, Resize bilinear to the skip's
  size (sizes from Shape + Slice + Concat, as the exporter writes
  F.interpolate(size=tar.shape[2:])), Concat skips, residual Add; six side
  outputs (Conv 3x3 to one channel, Resize to 1024, Sigmoid).
VARIANT unet: a U-Net at [1, 3, 512, 512] with BatchNormalization kept
  (Conv + BN + Relu twice per level), MaxPool 2x2, ConvTranspose 2x2 s2 up,
  Concat skips, a 1x1 Conv and a Sigmoid head.
Weights are random (numpy, seed 23), opset 17. Run with Debian's
/usr/bin/python3:
  /usr/bin/python3 vision_models.py OUT.onnx vit|segformer|u2net|unet
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

from detector_models import Builder


class VisionBuilder(Builder):
  def __init__(self):
    super().__init__()
    self.rng = np.random.default_rng(23)

  def linear(self, x, c_in, c_out):
    # nn.Linear on a 3-D input: MatMul by the transposed weight, then Add(bias, product).
    name = self.name("linear")
    w = self.const(name + "_w", self.rng.standard_normal([c_in, c_out]) / np.sqrt(c_in), np.float32)
    b = self.const(name + "_b", 0.02 * self.rng.standard_normal(c_out), np.float32)
    return self.node("Add", [b, self.node("MatMul", [x, w])])

  def layer_norm(self, x, c, epsilon=1e-5):
    name = self.name("ln")
    scale = self.const(name + "_s", 1 + 0.1 * self.rng.standard_normal(c), np.float32)
    bias = self.const(name + "_b", 0.1 * self.rng.standard_normal(c), np.float32)
    return self.node("LayerNormalization", [x, scale, bias], [name], axis=-1, epsilon=epsilon)

  def gelu(self, x):
    # torch's gelu symbolic (opset 9..19): x * (erf(x / sqrt 2) + 1) * 0.5.
    erf = self.node("Erf", [self.node("Div", [x, self.const(self.name("sqrt2"), 1.4142135623730951, np.float32)])])
    plus_one = self.node("Add", [erf, self.const(self.name("one"), 1.0, np.float32)])
    return self.node("Mul", [self.node("Mul", [x, plus_one]), self.const(self.name("half"), 0.5, np.float32)])

  def reshape(self, x, shape):
    return self.node("Reshape", [x, self.const(self.name("shape"), shape, np.int64)])

  def transpose(self, x, perm):
    return self.node("Transpose", [x], perm=perm)

  def heads(self, x, tokens, heads, head_dim):
    return self.transpose(self.reshape(x, [1, tokens, heads, head_dim]), [0, 2, 1, 3])

  def resize_to(self, x, size):
    return self.node("Resize", [x, "", "", self.const(self.name("sizes"), size, np.int64)], mode="linear",
                     coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.75, nearest_mode="floor")


def vit(b):
  dim, heads, mlp, depth, image, patch = 384, 6, 1536, 4, 384, 16
  grid = image // patch
  tokens = grid * grid + 1
  head_dim = dim // heads
  x = b.conv("pixel_values", 3, dim, patch, patch, pads=0)
  x = b.transpose(b.reshape(x, [1, dim, grid * grid]), [0, 2, 1])
  x = b.node("Concat", [b.const("cls_token", 0.02 * b.rng.standard_normal([1, 1, dim]), np.float32), x], axis=1)
  x = b.node("Add", [x, b.const("pos_embed", 0.02 * b.rng.standard_normal([1, tokens, dim]), np.float32)])
  for _ in range(depth):
    y = b.linear(b.layer_norm(x, dim, 1e-6), dim, 3 * dim)
    y = b.transpose(b.reshape(y, [1, tokens, 3, heads, head_dim]), [2, 0, 3, 1, 4])
    q, k, v = (b.node("Gather", [y, b.const(b.name("index"), i, np.int64)], axis=0) for i in range(3))
    scores = b.node("MatMul", [q, b.transpose(k, [0, 1, 3, 2])])
    scores = b.node("Mul", [scores, b.const(b.name("scale"), head_dim ** -0.5, np.float32)])
    attn = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
    attn = b.reshape(b.transpose(attn, [0, 2, 1, 3]), [1, tokens, dim])
    x = b.node("Add", [x, b.linear(attn, dim, dim)])
    y = b.linear(b.gelu(b.linear(b.layer_norm(x, dim, 1e-6), dim, mlp)), mlp, dim)
    x = b.node("Add", [x, y])
  x = b.node("Gather", [b.layer_norm(x, dim, 1e-6), b.const("cls_index", 0, np.int64)], axis=1)
  b.node("Gemm", [x, b.weight("head_w", [1000, dim]), b.weight("head_b", [1000])], ["logits"], transB=1)
  return "pixel_values", [1, 3, image, image], {"logits": [1, 1000]}


def segformer(b):
  image, classes, decoder = 512, 19, 256
  widths, heads, reductions, depths = [32, 64, 160, 256], [1, 2, 5, 8], [8, 4, 2, 1], [2, 2, 2, 2]
  x, c_in, size = "pixel_values", 3, image
  stages = []
  for stage, (c, h, r, depth) in enumerate(zip(widths, heads, reductions, depths)):
    k, s = (7, 4) if stage == 0 else (3, 2)
    size //= s
    tokens = size * size
    x = b.conv(x, c_in, c, k, s, pads=k // 2)
    x = b.layer_norm(b.transpose(b.reshape(x, [1, c, tokens]), [0, 2, 1]), c)
    for _ in range(depth):
      y = b.layer_norm(x, c)
      q = b.heads(b.linear(y, c, c), tokens, h, c // h)
      kv, kv_tokens = y, tokens
      if r > 1:
        kv = b.reshape(b.transpose(y, [0, 2, 1]), [1, c, size, size])
        kv = b.conv(kv, c, c, r, r, pads=0)
        kv_tokens = (size // r) ** 2
        kv = b.layer_norm(b.transpose(b.reshape(kv, [1, c, kv_tokens]), [0, 2, 1]), c)
      key = b.heads(b.linear(kv, c, c), kv_tokens, h, c // h)
      value = b.heads(b.linear(kv, c, c), kv_tokens, h, c // h)
      scores = b.node("MatMul", [q, b.transpose(key, [0, 1, 3, 2])])
      scores = b.node("Div", [scores, b.const(b.name("sqrt_d"), np.sqrt(c // h), np.float32)])
      attn = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), value])
      attn = b.reshape(b.transpose(attn, [0, 2, 1, 3]), [1, tokens, c])
      x = b.node("Add", [b.linear(attn, c, c), x])
      y = b.linear(b.layer_norm(x, c), c, 4 * c)
      y = b.reshape(b.transpose(y, [0, 2, 1]), [1, 4 * c, size, size])
      y = b.conv(y, 4 * c, 4 * c, 3, groups=4 * c)
      y = b.transpose(b.reshape(y, [1, 4 * c, tokens]), [0, 2, 1])
      x = b.node("Add", [b.linear(b.gelu(y), 4 * c, c), x])
    x = b.transpose(b.reshape(b.layer_norm(x, c), [1, size, size, c]), [0, 3, 1, 2])
    stages.append((x, c, size))
    c_in = c
  quarter = image // 4
  decoded = []
  for x, c, size in stages:
    y = b.linear(b.transpose(b.reshape(x, [1, c, size * size]), [0, 2, 1]), c, decoder)
    y = b.reshape(b.transpose(y, [0, 2, 1]), [1, decoder, size, size])
    decoded.append(b.resize_to(y, [1, decoder, quarter, quarter]))
  y = b.node("Concat", decoded[::-1], axis=1)
  y = b.node("Relu", [b.conv(y, 4 * decoder, decoder, 1, pads=0)])
  y = b.conv(y, decoder, classes, 1, pads=0)
  b.node("Resize", [y, "", "", b.const("full_size", [1, classes, image, image], np.int64)], ["logits"],
         mode="linear", coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.75,
         nearest_mode="floor")
  return "pixel_values", [1, 3, image, image], {"logits": [1, classes, image, image]}


def u2net(b):
  image = 1024

  def rebn(x, c_in, c_out, dilation=1):
    name = b.name("conv")
    y = b.node("Conv", [x, b.weight(name + "_w", [c_out, c_in, 3, 3]), b.weight(name + "_b", [c_out])], [name],
               kernel_shape=[3, 3], pads=[dilation] * 4, dilations=[dilation, dilation])
    return b.node("Relu", [y])

  def pool(x):
    return b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)

  def upsample_like(x, target):
    # F.interpolate(x, size=target.shape[2:], mode="bilinear"): the sizes from the target's Shape.
    hw = b.node("Slice", [b.node("Shape", [target]), b.const(b.name("start"), [2], np.int64),
                          b.const(b.name("end"), [4], np.int64), b.const(b.name("axes"), [0], np.int64)])
    nc = b.node("Slice", [b.node("Shape", [x]), b.const(b.name("start"), [0], np.int64),
                          b.const(b.name("end"), [2], np.int64), b.const(b.name("axes"), [0], np.int64)])
    sizes = b.node("Concat", [nc, hw], axis=0)
    return b.node("Resize", [x, "", "", sizes], mode="linear", coordinate_transformation_mode="pytorch_half_pixel",
                  cubic_coeff_a=-0.75, nearest_mode="floor")

  def rsu(x, height, c_in, mid, c_out):
    hx_in = rebn(x, c_in, c_out)
    encoded = [rebn(hx_in, c_out, mid)]
    for level in range(1, height - 1):
      encoded.append(rebn(pool(encoded[-1]), mid, mid))
    top = rebn(encoded[-1], mid, mid, 2)
    d = rebn(b.node("Concat", [top, encoded[-1]], axis=1), 2 * mid, mid)
    for level in range(height - 3, -1, -1):
      c = mid if level > 0 else c_out
      d = rebn(b.node("Concat", [upsample_like(d, encoded[level]), encoded[level]], axis=1), 2 * mid, c)
    return b.node("Add", [d, hx_in])

  def rsu4f(x, c_in, mid, c_out):
    hx_in = rebn(x, c_in, c_out)
    e1 = rebn(hx_in, c_out, mid)
    e2 = rebn(e1, mid, mid, 2)
    e3 = rebn(e2, mid, mid, 4)
    e4 = rebn(e3, mid, mid, 8)
    d3 = rebn(b.node("Concat", [e4, e3], axis=1), 2 * mid, mid, 4)
    d2 = rebn(b.node("Concat", [d3, e2], axis=1), 2 * mid, mid, 2)
    d1 = rebn(b.node("Concat", [d2, e1], axis=1), 2 * mid, c_out)
    return b.node("Add", [d1, hx_in])

  x = b.conv("input", 3, 16, 3, 2)                       # 512
  h1 = rsu(pool(x), 7, 16, 8, 32)                        # 256
  h2 = rsu(pool(h1), 6, 32, 8, 64)                       # 128
  h3 = rsu(pool(h2), 5, 64, 16, 64)                      # 64
  h4 = rsu(pool(h3), 4, 64, 16, 64)                      # 32
  h5 = rsu4f(pool(h4), 64, 16, 64)                       # 16
  h6 = rsu4f(pool(h5), 64, 16, 64)                       # 8
  d5 = rsu4f(b.node("Concat", [upsample_like(h6, h5), h5], axis=1), 128, 16, 64)
  d4 = rsu(b.node("Concat", [upsample_like(d5, h4), h4], axis=1), 4, 128, 16, 64)
  d3 = rsu(b.node("Concat", [upsample_like(d4, h3), h3], axis=1), 5, 128, 16, 64)
  d2 = rsu(b.node("Concat", [upsample_like(d3, h2), h2], axis=1), 6, 128, 8, 32)
  d1 = rsu(b.node("Concat", [upsample_like(d2, h1), h1], axis=1), 7, 64, 8, 32)
  full = b.const("full_size", [1, 1, image, image], np.int64)
  outputs = {}
  for i, (d, c) in enumerate(((d1, 32), (d2, 32), (d3, 64), (d4, 64), (d5, 64), (h6, 64))):
    side = b.node("Resize", [b.conv(d, c, 1, 3), "", "", full], mode="linear",
                  coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.75, nearest_mode="floor")
    b.node("Sigmoid", [side], [f"mask{i}"])
    outputs[f"mask{i}"] = [1, 1, image, image]
  return "input", [1, 3, image, image], outputs


def unet(b):
  image = 512

  def double_conv(x, c_in, c_out):
    for c in (c_in, c_out):
      x = b.node("Relu", [b.bn(b.conv(x, c, c_out, 3, bias=False), c_out)])
    return x

  widths = [16, 32, 64, 128, 256]
  skips = []
  x, c_in = "image", 3
  for c in widths[:-1]:
    x = double_conv(x, c_in, c)
    skips.append(x)
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    c_in = c
  x = double_conv(x, c_in, widths[-1])
  for c, skip in zip(widths[-2::-1], skips[::-1]):
    name = b.name("up")
    x = b.node("ConvTranspose", [x, b.weight(name + "_w", [2 * c, c, 2, 2]), b.weight(name + "_b", [c])], [name],
               kernel_shape=[2, 2], strides=[2, 2])
    x = double_conv(b.node("Concat", [skip, x], axis=1), 2 * c, c)
  b.node("Sigmoid", [b.conv(x, widths[0], 1, 1, pads=0)], ["mask"])
  return "image", [1, 3, image, image], {"mask": [1, 1, image, image]}


def main():
  variants = {"vit": vit, "segformer": segformer, "u2net": u2net, "unet": unet}
  if len(sys.argv) != 3 or sys.argv[2] not in variants:
    sys.exit("usage: vision_models.py OUT.onnx " + "|".join(variants))
  b = VisionBuilder()
  input_name, input_shape, outputs = variants[sys.argv[2]](b)
  graph = helper.make_graph(b.nodes, f"{sys.argv[2]}_like",
                            [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, input_shape)],
                            [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outputs.items()],
                            b.initializers)
  model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx-footprint")
  model.ir_version = 8
  onnx.checker.check_model(model, full_check=True)
  onnx.save(model, sys.argv[1])


if __name__ == "__main__":
  main()
