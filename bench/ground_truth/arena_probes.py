"""Probe models behind the arena and weights-after-load rules of --runtime onnxruntime-cpu
(analyzer/runtimes/onnxruntime/arena_run.h, loaded_weights.h): /usr/bin/python3 arena_probes.py DIR,
then measure them with bench/ground_truth/run.sh BUILD_DIR DIR (ort_driver.js default_* and path_* figures)."""
import os
import sys
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = TensorProto.FLOAT

def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + '.onnx'))

def vi(name, shape): return helper.make_tensor_value_info(name, F, shape)
def init(name, arr): return numpy_helper.from_array(arr.astype(np.float32), name)
rng = np.random.default_rng(0)

# Arena growth: one Relu, output of n floats.
for kib in (256, 768, 1536, 3072, 6144):
    n = kib * 256
    save(f'arena_relu_{kib}k', [helper.make_node('Relu', ['x'], ['y'])], [vi('x', [n])], [vi('y', [n])])
# Two tensors of 768 KiB each live at once (Relu -> Neg -> Add(x-ish)): regions 1 MiB then 2 MiB.
n = 768 * 256
save('arena_two_768k', [helper.make_node('Relu', ['x'], ['a']), helper.make_node('Neg', ['a'], ['b']),
                        helper.make_node('Add', ['a', 'b'], ['y'])], [vi('x', [n])], [vi('y', [n])])
# Weights.
save('w_add_4m', [helper.make_node('Add', ['x', 'w'], ['y'])], [vi('x', [1 << 20])], [vi('y', [1 << 20])],
     [init('w', rng.standard_normal(1 << 20))])
save('w_matmul_1024', [helper.make_node('MatMul', ['x', 'w'], ['y'])], [vi('x', [1, 1024])], [vi('y', [1, 1024])],
     [init('w', rng.standard_normal((1024, 1024)))])
save('w_matmul_1000x1000', [helper.make_node('MatMul', ['x', 'w'], ['y'])], [vi('x', [1, 1000])], [vi('y', [1, 1000])],
     [init('w', rng.standard_normal((1000, 1000)))])
save('w_matmul_shared', [helper.make_node('MatMul', ['x', 'w'], ['a']), helper.make_node('MatMul', ['a', 'w'], ['y'])],
     [vi('x', [1, 1024])], [vi('y', [1, 1024])], [init('w', rng.standard_normal((1024, 1024)))])
save('w_matmul_and_add', [helper.make_node('MatMul', ['x', 'w'], ['a']), helper.make_node('Add', ['a', 'w'], ['y'])],
     [vi('x', [1024, 1024])], [vi('y', [1024, 1024])], [init('w', rng.standard_normal((1024, 1024)))])
save('w_gemm_transb', [helper.make_node('Gemm', ['x', 'w', 'b'], ['y'], transB=1)], [vi('x', [1, 1024])], [vi('y', [1, 1000])],
     [init('w', rng.standard_normal((1000, 1024))), init('b', rng.standard_normal(1000))])
save('w_conv3x3_256', [helper.make_node('Conv', ['x', 'w', 'b'], ['y'], pads=[1, 1, 1, 1])], [vi('x', [1, 256, 14, 14])],
     [vi('y', [1, 256, 14, 14])], [init('w', rng.standard_normal((256, 256, 3, 3))), init('b', rng.standard_normal(256))])
save('w_conv1x1_250', [helper.make_node('Conv', ['x', 'w'], ['y'])], [vi('x', [1, 256, 14, 14])],
     [vi('y', [1, 250, 14, 14])], [init('w', rng.standard_normal((250, 256, 1, 1)))])
save('w_conv3x3_3in', [helper.make_node('Conv', ['x', 'w'], ['y'], pads=[1, 1, 1, 1])], [vi('x', [1, 3, 64, 64])],
     [vi('y', [1, 512, 64, 64])], [init('w', rng.standard_normal((512, 3, 3, 3)))])
save('w_convT', [helper.make_node('ConvTranspose', ['x', 'w'], ['y'])], [vi('x', [1, 256, 8, 8])],
     [vi('y', [1, 256, 10, 10])], [init('w', rng.standard_normal((256, 256, 3, 3)))])
save('w_dwconv', [helper.make_node('Conv', ['x', 'w'], ['y'], group=1024, pads=[1, 1, 1, 1])], [vi('x', [1, 1024, 8, 8])],
     [vi('y', [1, 1024, 8, 8])], [init('w', rng.standard_normal((1024, 1, 3, 3)))])
save('w_conv_group2', [helper.make_node('Conv', ['x', 'w'], ['y'], group=2, pads=[1, 1, 1, 1])], [vi('x', [1, 256, 8, 8])],
     [vi('y', [1, 256, 8, 8])], [init('w', rng.standard_normal((256, 128, 3, 3)))])
shape = numpy_helper.from_array(np.array([1 << 20], dtype=np.int64), 's')
save('w_folded_4m', [helper.make_node('ConstantOfShape', ['s'], ['w'], value=helper.make_tensor('v', F, [1], [0.5])),
                     helper.make_node('Add', ['x', 'w'], ['y'])], [vi('x', [1 << 20])], [vi('y', [1 << 20])], [shape])
save('w_conv_bn', [helper.make_node('Conv', ['x', 'w'], ['c'], pads=[1, 1, 1, 1]),
                   helper.make_node('BatchNormalization', ['c', 'sc', 'bi', 'me', 'va'], ['y'])],
     [vi('x', [1, 256, 8, 8])], [vi('y', [1, 256, 8, 8])],
     [init('w', rng.standard_normal((256, 256, 3, 3))), init('sc', np.ones(256)), init('bi', np.zeros(256)),
      init('me', np.zeros(256)), init('va', np.ones(256))])
# The session's own structures per node: chains of small Relus.
for count in (1, 50, 200, 800):
    nodes = [helper.make_node('Relu', [f't{i}'], [f't{i + 1}']) for i in range(count)]
    save(f'session_relu_chain_{count}', nodes, [vi('t0', [16])], [vi(f't{count}', [16])])

# ORT's common subexpression elimination (before folding) takes equal constants of <= 8 elements
# as one value: equal ConstantOfShape fold into one weight; large equal initializers stay two.
def cos(shape_name, out_name, fill):
    return helper.make_node('ConstantOfShape', [shape_name], [out_name], value=helper.make_tensor('v', F, [1], [fill]))
def conv_chain(name, filters, nodes=(), inits=()):
    nodes = list(nodes) + [helper.make_node('Conv', [f't{i}', w], [f't{i + 1}'], pads=[1, 1, 1, 1])
                           for i, w in enumerate(filters)]
    save(name, nodes, [vi('t0', [1, 256, 8, 8])], [vi(f't{len(filters)}', [1, 256, 8, 8])], inits)
filter_shape = np.array([256, 256, 3, 3], dtype=np.int64)
shapes = [numpy_helper.from_array(filter_shape, 's0'), numpy_helper.from_array(filter_shape, 's1')]
conv_chain('cse_cos_same', ['w0', 'w1'], [cos('s0', 'w0', 0.02), cos('s1', 'w1', 0.02)], shapes)
conv_chain('cse_cos_diffval', ['w0', 'w1'], [cos('s0', 'w0', 0.02), cos('s1', 'w1', 0.03)], shapes)
same = rng.standard_normal((256, 256, 3, 3))
conv_chain('cse_same_init', ['w0', 'w1'], [], [init('w0', same), init('w1', same)])
for count in (8, 9):
    addend = rng.standard_normal(count)
    save(f'cse_add_twins_{count}', [helper.make_node('Add', ['x', 'a0'], ['y0']), helper.make_node('Add', ['x', 'a1'], ['y1']),
                                    helper.make_node('Mul', ['y0', 'y1'], ['z'])],
         [vi('x', [count])], [vi('z', [count])], [init('a0', addend), init('a1', addend)])

# The session's own structures (loaded_weights.cc SessionBytes): chains of 10 and 80 units, the
# slope between them per unit. 4-D tensors [1, 18, 4, 4]; 18 channels keep Convs out of NCHWc.
S4 = [1, 18, 4, 4]
LONG = '/backbone/stage2/stage2.0/branch_proj/branch_proj.4/Relu_output_'
for n in (10, 80):
    def chain(name, make, inits=(), shape=S4, names=lambda i: f't{i}'):
        save(f'{name}_{n}', [make(i, names) for i in range(n)], [vi(names(0), shape)], [vi(names(n), shape)], inits)
    chain('session_relu4d', lambda i, t: helper.make_node('Relu', [t(i)], [t(i + 1)]))
    chain('session_leaky', lambda i, t: helper.make_node('LeakyRelu', [t(i)], [t(i + 1)], alpha=0.1))
    chain('session_long_names', lambda i, t: helper.make_node('Relu', [t(i)], [t(i + 1)], name=f'{LONG}node{i}'),
          names=lambda i: f'{LONG}{i}')
    chain('session_conv18', lambda i, t: helper.make_node('Conv', [t(i), f'w{i}'], [t(i + 1)]),
          [init(f'w{i}', rng.standard_normal((18, 18, 1, 1))) for i in range(n)])
    chain('session_conv18_attrs', lambda i, t: helper.make_node('Conv', [t(i), f'w{i}'], [t(i + 1)], dilations=[1, 1], group=1,
                                                                kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1]),
          [init(f'w{i}', rng.standard_normal((18, 18, 1, 1))) for i in range(n)])
    chain('session_conv18_bias', lambda i, t: helper.make_node('Conv', [t(i), f'w{i}', f'b{i}'], [t(i + 1)]),
          [init(f'w{i}', rng.standard_normal((18, 18, 1, 1))) for i in range(n)] +
          [init(f'b{i}', rng.standard_normal(18)) for i in range(n)])
    chain('session_add_init', lambda i, t: helper.make_node('Add', [t(i), f'a{i}'], [t(i + 1)]),
          [init(f'a{i}', np.full(18, float(i))) for i in range(n)], shape=[18])
    nodes = []
    for i in range(n):
        nodes += [helper.make_node('Identity', [f't{i}'], [f'u{i}']), helper.make_node('Relu', [f'u{i}'], [f't{i + 1}'])]
    save(f'session_identity_relu_{n}', nodes, [vi('t0', S4)], [vi(f't{n}', S4)])
    nodes, inits = [], []
    for i in range(n):
        nodes += [helper.make_node('Conv', [f't{i}', f'w{i}'], [f'c{i}']),
                  helper.make_node('BatchNormalization', [f'c{i}', f'sc{i}', f'bi{i}', f'me{i}', f'va{i}'], [f't{i + 1}'],
                                   epsilon=1e-3, momentum=0.8)]
        inits += [init(f'w{i}', rng.standard_normal((18, 18, 1, 1))), init(f'sc{i}', np.ones(18) + i),
                  init(f'bi{i}', np.zeros(18) + i), init(f'me{i}', np.zeros(18) + i), init(f'va{i}', np.ones(18) + i)]
    save(f'session_conv_bn_{n}', nodes, [vi('t0', S4)], [vi(f't{n}', S4)], inits)
    # The same without BatchNormalization's epsilon and momentum in the file (fit_constants.py:
    # what each attribute of a node a rewrite took out leaves behind).
    for node in nodes:
        del node.attribute[:]
    save(f'session_conv_bn_plain_{n}', nodes, [vi('t0', S4)], [vi(f't{n}', S4)], inits)
    # For fit_constants.py: the Relu chain on [16] (a node with a 1-D output), node names and
    # value names of one length apart, and a value_info entry per intermediate value.
    chain('session_relu1d', lambda i, t: helper.make_node('Relu', [t(i)], [t(i + 1)]), shape=[16])
    chain('session_long_node_names', lambda i, t: helper.make_node('Relu', [t(i)], [t(i + 1)], name=f'{LONG}node{i:03d}'))
    chain('session_long_value_names', lambda i, t: helper.make_node('Relu', [t(i)], [t(i + 1)]),
          names=lambda i: f'{LONG}{i:03d}')
    # For fit_constants.py: Sigmoid chains on [16], float32 and float16. ORT has no float16
    # Sigmoid on the CPU: each runs in float32 behind a Cast of its input and one of its output
    # (InsertCastTransformer), and the two that meet between two Sigmoids are taken out again
    # (RemoveDuplicateCastTransformer): what each such Cast leaves behind.
    chain('session_sigmoid', lambda i, t: helper.make_node('Sigmoid', [t(i)], [t(i + 1)]), shape=[16])
    nodes = [helper.make_node('Sigmoid', [f't{i}'], [f't{i + 1}']) for i in range(n)]
    save(f'session_fp16_sigmoid_{n}', nodes, [helper.make_tensor_value_info('t0', TensorProto.FLOAT16, [16])],
         [helper.make_tensor_value_info(f't{n}', TensorProto.FLOAT16, [16])])
    nodes = [helper.make_node('Relu', [f't{i}'], [f't{i + 1}']) for i in range(n)]
    g = helper.make_graph(nodes, f'session_value_info_{n}', [vi('t0', S4)], [vi(f't{n}', S4)],
                          value_info=[vi(f't{i}', S4) for i in range(1, n)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, f'session_value_info_{n}.onnx'))

# The per-run overhead (session_run.cc; fit_constants.py): one-float tensors bound as `ins` inputs
# (summed) and `outs` outputs (each the sum plus a constant of its own), 2 to 6 bindings.
for bindings in range(2, 7):
    for ins in range(1, bindings):
        outs = bindings - ins
        nodes = [helper.make_node('Sum', [f'x{i}' for i in range(ins)], ['s'])]
        nodes += [helper.make_node('Add', ['s', f'c{j}'], [f'y{j}']) for j in range(outs)]
        save(f'overhead_{ins}in_{outs}out', nodes, [vi(f'x{i}', [1]) for i in range(ins)],
             [vi(f'y{j}', [1]) for j in range(outs)], [init(f'c{j}', np.array([j + 1.0])) for j in range(outs)])
# While a kernel runs: a 1-D Conv of 18 filters (ORT's Conv, not NCHWc) with padding or strides,
# whose im2col takes MLAS's one 64 KiB segment (kernel_workspaces.cc: filters <= output size), and
# outputs small enough that the run's end is not its peak.
for name, x, w, attrs in (('overhead_conv1d_8x512', [1, 8, 512], [18, 8, 3], {'pads': [1, 1]}),
                          ('overhead_conv1d_4x256', [1, 4, 256], [18, 4, 3], {'pads': [1, 1]}),
                          ('overhead_conv1d_16x400_s2', [1, 16, 400], [18, 16, 5], {'pads': [2, 2], 'strides': [2]}),
                          ('overhead_conv1d_3x600', [1, 3, 600], [18, 3, 7], {'pads': [3, 3]})):
    y = [1, 18, (x[2] + 2 * attrs['pads'][0] - w[2]) // attrs.get('strides', [1])[0] + 1]
    save(name, [helper.make_node('Conv', ['x', 'w'], ['y'], **attrs)], [vi('x', x)], [vi('y', y)],
         [init('w', rng.standard_normal(w))])
