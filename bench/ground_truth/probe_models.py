#!/usr/bin/python3
"""Writes the probe models behind the measured rules of --runtime onnxruntime-cpu.

Each family isolates one effect on ORT's run peak (README.md, "Per-run
overhead" and "Other measured rules"):
  copy_*     one op with a large output: the binding's copy of the outputs;
  inplace_*  a 1 MiB tensor between a Neg and a ReduceSum through one
             elementwise op: 2 MiB run peak when ORT writes in place, 3 when not
             (binary ops: 3 and 4, with a second operand);
  nll_*      NegativeLogLikelihoodLoss's per-sample scratch;
  softmax_*  Softmax's transposed copies off the last axis, and the Transposes
             around a Softmax that ORT's transpose optimizer cancels;
  nchwc_*    a Conv with a BatchNormalization, Mul and Add, or a Concat, after it;
  qdq_*      a QDQ Conv (uint8 in and out, 128x128) that ORT runs as a channels-last
             QLinearConv: MLAS's symmetric path (indirection buffer) or the GEMM path
             (int32 output and im2col), by weight type, channels, groups and batch;
  dynamic_*  quantize_dynamic's Conv: DynamicQuantizeLinear, ConvInteger (im2col),
             Cast, Mul;
  qdq_int8_* quantize_static's default int8 activations: a Q -> DQ pair of one
             reader that ORT turns uint8 (QDQS8ToU8Transformer), the Conv fused;
             and float Convs on dequantized weights, ORT's order running each
             weight's DequantizeLinear before the chain; a DequantizeLinear of two
             readers, the second given a copy ORT runs first (qdq_shared_*);
  qdq_channels_last_* a float op between QLinearConvs runs channels-last, its dims permuted:
             an NCHW tensor of the same bytes never takes its buffer;
  fusion_*   float32 SiLU / Swish that ORT fuses into QuickGelu, and a zero Pad taken into a Conv;
  resblock_* a diffusion model's residual block (GroupNormalization, SiLU, Conv, twice, and the
             residual Add): GroupNormalization's body has no static shape in ORT's planner.
  order_*    ORT's execution order on a float32 graph (a fused node's branch runs first).
  noop_*     ORT's NoopElimination: x + 0, x * 1, ... taken out, and what it leaves.
  transformer_* torch.onnx.export's Erf GELU (GeluFusion), attention scores scaled after their MatMul
             (MatMulScaleFusion) and written over by Softmax, a ConvTranspose's column buffer, and a
             float32 graph that ORT runs in its own order (the later branch first).
Usage: /usr/bin/python3 probe_models.py DIR, then bash run.sh BUILD_DIR DIR
(Debian's python3-onnx; the run prints ours next to ORT's).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def save(directory, name, nodes, inputs, outputs, initializers=(), opset=13, value_info=()):
    graph = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                         [h.make_tensor_value_info(n, t, s) for n, t, s in outputs], initializer=list(initializers),
                         value_info=[h.make_tensor_value_info(n, t, s) for n, t, s in value_info])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(directory, name + '.onnx'))


def weight(name, shape, rng):
    return nh.from_array((rng.random(shape) * 0.1).astype(np.float32), name)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(0)
    f = T.FLOAT
    # The output copy at the run's end.
    save(directory, 'copy_relu', [h.make_node('Relu', ['x'], ['y'])], [('x', f, [1, 3, 32, 32, 32])],
         [('y', f, [1, 3, 32, 32, 32])])
    save(directory, 'copy_averagepool_2d', [h.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2])],
         [('x', f, [1, 3, 128, 128])], [('y', f, [1, 3, 127, 127])])
    save(directory, 'copy_averagepool_3d', [h.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2, 2])],
         [('x', f, [1, 3, 16, 16, 16])], [('y', f, [1, 3, 15, 15, 15])])
    save(directory, 'copy_maxpool_1d', [h.make_node('MaxPool', ['x'], ['y'], kernel_shape=[3], strides=[2])],
         [('x', f, [20, 16, 50])], [('y', f, [20, 16, 24])])
    save(directory, 'copy_instancenorm',
         [h.make_node('InstanceNormalization', ['x', 's', 'b'], ['y'], epsilon=1e-5)],
         [('x', f, [2, 10, 32, 32]), ('s', f, [10]), ('b', f, [10])], [('y', f, [2, 10, 32, 32])])
    # In place or not.
    shape = [1, 16, 128, 128]
    unary = ['Relu', 'Sigmoid', 'Tanh', 'LeakyRelu', 'Elu', 'Selu', 'Celu', 'HardSigmoid', 'Softplus', 'Softsign',
             'ThresholdedRelu', 'Dropout', 'Abs', 'Neg', 'Sqrt', 'Reciprocal', 'Floor', 'Exp', 'Log', 'Erf', 'Sin']
    for op in unary:
        save(directory, 'inplace_' + op,
             [h.make_node('Neg', ['x'], ['a']), h.make_node(op, ['a'], ['b']),
              h.make_node('ReduceSum', ['b'], ['y'], keepdims=0)], [('x', f, shape)], [('y', f, [])])
    for op in ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Sum']:
        save(directory, 'inplace_binary_' + op,
             [h.make_node('Neg', ['x'], ['a']), h.make_node('Abs', ['x'], ['a2']), h.make_node(op, ['a', 'a2'], ['b']),
              h.make_node('ReduceSum', ['b'], ['y'], keepdims=0)], [('x', f, shape)], [('y', f, [])])
    channels = 16
    statistics = [weight(n, [channels], rng) for n in ['scale', 'bias', 'mean']] + [
        nh.from_array(np.ones(channels, dtype=np.float32), 'var')]
    save(directory, 'inplace_BatchNormalization',
         [h.make_node('Neg', ['x'], ['a']), h.make_node('BatchNormalization', ['a', 'scale', 'bias', 'mean', 'var'], ['b']),
          h.make_node('ReduceSum', ['b'], ['y'], keepdims=0)], [('x', f, shape)], [('y', f, [])], statistics)
    # NegativeLogLikelihoodLoss.
    for classes, samples, reduction, weighted in [(5, 2160, 'mean', True), (5, 4320, 'mean', True),
                                                  (5, 4320, 'mean', False), (5, 4320, 'sum', True),
                                                  (5, 4320, 'none', True), (10, 4320, 'mean', True)]:
        inputs = [('x', f, [3, classes, samples]), ('t', T.INT64, [3, samples])] + ([('w', f, [classes])] if weighted else [])
        name = 'nll_%s_%s_c%d_d%d' % (reduction, 'w' if weighted else 'nw', classes, samples)
        save(directory, name,
             [h.make_node('NegativeLogLikelihoodLoss', ['x', 't'] + (['w'] if weighted else []), ['y'],
                          reduction=reduction)],
             inputs, [('y', f, [3, samples] if reduction == 'none' else [])])
    # With an ignore_index: more scratch per sample.
    for reduction, weighted in [('none', False), ('mean', False), ('mean', True)]:
        inputs = [('x', f, [3, 5, 2160]), ('t', T.INT64, [3, 2160])] + ([('w', f, [5])] if weighted else [])
        save(directory, 'nll_%s_%s_ii' % (reduction, 'w' if weighted else 'nw'),
             [h.make_node('NegativeLogLikelihoodLoss', ['x', 't'] + (['w'] if weighted else []), ['y'],
                          reduction=reduction, ignore_index=-5)],
             inputs, [('y', f, [3, 2160] if reduction == 'none' else [])])
    # Softmax along a non-last axis, and the Transposes around one cancelling.
    wide = [('x', f, [3, 5, 21600])]
    save(directory, 'softmax_axis1_logsoftmax', [h.make_node('LogSoftmax', ['x'], ['l'], axis=1),
                                                 h.make_node('ReduceSum', ['l'], ['y'], keepdims=0)], wide, [('y', f, [])])
    save(directory, 'softmax_last_logsoftmax', [h.make_node('LogSoftmax', ['x'], ['l'], axis=2),
                                                h.make_node('ReduceSum', ['l'], ['y'], keepdims=0)], wide, [('y', f, [])])
    save(directory, 'softmax_transposed_logsoftmax',
         [h.make_node('Transpose', ['x'], ['t'], perm=[0, 2, 1]), h.make_node('LogSoftmax', ['t'], ['l'], axis=2),
          h.make_node('Transpose', ['l'], ['u'], perm=[0, 2, 1]), h.make_node('ReduceSum', ['u'], ['y'], keepdims=0)],
         wide, [('y', f, [])])
    # NCHWc chains.
    c = 224
    x = [('x', f, [1, c, 56, 56])]
    conv = h.make_node('Conv', ['x', 'W'], ['c'], pads=[1, 1, 1, 1])
    statistics = [weight(n, [c], rng) for n in ['s', 'b', 'm']] + [nh.from_array(np.ones(c, dtype=np.float32), 'v')]
    save(directory, 'nchwc_conv_bn_mul_add_relu',
         [conv, h.make_node('BatchNormalization', ['c', 's', 'b', 'm', 'v'], ['bn']), h.make_node('Mul', ['bn', 'k'], ['mu']),
          h.make_node('Add', ['mu', 'a'], ['ad']), h.make_node('Relu', ['ad'], ['r']),
          h.make_node('ReduceSum', ['r'], ['y'], keepdims=0)],
         x, [('y', f, [])], [weight('W', [c, c, 3, 3], rng)] + statistics + [weight('k', [c, 1, 1], rng),
                                                                             weight('a', [c, 1, 1], rng)])
    save(directory, 'nchwc_conv_concat',
         [conv, h.make_node('Conv', ['c', 'W2'], ['c2'], pads=[1, 1, 1, 1]),
          h.make_node('Concat', ['c', 'c2'], ['cat'], axis=1), h.make_node('ReduceSum', ['cat'], ['y'], keepdims=0)],
         x, [('y', f, [])], [weight('W', [c, c, 3, 3], rng), weight('W2', [32, c, 3, 3], rng)])
    # Which Convs and pools go NCHWc depends on the block (8 with AVX2, 16 with AVX-512): each probe
    # differs between the two (nchwc_transformer.cc, TransformConv/TransformPool/TransformConcat).
    side = 56
    def conv(name, x_name, out, w_shape, group=1, pads=(1, 1, 1, 1)):
        return h.make_node('Conv', [x_name, name], [out], pads=list(pads), group=group), weight(name, w_shape, rng)
    def sum_out(name):
        return h.make_node('ReduceSum', [name], ['y'], keepdims=0)
    probes = {
        # Cin 8: reordered at block 8, read as NCHW at block 16.
        'nchwc_block_cin8': ([('x', f, [1, 8, side * 2, side * 2])], [conv('W', 'x', 'c', [16, 8, 3, 3])]),
        # Cin 24: NCHWc at block 8, not at 16.
        'nchwc_block_cin24': ([('x', f, [1, 24, side, side])], [conv('W', 'x', 'c', [32, 24, 3, 3])]),
        # Cout 8: padded to 16 channels at block 16.
        'nchwc_block_cout8': ([('x', f, [1, 16, side * 2, side * 2])], [conv('W', 'x', 'c', [8, 16, 3, 3])]),
        # A depthwise Conv of 24 channels after a Conv to 24: NCHWc at block 8 only.
        'nchwc_block_depthwise24': ([('x', f, [1, 16, side, side])],
                                    [conv('W', 'x', 'a', [24, 16, 1, 1], pads=(0, 0, 0, 0)),
                                     conv('D', 'a', 'c', [24, 1, 3, 3], group=24)]),
        # Groups of 8 input and output channels: NCHWc at block 8 only; at block 16 the grouped Conv
        # takes ORT's im2col path, whose workspace is one 64 KiB segment with one thread.
        'nchwc_block_group8': ([('x', f, [1, 32, side, side])],
                               [conv('W', 'x', 'a', [32, 32, 1, 1], pads=(0, 0, 0, 0)),
                                conv('G', 'a', 'c', [32, 8, 3, 3], group=4)]),
        # The same grouped Conv alone (NCHW at block 16), and a batch of 2 (NCHW at any block: 18
        # channels): the im2col workspace with more than one group or batch.
        'conv_group4_56': ([('x', f, [1, 32, side, side])], [conv('G', 'x', 'c', [32, 8, 3, 3], group=4)]),
        'conv_batch2_56': ([('x', f, [2, 18, side, side])], [conv('G', 'x', 'c', [18, 18, 3, 3])]),
        # A MaxPool of 8 channels after a Conv: NCHWc at block 8 only.
        'nchwc_block_pool8': ([('x', f, [1, 3, side * 2, side * 2])],
                              [conv('W', 'x', 'a', [8, 3, 3, 3]),
                               (h.make_node('MaxPool', ['a'], ['c'], kernel_shape=[2, 2], strides=[2, 2]), None)]),
        # A Concat of two 8-channel Conv outputs: NCHWc at block 8 only.
        'nchwc_block_concat8': ([('x', f, [1, 16, side, side])],
                                [conv('W', 'x', 'a', [8, 16, 3, 3]), conv('W2', 'x', 'b', [8, 16, 3, 3]),
                                 (h.make_node('Concat', ['a', 'b'], ['c'], axis=1), None)]),
    }
    for name, (inputs, steps) in probes.items():
        nodes = [node for node, _ in steps] + [sum_out('c')]
        save(directory, name, nodes, inputs, [('y', f, [])], [w for _, w in steps if w is not None])
    qdq_probes(directory, rng)
    float16_body_probes(directory)
    float32_fusion_probes(directory, rng)
    float16_order_probes(directory)
    overridable_weight_probes(directory)
    resblock_probes(directory)
    transformer_probes(directory, rng)
    noop_probes(directory)


def qdq_probes(directory, rng):
    """QDQ Convs as ORT's quantizer writes them, and quantize_dynamic's Conv."""
    def qdq_conv(name, cin, cout, k, stride=1, group=1, weight_type=np.int8, batch=1):
        if weight_type == np.int8:
            w = rng.integers(-100, 100, size=[cout, cin // group, k, k]).astype(np.int8)
            wz = np.zeros([cout], dtype=np.int8)
        else:
            w = rng.integers(0, 200, size=[cout, cin // group, k, k]).astype(np.uint8)
            wz = np.full([cout], 100, dtype=np.uint8)
        inits = [nh.from_array(np.array(0.05, dtype=np.float32), 's'), nh.from_array(np.array(128, np.uint8), 'z'),
                 nh.from_array(w, 'w'), nh.from_array(np.full([cout], 0.01, dtype=np.float32), 'ws'),
                 nh.from_array(wz, 'wz')]
        nodes = [h.make_node('DequantizeLinear', ['xq', 's', 'z'], ['xd']),
                 h.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
                 h.make_node('Conv', ['xd', 'wd'], ['y'], kernel_shape=[k, k], pads=[k // 2] * 4,
                             strides=[stride] * 2, group=group),
                 h.make_node('QuantizeLinear', ['y', 's', 'z'], ['yq'])]
        side = 128
        out = (side + 2 * (k // 2) - k) // stride + 1
        save(directory, name, nodes, [('xq', T.UINT8, [batch, cin, side, side])],
             [('yq', T.UINT8, [batch, cout, out, out])], inits)
    qdq_conv('qdq_conv_symmetric', 16, 32, 3)
    qdq_conv('qdq_conv_uint8_weights', 16, 32, 3, weight_type=np.uint8)
    qdq_conv('qdq_conv_three_channels_stride2', 3, 24, 3, stride=2)
    qdq_conv('qdq_conv_depthwise32', 32, 32, 3, group=32)
    qdq_conv('qdq_conv_pointwise', 64, 64, 1)
    # Batch 4: the symmetric path's indirection buffer holds every image's pointers (parallel_batch), the
    # GEMM path's buffers one image's.
    qdq_conv('qdq_conv_symmetric_batch4', 16, 32, 3, batch=4)
    qdq_conv('qdq_conv_uint8_weights_batch4', 16, 32, 3, weight_type=np.uint8, batch=4)
    # quantize_dynamic's Conv (uint8 weight): the float output after Cast and Mul.
    w = rng.integers(0, 200, size=[32, 16, 3, 3]).astype(np.uint8)
    inits = [nh.from_array(w, 'w'), nh.from_array(np.array(100, np.uint8), 'wz'),
             nh.from_array(np.array(0.01, dtype=np.float32), 'ws')]
    nodes = [h.make_node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xz']),
             h.make_node('ConvInteger', ['xq', 'w', 'xz', 'wz'], ['ci'], pads=[1, 1, 1, 1]),
             h.make_node('Cast', ['ci'], ['cf'], to=T.FLOAT),
             h.make_node('Mul', ['xs', 'ws'], ['scale']),
             h.make_node('Mul', ['cf', 'scale'], ['y'])]
    save(directory, 'dynamic_convinteger', nodes, [('x', T.FLOAT, [1, 16, 64, 64])], [('y', T.FLOAT, [1, 32, 64, 64])],
         inits)
    # Int8 activations (zero point 0): float in, Q -> DQ -> Conv -> Q -> DQ, float out.
    w = rng.integers(-100, 100, size=[32, 16, 3, 3]).astype(np.int8)
    inits = [nh.from_array(np.array(0.05, dtype=np.float32), 's'), nh.from_array(np.array(0, np.int8), 'z'),
             nh.from_array(w, 'w'), nh.from_array(np.full([32], 0.01, dtype=np.float32), 'ws'),
             nh.from_array(np.zeros([32], dtype=np.int8), 'wz')]
    nodes = [h.make_node('QuantizeLinear', ['x', 's', 'z'], ['xq']),
             h.make_node('DequantizeLinear', ['xq', 's', 'z'], ['xd']),
             h.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wd'], axis=0),
             h.make_node('Conv', ['xd', 'wd'], ['c'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             h.make_node('QuantizeLinear', ['c', 's', 'z'], ['cq']),
             h.make_node('DequantizeLinear', ['cq', 's', 'z'], ['y'])]
    save(directory, 'qdq_int8_conv_one_reader', nodes, [('x', T.FLOAT, [1, 16, 128, 128])],
         [('y', T.FLOAT, [1, 32, 128, 128])], inits)
    # Four float Convs 1x1 256 -> 256, each weight DequantizeLinear(int8) just before its Conv.
    nodes, inits, x = [], [nh.from_array(np.array(0.01, dtype=np.float32), 's'),
                           nh.from_array(np.array(0, np.int8), 'z')], 'x'
    for i in range(4):
        inits.append(nh.from_array(rng.integers(-127, 127, size=[256, 256, 1, 1]).astype(np.int8), f'w{i}'))
        nodes.append(h.make_node('DequantizeLinear', [f'w{i}', 's', 'z'], [f'wd{i}']))
        nodes.append(h.make_node('Conv', [x, f'wd{i}'], [f'y{i}']))
        x = f'y{i}'
    save(directory, 'qdq_int8_weight_chain', nodes, [('x', T.FLOAT, [1, 256, 4, 4])], [(x, T.FLOAT, [1, 256, 4, 4])],
         inits)
    # A float Add between two QLinearConvs runs channels-last (its dims permuted): the NCHW float tensor of the
    # same bytes dequantized for an LRN at the end takes no buffer of it, none held across the 256-channel Conv.
    inits = [nh.from_array(np.array(0.05, dtype=np.float32), 's'), nh.from_array(np.array(128, np.uint8), 'z'),
             nh.from_array(np.array(0.01, dtype=np.float32), 'ws'), nh.from_array(np.array(0, np.int8), 'wz'),
             nh.from_array(np.ones([16, 1, 1], dtype=np.float32), 'c')]
    nodes = []
    for name, cout, cin in (('wa', 16, 16), ('wb', 256, 16), ('wc', 16, 256)):
        inits.append(nh.from_array(rng.integers(-100, 100, size=[cout, cin, 1, 1]).astype(np.int8), name))
        nodes.append(h.make_node('DequantizeLinear', [name, 'ws', 'wz'], [name + 'd']))
    for x, w, y in (('xq', 'wa', 'a'), ('sq', 'wb', 'b'), ('bq', 'wc', 'cc')):
        nodes += [h.make_node('DequantizeLinear', [x, 's', 'z'], [x + 'd']), h.make_node('Conv', [x + 'd', w + 'd'], [y]),
                  h.make_node('QuantizeLinear', [y, 's', 'z'], [y + 'q'])]
        if y == 'a':
            nodes += [h.make_node('DequantizeLinear', ['aq', 's', 'z'], ['ad']), h.make_node('Add', ['ad', 'c'], ['s_']),
                      h.make_node('QuantizeLinear', ['s_', 's', 'z'], ['sq'])]
    nodes += [h.make_node('DequantizeLinear', ['ccq', 's', 'z'], ['cd']), h.make_node('LRN', ['cd'], ['y'], size=3)]
    save(directory, 'qdq_channels_last_add', nodes, [('xq', T.UINT8, [1, 16, 32, 32])], [('y', T.FLOAT, [1, 16, 32, 32])],
         inits)
    # A DequantizeLinear with two readers (EnsureUniqueDQForNodeUnit): the second reader, an Add, gets a copy,
    # a new node that ORT's order runs first; its 1 MiB float output is held while the original's reader (Neg)
    # runs: three float tensors at once, two without the copy.
    inits = [nh.from_array(np.array(0.05, dtype=np.float32), 's'), nh.from_array(np.array(128, np.uint8), 'z')]
    nodes = [h.make_node('DequantizeLinear', ['xq', 's', 'z'], ['d']), h.make_node('Neg', ['d'], ['n']),
             h.make_node('ReduceMean', ['n'], ['m'], axes=[1]), h.make_node('Add', ['d', 'm'], ['y'])]
    save(directory, 'qdq_shared_dequantize_copy_first', nodes, [('xq', T.UINT8, [1, 64, 64, 64])],
         [('y', T.FLOAT, [1, 64, 64, 64])], inits)


def float16_body_probes(directory):
    """Float16 ops ORT inlines as their ONNX function body (fp16_function_bodies.h), a 1 MiB tensor between two
    Sigmoids or behind the model's Casts, Where's two selection buffers (float32 too) and GroupNormalization's
    body (every type). Opsets past Debian's
    onnx (17) are not checked by it."""
    f, half = T.FLOAT, T.FLOAT16
    shape = [1, 16, 128, 128]

    def cast(src, dst, to):
        return h.make_node('Cast', [src], [dst], to=to)

    def write(name, nodes, out_shape, opset):
        graph = h.make_graph(nodes, name, [h.make_tensor_value_info('x', f, shape)],
                             [h.make_tensor_value_info('y', f, out_shape)])
        model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)])
        model.ir_version = 8
        if opset <= 17:
            onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(directory, name + '.onnx'))

    def mid(name, node, opset):
        write(name, [cast('x', 'x0', half), h.make_node('Sigmoid', ['x0'], ['x16']), node,
                     h.make_node('Sigmoid', ['z16'], ['z1']), cast('z1', 'y', f)], shape, opset)

    mid('fp16_leakyrelu_opset17', h.make_node('LeakyRelu', ['x16'], ['z16']), 17)
    mid('fp16_hardswish_opset17', h.make_node('HardSwish', ['x16'], ['z16']), 17)
    mid('fp16_elu_opset18', h.make_node('Elu', ['x16'], ['z16']), 18)
    mid('fp16_gelu_tanh_opset20', h.make_node('Gelu', ['x16'], ['z16'], approximate='tanh'), 20)
    write('fp16_reducel1_opset18', [cast('x', 'x16', half), h.make_node('ReduceL1', ['x16'], ['z16']),
                                    cast('z16', 'y', f)], [1, 1, 1, 1], 18)
    # A float16 Conv + LeakyRelu: the body's Mul, Less, Where stay apart (no Conv + activation fusion).
    filters = nh.from_array((np.random.default_rng(1).random([16, 16, 3, 3]) * 0.01).astype(np.float16), 'W')
    graph = h.make_graph([cast('x', 'x16', half), h.make_node('Conv', ['x16', 'W'], ['c'], pads=[1, 1, 1, 1]),
                          h.make_node('LeakyRelu', ['c'], ['l'], alpha=0.1),
                          h.make_node('Conv', ['l', 'W'], ['c2'], pads=[1, 1, 1, 1]), cast('c2', 'y', f)],
                         'fp16_conv_leakyrelu_opset17', [h.make_tensor_value_info('x', f, [1, 16, 128, 128])],
                         [h.make_tensor_value_info('y', f, [1, 16, 128, 128])], initializer=[filters])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(directory, 'fp16_conv_leakyrelu_opset17.onnx'))
    write('where_float32', [h.make_node('Greater', ['x', 'x'], ['b']), h.make_node('Where', ['b', 'x', 'x'], ['y'])],
          shape, 17)
    # GroupNormalization has no kernel in any type: ORT runs its body (the input, its deviation and its
    # square live together), in float32 between two Casts from opset 21.
    for opset, elem, np_type in ((18, f, np.float32), (21, half, np.float16)):
        size = 16 if opset >= 21 else 4  # Scale and bias per channel from 21, per group before.
        consts = [h.make_node('Constant', [], [n], value=nh.from_array(np.full(size, v, np_type), n + '_value'))
                  for n, v in (('scale', 1), ('bias', 0))]
        into, out = ([], []) if elem == f else ([cast('x', 'x16', half)], [cast('y16', 'y', f)])
        x, y = ('x', 'y') if elem == f else ('x16', 'y16')
        write('groupnorm_opset%d_%s' % (opset, 'float32' if elem == f else 'float16'),
              into + consts + [h.make_node('Relu', [x], ['r']),
                               h.make_node('GroupNormalization', ['r', 'scale', 'bias'], ['g'], num_groups=4),
                               h.make_node('Relu', ['g'], [y])] + out, shape, opset)

def float32_fusion_probes(directory, rng):
    """ORT's QuickGeluFusion (a SiLU, a Swish with a constant alpha, and a Sigmoid read twice, which stays) and
    PadFusion (a zero Pad into the Conv after it) on a 1 MiB tensor between two Negs."""
    f = T.FLOAT
    x = [('x', f, [1, 16, 128, 128])]
    y = [('y', f, [1, 16, 128, 128])]
    neg = h.make_node('Neg', ['x'], ['a'])
    save(directory, 'fusion_silu', [neg, h.make_node('Sigmoid', ['a'], ['s']), h.make_node('Mul', ['a', 's'], ['m']),
                                    h.make_node('Neg', ['m'], ['y'])], x, y)
    save(directory, 'fusion_swish_alpha',
         [neg, h.make_node('Mul', ['a', 'alpha'], ['b']), h.make_node('Sigmoid', ['b'], ['s']),
          h.make_node('Mul', ['s', 'a'], ['m']), h.make_node('Neg', ['m'], ['y'])], x, y,
         [nh.from_array(np.array(1.702, np.float32), 'alpha')])
    save(directory, 'fusion_sigmoid_read_twice',
         [neg, h.make_node('Sigmoid', ['a'], ['s']), h.make_node('Mul', ['a', 's'], ['m']),
          h.make_node('Add', ['m', 's'], ['y'])], x, y)
    # A SiLU between NCHWc Convs runs on the blocked tensor (no reorder around its QuickGelu).
    w = weight('w', [16, 16, 3, 3], rng)
    save(directory, 'fusion_conv_silu_add',
         [h.make_node('Conv', ['x', 'w'], ['c'], pads=[1, 1, 1, 1]), h.make_node('Sigmoid', ['c'], ['s']),
          h.make_node('Mul', ['c', 's'], ['a']), h.make_node('Conv', ['a', 'w'], ['c2'], pads=[1, 1, 1, 1]),
          h.make_node('Add', ['a', 'c2'], ['y'])], x, y, [w])
    pads = nh.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), 'pads')
    save(directory, 'fusion_pad_conv',
         [neg, h.make_node('Pad', ['a', 'pads'], ['p']), h.make_node('Conv', ['p', 'w'], ['c']),
          h.make_node('Neg', ['c'], ['y'])], x, y, [pads, w])
    # ORT's order on a float32 graph: the QuickGelu (a node the fusion made, after every file node) runs
    # before the file's earlier branch, a 2 MiB Concat reduced to one channel; its output is held meanwhile.
    save(directory, 'order_fused_branch_first',
         [h.make_node('Concat', ['x', 'x'], ['d'], axis=1), h.make_node('ReduceMax', ['d'], ['r'], axes=[1]),
          h.make_node('Sigmoid', ['x'], ['s']), h.make_node('Mul', ['x', 's'], ['a']),
          h.make_node('Add', ['r', 'a'], ['y'])], x, y)



def transformer_probes(directory, rng):
    """What vision transformers and segmenters meet (vision_models.py): GELU as torch writes it (Div by sqrt 2, Erf,
    Add 1, Mul, Mul 0.5; or x * 0.5 first) between two Negs on 1 MiB; attention scores [1, 4, 256, 256] scaled by a
    Mul or Div after their MatMul, then Softmax (float32: in place) and a ReduceMax; a ConvTranspose 2x2 s2 (its column
    buffer, 1 MiB); and a float32 graph whose file order holds a tensor across a branch that ORT's order runs first."""
    f = T.FLOAT
    x = [('x', f, [1, 16, 128, 128])]
    y = [('y', f, [1, 16, 128, 128])]
    scalars = [nh.from_array(np.array(v, np.float32), n) for n, v in (('sqrt2', np.sqrt(2)), ('one', 1.0), ('half', 0.5))]
    head = [h.make_node('Neg', ['x'], ['a']), h.make_node('Div', ['a', 'sqrt2'], ['d']), h.make_node('Erf', ['d'], ['e']),
            h.make_node('Add', ['e', 'one'], ['p'])]
    save(directory, 'transformer_gelu', head + [h.make_node('Mul', ['a', 'p'], ['m']),
                                               h.make_node('Mul', ['m', 'half'], ['g']), h.make_node('Neg', ['g'], ['y'])],
         x, y, scalars, opset=17)
    save(directory, 'transformer_gelu_half_first',
         head + [h.make_node('Mul', ['a', 'half'], ['hx']), h.make_node('Mul', ['hx', 'p'], ['g']),
                 h.make_node('Neg', ['g'], ['y'])], x, y, scalars, opset=17)
    for op in ('Mul', 'Div'):
        save(directory, 'transformer_scores_' + op.lower(),
             [h.make_node('MatMul', ['q', 'k'], ['s']), h.make_node(op, ['s', 'scale'], ['t']),
              h.make_node('Softmax', ['t'], ['pr']), h.make_node('ReduceMax', ['pr'], ['y'], axes=[-1])],
             [('q', f, [1, 4, 256, 64]), ('k', f, [1, 4, 64, 256])], [('y', f, [1, 4, 256, 1])],
             [nh.from_array(np.array(0.125 if op == 'Mul' else 8.0, np.float32), 'scale')], opset=17)
    save(directory, 'transformer_convtranspose',
         [h.make_node('ConvTranspose', ['x', 'w'], ['c'], kernel_shape=[2, 2], strides=[2, 2]),
          h.make_node('ReduceMax', ['c'], ['y'], axes=[1])],
         [('x', f, [1, 32, 64, 64])], [('y', f, [1, 1, 128, 128])], [weight('w', [32, 16, 2, 2], rng)], opset=17)
    # File order: Neg, then Exp and Sin (both live), ReduceMax, Mul: the Neg's tensor held across them. ORT runs the
    # Mul's later-indexed producer chain (Exp, Sin, ReduceMax) first, then the Neg.
    save(directory, 'transformer_float32_order',
         [h.make_node('Neg', ['x'], ['n']), h.make_node('Exp', ['x'], ['e']), h.make_node('Sin', ['e'], ['s']),
          h.make_node('ReduceMax', ['s'], ['r'], axes=[1, 2, 3]), h.make_node('Mul', ['n', 'r'], ['y'])], x, y,
         opset=17)


def float16_order_probes(directory):
    """Where ORT runs the Casts it inserts (execution_order.h): the Cast of a float32 node's output that is a graph
    output and that a later float32 node reads too runs last, its float32 copy live to the end (as a decoder's
    present key and value, made before the logits). And float16 Convs whose weights are all overridable take in no
    Add nor activation (ORT runs levels 2 and 3 again after the Casts only when a weight is converted at load)."""
    f, half = T.FLOAT, T.FLOAT16
    shape = [1, 16, 128, 128]
    save(directory, 'fp16_present_cast_last',
         [h.make_node('Exp', ['x'], ['present']), h.make_node('Neg', ['present'], ['z']),
          h.make_node('Abs', ['z'], ['logits'])],
         [('x', half, shape)], [('present', half, shape), ('logits', half, shape)], opset=17)
    rng = np.random.default_rng(2)
    filters = [nh.from_array((rng.random([16, 16, 3, 3]) * 0.01).astype(np.float16), name) for name in ('w1', 'w2')]
    save(directory, 'fp16_conv_add_overridable_weights',
         [h.make_node('Cast', ['x'], ['x16'], to=half), h.make_node('Conv', ['x16', 'w1'], ['c1'], pads=[1, 1, 1, 1]),
          h.make_node('Conv', ['c1', 'w2'], ['c2'], pads=[1, 1, 1, 1]), h.make_node('Add', ['c2', 'c1'], ['s']),
          h.make_node('Relu', ['s'], ['r']), h.make_node('Cast', ['r'], ['y'], to=f)],
         [('x', f, shape), ('w1', half, [16, 16, 3, 3]), ('w2', half, [16, 16, 3, 3])], [('y', f, shape)],
         filters, opset=17)


def overridable_weight_probes(directory):
    """Initializers also listed as graph inputs (IR >= 4) are not constant to ORT (graph.cc, CanOverrideInitializer):
    ConstantFolding leaves the ConstantOfShape that reads one, so the weight is made at every run, where ORT's order
    runs it (just before its Conv), though the file lists both ConstantOfShape first. A Conv whose weight is not
    constant stays a plain Conv (no NCHWc)."""
    f = T.FLOAT
    shape_of_weight = [nh.from_array(np.array([256, 256, 3, 3], np.int64), name) for name in ('s1', 's2')]
    fill = nh.from_array(np.array([0.001], np.float32), 'value')
    save(directory, 'overridable_constant_of_shape_weights',
         [h.make_node('ConstantOfShape', ['s1'], ['w1'], value=fill),
          h.make_node('ConstantOfShape', ['s2'], ['w2'], value=fill),
          h.make_node('Conv', ['x', 'w1'], ['c1'], pads=[1, 1, 1, 1]), h.make_node('Relu', ['c1'], ['r1']),
          h.make_node('Conv', ['r1', 'w2'], ['c2'], pads=[1, 1, 1, 1]), h.make_node('Relu', ['c2'], ['y'])],
         [('x', f, [1, 256, 8, 8]), ('s1', T.INT64, [4]), ('s2', T.INT64, [4])], [('y', f, [1, 256, 8, 8])],
         shape_of_weight)
    # ORT infers no dims from an overridable shape (graph.cc getInputData: constant initializers only), so its
    # planner reuses no buffer behind one; the file's own value_info gives the dims back. Five 1x1 Convs: c1 is
    # freed when d is made and e, of c1's shape, takes its buffer two steps later only when the dims are known,
    # holding it over h (262,144 bytes more).
    weights = [[64, 64, 1, 1], [128, 64, 1, 1], [128, 128, 1, 1], [64, 128, 1, 1], [32, 64, 1, 1]]
    chain = ['x', 'c1', 'd', 'h', 'e', 'y']
    nodes, inputs, shapes, declared = [], [('x', f, [1, 64, 32, 32])], [], []
    for i, dims in enumerate(weights):
        n = str(i + 1)
        inputs.append(('s' + n, T.INT64, [4]))
        shapes.append(nh.from_array(np.array(dims, np.int64), 's' + n))
        nodes += [h.make_node('ConstantOfShape', ['s' + n], ['w' + n], value=fill),
                  h.make_node('Conv', [chain[i], 'w' + n], [chain[i + 1]])]
        declared.append(('w' + n, f, dims))
        if i + 1 < len(weights):
            declared.append((chain[i + 1], f, [1, dims[0], 32, 32]))
    for name, value_info in (('overridable_shapes_hidden', ()), ('overridable_shapes_declared', declared)):
        save(directory, name, nodes, inputs, [('y', f, [1, 32, 32, 32])], shapes, value_info=value_info)


def resblock_probes(directory):
    """A diffusion model's residual block on [1, 32, 32, 32]: GroupNormalization (8 groups), SiLU, Conv 3x3, twice,
    and the residual Add. ORT inlines GroupNormalization's body after its level-1 passes, so the body's reshape to
    a Concat of Shapes is never folded and its tensors have no static shape: ORT's planner never gives them a freed
    buffer, and the freed buffers of the tensors around the body stay held until a later tensor of their shape
    takes them (fp16_function_bodies.cc). Float32 at opsets 18 and 21 (the body's Casts copy), and float16 behind
    the model's Casts at 18. Opset 21 is past Debian's onnx (17): not checked."""
    f, half = T.FLOAT, T.FLOAT16
    channels, groups, shape = 32, 8, [1, 32, 32, 32]
    rng = np.random.default_rng(3)
    for opset, elem in ((18, f), (21, f), (18, half)):
        np_type = np.float32 if elem == f else np.float16
        per = channels if opset >= 21 else groups  # Scale and bias per channel from 21, per group before.
        initializers = [nh.from_array((rng.standard_normal([channels, channels, 3, 3]) * 0.05).astype(np_type), n)
                        for n in ('w1', 'w2')]
        initializers += [nh.from_array(np.full(per, v, np_type), n) for n, v in (('s1', 1), ('b1', 0), ('s2', 1),
                                                                                 ('b2', 0))]
        x, y = ('x', 'y') if elem == f else ('x16', 'y16')
        into = [] if elem == f else [h.make_node('Cast', ['x'], ['x16'], to=half)]
        out = [] if elem == f else [h.make_node('Cast', ['y16'], ['y'], to=f)]
        nodes = into
        for i, src in ((1, x), (2, 'c1')):
            nodes += [h.make_node('GroupNormalization', [src, 's%d' % i, 'b%d' % i], ['g%d' % i], num_groups=groups),
                      h.make_node('Sigmoid', ['g%d' % i], ['s%d_out' % i]),
                      h.make_node('Mul', ['g%d' % i, 's%d_out' % i], ['a%d' % i]),
                      h.make_node('Conv', ['a%d' % i, 'w%d' % i], ['c%d' % i], pads=[1, 1, 1, 1])]
        nodes += [h.make_node('Add', [x, 'c2'], [y])] + out
        name = 'resblock_opset%d_%s' % (opset, 'float32' if elem == f else 'float16')
        graph = h.make_graph(nodes, name, [h.make_tensor_value_info('x', f, shape)],
                             [h.make_tensor_value_info('y', f, shape)], initializer=initializers)
        model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)])
        model.ir_version = 8
        if opset <= 17:
            onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(directory, name + '.onnx'))


def noop_probes(directory):
    """ORT's NoopElimination (core/optimizer/noop_elimination.cc, level 1) on x [2, 8, 128, 128] -> Neg -> a ->
    op(a, k) -> b -> Add(a, b) -> ReduceSum: taken out, the run peaks at x, a and their sum (3 MiB); kept, b is a
    fourth tensor. (The sum is an Add, not a Mul: a Mul after Div(1, a) is DivMulFusion's.) ORT 1.30's optimized
    model and run peak, AVX-512, and --runtime onnxruntime-cpu's runtime tensors + overhead before the pass / after.
    Not a probe here: x without a shape (so a has none) keeps its Add in ORT's optimized model."""
    f = T.FLOAT
    shape = [2, 8, 128, 128]
    np_types = {f: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64, T.INT64: np.int64, T.INT32: np.int32,
                T.UINT8: np.uint8}

    def probe(name, op, value=0.0, elem=f, first=False, dims=(), k_as='initializer', b_out=False, on_input=False,
              x_shape=shape, opset=13):
        k = nh.from_array(np.full(dims, value, np_types[elem]), 'k')
        initializers, inputs, nodes = [k], [('x', elem, x_shape)], []
        a = 'x' if on_input else 'a'
        if elem == T.UINT8:  # No uint8 Neg nor ReduceSum: a Cast in, a ReduceMax out.
            inputs = [('x', f, x_shape)]
            nodes.append(h.make_node('Cast', ['x'], ['a'], to=elem))
        elif not on_input:
            nodes.append(h.make_node('Neg', ['x'], ['a']))
        if k_as == 'constant':
            nodes.append(h.make_node('Constant', [], ['k'], value=k))
            initializers = []
        if k_as.startswith('value_'):  # A Constant's number or list of one.
            number = int(value) if k_as == 'value_ints' else value
            nodes.append(h.make_node('Constant', [], ['k'], **{k_as: number if k_as == 'value_float' else [number]}))
            initializers = []
        if k_as == 'folded':  # Cast(int64 k0): ORT's constant folding makes k an initializer.
            initializers = [nh.from_array(np.full(dims, value, np.int64), 'k0')]
            nodes.append(h.make_node('Cast', ['k0'], ['k'], to=elem))
        if k_as == 'overridable':  # Also a graph input (IR >= 4): not constant to ORT.
            inputs.append(('k', elem, list(dims)))
        reduce = 'ReduceMax' if elem == T.UINT8 else 'ReduceSum'
        nodes += [h.make_node(op, ['k', a] if first else [a, 'k'], ['b']), h.make_node('Add', [a, 'b'], ['m']),
                  h.make_node(reduce, ['m'], ['y'], keepdims=0)]
        outputs = [('y', elem, [])]
        if b_out:
            outputs.append(('b', elem, list(np.broadcast_shapes(tuple(x_shape), tuple(dims)))))
        save(directory, 'noop_' + name, nodes, inputs, outputs, initializers, opset=opset)

    # Taken out (no b in ORT's optimized model): run peak 3,148,072-3,148,304 bytes (x, a, their sum); ours
    # 4,196,464 before the pass (1.333), 3,147,680 after (1.000).
    probe('add_zero', 'Add')
    probe('add_zero_first', 'Add', first=True)
    probe('sub_zero', 'Sub')
    probe('mul_one', 'Mul', 1.0)
    probe('mul_one_first', 'Mul', 1.0, first=True)
    probe('div_one', 'Div', 1.0)
    probe('add_negative_zero', 'Add', -0.0)
    probe('add_zero_1111', 'Add', dims=(1, 1, 1, 1))
    probe('add_zero_constant', 'Add', k_as='constant')
    probe('add_zero_value_float', 'Add', k_as='value_float')
    probe('mul_one_value_floats', 'Mul', 1.0, k_as='value_floats')
    probe('add_zero_value_ints', 'Add', elem=T.INT64, k_as='value_ints')  # 6,293,848: 8,390,768 before, 6,293,408.
    probe('add_zero_folded', 'Add', k_as='folded')
    probe('add_zero_opset7', 'Add', opset=7)
    probe('add_zero_int32', 'Add', elem=T.INT32)
    probe('add_zero_int64', 'Add', elem=T.INT64)  # 6,293,816: ours 8,390,768 before, 6,293,408 after.
    probe('add_zero_double', 'Add', elem=T.DOUBLE)  # 6,293,816: the same.
    probe('mul_one_double_near', 'Mul', 1 + 1e-12, elem=T.DOUBLE)  # 1.0 as a float. 6,293,800: the same.
    probe('add_zero_float16', 'Add', elem=T.FLOAT16)  # Float32 behind Casts: 2,624,160; 3,672,384 before, 2,623,600.
    # Kept: run peak 4,196,896-4,197,256 bytes (b too); ours 4,196,464 before and after (1.000).
    probe('sub_zero_first', 'Sub', first=True)
    probe('div_one_first', 'Div', 1.0, first=True)
    probe('add_half', 'Add', 0.5)
    probe('mul_zero', 'Mul', 0.0)
    probe('add_zero_2elem', 'Add', dims=(2, 1, 1, 1))
    probe('add_zero_rank5', 'Add', dims=(1, 1, 1, 1, 1))
    probe('add_zero_overridable', 'Add', k_as='overridable')
    probe('add_zero_b_output', 'Add', b_out=True)
    probe('add_zero_graph_input', 'Add', on_input=True)  # x, b, sum: 3,148,104; ours 3,147,680.
    probe('add_zero_uint8', 'Add', elem=T.UINT8, opset=14)  # 1,841,768; ours 1,837,168 (0.998).
    probe('add_empty', 'Add', dims=(0,), x_shape=[2, 8, 16384, 1])  # No element: 2,099,728; ours 2,099,312.


main()
