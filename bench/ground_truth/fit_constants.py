"""The measured constants of --runtime onnxruntime-cpu, fitted from probe results.

  /usr/bin/python3 fit_constants.py [--results FILE]
prints every constant the code takes from measurements as `NAME = VALUE` lines (the session's own
structures of analyzer/runtimes/onnxruntime/session_bytes.cc, the per-run overhead of session_run.cc,
the arena figures of arena_run.cc), derived from the committed constants_probes.results.jsonl;
constants_test.py fails when the code's constexpr values differ from them.
  nice /usr/bin/python3 fit_constants.py --measure BUILD_DIR [--repeat N] [--jobs J] [--results FILE]
writes the probe models (arena_probes.py, probe_models.py's copy_*), measures each N times (3), J
processes at once (1), with ort_driver.js under heap_shim.so (onnxruntime-node from BUILD_DIR/ground-truth/node_modules) and
writes the results file: one line per probe and repetition, with the host's ISA, ORT's version and
the facts of the model the fit reads (counts, names, tensor bytes).

The fit takes each probe's median over its repetitions. Session figures (create from the model's
path, arena off: path_create_retained) are slopes between chains of 10 and 80 units, rounded to
10 bytes; the run figures and the arena's come from run_peak and default_run_retained (see each
derivation). Only the standard library is needed without --measure.
"""
import argparse
import concurrent.futures
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_RESULTS = os.path.join(HERE, 'constants_probes.results.jsonl')
CHAIN_SHORT, CHAIN_LONG = 10, 80
SESSION_CHAINS = ('session_relu1d', 'session_relu4d', 'session_leaky', 'session_conv18', 'session_conv18_attrs',
                  'session_conv18_bias', 'session_add_init', 'session_identity_relu', 'session_conv_bn',
                  'session_conv_bn_plain', 'session_value_info', 'session_long_node_names', 'session_long_value_names',
                  'session_sigmoid', 'session_fp16_sigmoid')
RUN_PROBES = tuple(f'overhead_{i}in_{b - i}out' for b in range(2, 7) for i in range(1, b)) + (
    'overhead_conv1d_8x512', 'overhead_conv1d_4x256', 'overhead_conv1d_16x400_s2', 'overhead_conv1d_3x600')
COPY_PROBES = ('copy_relu', 'copy_averagepool_2d', 'copy_averagepool_3d', 'copy_maxpool_1d', 'copy_instancenorm')
ARENA_PROBES = tuple(f'arena_relu_{kib}k' for kib in (256, 768, 1536, 3072, 6144))
FIGURES = ('path_create_retained', 'run_peak', 'default_run_retained')
SHORT_STRING_CHARS = 15  # libstdc++'s std::string keeps up to 15 characters in itself (session_bytes.cc).
MLAS_SEGMENT_BYTES = 128 * 128 * 4  # Conv's im2col segment (kernel_workspaces.cc).
ARENA_INITIAL_REGION = 1 << 20  # BFCArena's first region with ORT's defaults (bfc_arena.h).


def probe_names():
    chains = [f'{name}_{n}' for name in SESSION_CHAINS for n in (CHAIN_SHORT, CHAIN_LONG)]
    return ['session_relu_chain_1'] + chains + list(RUN_PROBES) + list(COPY_PROBES) + list(ARENA_PROBES)


# --- --measure: the probe models, their facts and ORT's figures ---

def model_facts(path):
    """What the fit needs of a model besides ORT's figures, counted as session_bytes.cc counts."""
    import onnx
    from onnx import defs
    model = onnx.load(path)
    graph = model.graph

    def attributes_in_ort(node):  # The node's own attributes and its schema's defaults (AttributesInOrt).
        schema = defs.get_schema(node.op_type, domain=node.domain)
        own = {a.name for a in node.attribute}
        defaults = [n for n, a in schema.attributes.items() if a.default_value.type != 0 and n not in own]
        return len(own) + len(defaults)

    def tensor_bytes(info):
        dims = [d.dim_value for d in info.type.tensor_type.shape.dim]
        element = 2 if info.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16 else 4
        return element * math.prod(dims)  # Every probe tensor is float32 or float16 of static dims.

    def long_chars(names):
        return sum(len(n) for n in names if len(n) > SHORT_STRING_CHARS)

    return {
        'nodes': len(graph.node),
        'attributes': sum(attributes_in_ort(n) for n in graph.node),
        'node_name_chars': long_chars(n.name for n in graph.node),
        'value_name_chars': long_chars(o for n in graph.node for o in n.output),
        'value_infos': len(graph.value_info),
        'initializer_bytes': sum(4 * math.prod(i.dims) for i in graph.initializer),
        'input_bytes': sum(tensor_bytes(i) for i in graph.input),
        'output_bytes': sum(tensor_bytes(o) for o in graph.output),
        'bindings': len(graph.input) + len(graph.output),
    }


def host_isa():
    with open('/proc/cpuinfo') as cpuinfo:
        for line in cpuinfo:
            if line.startswith('flags'):
                flags = line.split()
                return next((isa for isa in ('avx512f', 'avx2') if isa in flags), 'other')
    return 'other'


def run_driver(modules, shim, work, path, rep):
    """ort_driver.js's figures for one model, its heap report file its own (runs may overlap)."""
    env = dict(os.environ, FOOTPRINT_ORT_MODULES=modules, LD_PRELOAD=shim,
               FOOTPRINT_HEAP_REPORT=os.path.join(work, f'report.{os.path.basename(path)}.{rep}'))
    out = subprocess.run(['node', '--expose-gc', os.path.join(HERE, 'ort_driver.js'), path, '1'],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def measure(build_dir, repeat, jobs, results_path):
    modules = os.path.join(build_dir, 'ground-truth', 'node_modules')
    with open(os.path.join(modules, 'onnxruntime-node', 'package.json')) as package:
        ort_version = json.load(package)['version']
    isa = host_isa()
    with tempfile.TemporaryDirectory() as work:
        models = os.path.join(work, 'models')
        for script in ('arena_probes.py', 'probe_models.py'):
            subprocess.run([sys.executable, os.path.join(HERE, script), models], check=True, stdout=subprocess.DEVNULL)
        shim = os.path.join(work, 'heap_shim.so')
        subprocess.run(['gcc', '-O2', '-shared', '-fPIC', '-o', shim, os.path.join(HERE, 'heap_shim.c')], check=True)
        runs = [(name, rep) for rep in range(repeat) for name in probe_names()]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            figures = pool.map(lambda run: run_driver(modules, shim, work, os.path.join(models, run[0] + '.onnx'),
                                                      run[1]), runs)
            lines = []
            for (name, rep), measured in zip(runs, figures):
                line = {'probe': name, 'rep': rep, 'isa': isa, 'ort': ort_version,
                        'facts': model_facts(os.path.join(models, name + '.onnx'))}
                line.update({k: measured[k] for k in FIGURES})
                lines.append(line)
                print(json.dumps(line), file=sys.stderr)
    with open(results_path, 'w') as results:
        for line in sorted(lines, key=lambda line: (probe_names().index(line['probe']), line['rep'])):
            results.write(json.dumps(line, sort_keys=True) + '\n')


# --- the fit: from the results to the constants ---

class Probes:
    """Each probe's median figures over its repetitions, and its facts."""

    def __init__(self, path):
        self.figures, self.facts, self.hosts = {}, {}, set()
        with open(path) as results:
            for text in results:
                line = json.loads(text)
                self.facts[line['probe']] = line['facts']
                self.hosts.add((line['isa'], line['ort']))
                for figure in FIGURES:
                    self.figures.setdefault((line['probe'], figure), []).append(line[figure])

    def value(self, probe, figure):
        return statistics.median(self.figures[(probe, figure)])

    def fact(self, probe, name):
        return self.facts[probe][name]

    def slope(self, chain, what='path_create_retained'):
        """Per unit between the chains of 10 and 80: of a figure, or of a fact when `what` names one."""
        short, long_ = f'{chain}_{CHAIN_SHORT}', f'{chain}_{CHAIN_LONG}'
        if what in FIGURES:
            return (self.value(long_, what) - self.value(short, what)) / (CHAIN_LONG - CHAIN_SHORT)
        return (self.fact(long_, what) - self.fact(short, what)) / (CHAIN_LONG - CHAIN_SHORT)


def round_to(value, step):
    return int(math.floor(value / step + 0.5)) * step


def round_up(value, step):
    return int(math.ceil(value / step)) * step


def round_down(value, step):
    return int(math.floor(value / step)) * step


def session_constants(p):
    """session_bytes.cc: each figure a slope (per unit of a chain) or a difference of slopes."""
    c = {}
    node_1d, node_4d = p.slope('session_relu1d'), p.slope('session_relu4d')  # Node + 1 dim, node + 4 dims.
    c['kSessionBytesPerOutputDim'] = round_to((node_4d - node_1d) / 3, 10)
    c['kSessionBytesPerNode'] = round_to(node_1d - c['kSessionBytesPerOutputDim'], 10)
    one_relu = p.value('session_relu_chain_1', 'path_create_retained')  # One Relu on [16].
    c['kSessionFixedBytes'] = round_to(one_relu - c['kSessionBytesPerNode'] - c['kSessionBytesPerOutputDim'], 10)
    # Attributes as ORT holds them, schema defaults included: LeakyRelu's alpha (1 more than Relu),
    # a Conv's 5 written attributes (4 more than ORT's auto_pad and group defaults), pooled.
    leaky = p.slope('session_leaky') - node_4d
    conv = p.slope('session_conv18_attrs') - p.slope('session_conv18')
    attributes = (p.slope('session_leaky', 'attributes') - p.slope('session_relu4d', 'attributes') +
                  p.slope('session_conv18_attrs', 'attributes') - p.slope('session_conv18', 'attributes'))
    c['kSessionBytesPerAttribute'] = round_to((leaky + conv) / attributes, 10)
    # An initializer beyond its data: an Add's 18-float addend (against a Relu), a Conv's 18-float bias.
    add = (p.slope('session_add_init') - node_1d - p.slope('session_add_init', 'initializer_bytes'))
    bias = (p.slope('session_conv18_bias') - p.slope('session_conv18') -
            p.slope('session_conv18_bias', 'initializer_bytes') + p.slope('session_conv18', 'initializer_bytes'))
    c['kSessionBytesPerInitializer'] = round_to((add + bias) / 2, 10)
    # Taken out by a rewrite: an Identity before each Relu (with its 4-D output); BatchNormalization's
    # two attributes (its epsilon and momentum written or not); the BN's four initializers and the
    # Conv's old filter, the fused Conv holding a new filter and a bias (of 18 floats) instead.
    c['kSessionBytesPerRemovedNode'] = round_to(p.slope('session_identity_relu') - node_4d, 10)
    bn_attributes = p.slope('session_conv_bn') - p.slope('session_conv_bn_plain')
    c['kSessionBytesPerRemovedAttribute'] = round_to(bn_attributes / 2, 10)
    fused = (p.slope('session_conv_bn') - p.slope('session_conv18') - c['kSessionBytesPerRemovedNode'] -
             2 * c['kSessionBytesPerRemovedAttribute'] - c['kSessionBytesPerInitializer'] - 18 * 4)
    c['kSessionBytesPerRemovedInitializer'] = round_to(fused / 5, 10)
    c['kSessionBytesPerValueInfo'] = round_to(p.slope('session_value_info') - node_4d, 10)
    # A Cast ORT inserts for a float16 node it runs in float32 and takes out again when it meets
    # the Cast back (two per float16 Sigmoid of a chain, against the float32 chain).
    c['kSessionBytesPerCancelledCast'] = round_to((p.slope('session_fp16_sigmoid') - p.slope('session_sigmoid')) / 2, 10)
    # A name past std::string's own 15 characters: bytes per unit over characters per unit.
    for constant, chain, chars in (('kSessionBytesPerNodeNameChar', 'session_long_node_names', 'node_name_chars'),
                                   ('kSessionBytesPerValueNameChar', 'session_long_value_names', 'value_name_chars')):
        c[constant] = (round_to(p.slope(chain) - node_4d, 1), round(p.slope(chain, chars)))
    return c


def run_constants(p):
    """session_run.cc: the run's end (a line over bindings), the output copy's slack, while kernels run."""
    c = {}
    # One-float tensors: run_peak - inputs - outputs is the fixed part; a Theil-Sen line (the median
    # of the pairwise slopes, then the median intercept: a probe's occasional 8 KiB more does not
    # tilt it) over the bindings (2 to 6) of every overhead_*in_*out probe, both rounded up to 64.
    points = [(p.fact(n, 'bindings'), p.value(n, 'run_peak') - p.fact(n, 'input_bytes') - p.fact(n, 'output_bytes'))
              for n in RUN_PROBES if 'in_' in n]
    slope = statistics.median((y2 - y1) / (x2 - x1) for x1, y1 in points for x2, y2 in points if x2 > x1)
    c['kOnnxRuntimeCpuRunEndBytes'] = round_up(statistics.median(y - slope * x for x, y in points), 64)
    c['kOnnxRuntimeCpuRunEndBytesPerBinding'] = round_up(slope, 64)
    # Large outputs (copy_*): run_peak - inputs - 2 x outputs, the smallest, rounded down to 512.
    copies = [p.value(n, 'run_peak') - p.fact(n, 'input_bytes') - 2 * p.fact(n, 'output_bytes') for n in COPY_PROBES]
    c['kOnnxRuntimeCpuOutputCopySlackBytes'] = round_down(min(copies), 512)
    # An im2col Conv: run_peak - inputs - outputs - its 64 KiB segment, the smallest, rounded down to 512.
    convs = [p.value(n, 'run_peak') - p.fact(n, 'input_bytes') - p.fact(n, 'output_bytes') - MLAS_SEGMENT_BYTES
             for n in RUN_PROBES if 'conv' in n]
    c['kOnnxRuntimeCpuDuringKernelsBytes'] = round_down(min(convs), 512)
    return c


def arena_region(output_bytes):
    """The one region a lone output of these bytes makes the arena take: 1 MiB doubled until it fits."""
    region = ARENA_INITIAL_REGION
    while region < round_up(output_bytes, 256):
        region *= 2
    return region


def arena_constants(p):
    """arena_run.cc: one Relu of 256 KiB to 6 MiB; held after the run above the region and the output's
    copy is region / 256 x handle bytes + a fixed part: handle bytes from a least-squares slope (to the
    byte), the fixed part the median rest, to 512."""
    points = []
    for name in ARENA_PROBES:
        output = p.fact(name, 'output_bytes')
        region = arena_region(output)
        points.append((region, p.value(name, 'default_run_retained') - output - region))
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    slope = (sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points))
    handle = round_to(slope * 256, 1)
    fixed = statistics.median(y - x // 256 * handle for x, y in points)
    return {'kHandleBytesPer256': handle, 'kRunFixedBytes': round_to(fixed, 512)}


def format_value(value):
    if isinstance(value, tuple):
        return f'{value[0]}.0 / {value[1]}'
    return str(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--measure', metavar='BUILD_DIR', help='measure the probes with ORT first')
    parser.add_argument('--repeat', type=int, default=3, help='runs per probe when measuring (3)')
    parser.add_argument('--jobs', type=int, default=1, help='ORT processes at once when measuring (1)')
    parser.add_argument('--results', default=DEFAULT_RESULTS, help='the results file to write or read')
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.repeat, args.jobs, args.results)
    probes = Probes(args.results)
    for isa, ort in sorted(probes.hosts):
        print(f'# measured with onnxruntime-node {ort} on {isa}')
    for constants in (session_constants(probes), run_constants(probes), arena_constants(probes)):
        for name, value in constants.items():
            print(f'{name} = {format_value(value)}')


if __name__ == '__main__':
    main()
