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
