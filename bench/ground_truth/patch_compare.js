// Runs an original model and its patched rewrite (onnx-footprint fit
// --emit-model) in ONNX Runtime on the same random inputs, and prints one
// JSON line:
//   {"original", "patched", "inputs": {name: "1x3x240x320"}, "original_run_peak",
//    "patched_run_peak", "max_abs_diff", "max_abs_value", "relative_diff"}
// relative_diff = max over outputs and elements of |original - patched|,
// over the largest |original| of that output (a normwise relative error:
// elementwise ratios blow up where an output is near 0).
// run_peak is measured as ort_driver.js measures it (heap_shim.so, arena and
// memory pattern off, one thread, sequential, optimizations "all"): the peak
// heap bytes during one run() above the figure before it, after a warm-up
// session of the same model.
// Usage: FOOTPRINT_ORT_MODULES=... FOOTPRINT_HEAP_REPORT=... LD_PRELOAD=heap_shim.so \
//          node --expose-gc patch_compare.js ORIGINAL.onnx PATCHED.onnx [SEED]
'use strict';
const path = require('path');
const ort = require(path.join(process.env.FOOTPRINT_ORT_MODULES, 'onnxruntime-node'));

const {snapshot, sleepMs} = require('./heap_snapshot.js');

// mulberry32: a small seeded generator, so that both models read the same values.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomInputs(session, seed) {
  const next = generator(seed);
  const feeds = {};
  const shapes = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor || meta.type !== 'float32') throw new Error(`input '${meta.name}' is not a float32 tensor`);
    const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < values.length; ++i) values[i] = next();
    feeds[meta.name] = new ort.Tensor('float32', values, dims);
    shapes[meta.name] = dims.join('x');
  }
  return {feeds, shapes};
}

function settle() {
  if (!global.gc) return;
  for (let i = 0; i < 5; ++i) {
    global.gc();
    sleepMs(20);
  }
}

const options = {
  executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
  graphOptimizationLevel: 'all', enableCpuMemArena: false, enableMemPattern: false, logSeverityLevel: 3,
};

// The outputs of one run and its peak above the heap before it.
async function measure(model, seed) {
  const warmUp = await ort.InferenceSession.create(model, options);
  await warmUp.run(randomInputs(warmUp, seed).feeds);
  await warmUp.release();
  settle();
  const session = await ort.InferenceSession.create(model, options);
  const {feeds, shapes} = randomInputs(session, seed);
  settle();
  const before = snapshot();
  const outputs = await session.run(feeds);
  const ran = snapshot();
  await session.release();
  return {outputs, shapes, runPeak: ran.peak - before.current};
}

async function main() {
  const [original, patched, seedText] = process.argv.slice(2);
  const seed = Number(seedText || '25');
  const a = await measure(original, seed);
  const b = await measure(patched, seed);
  let maxAbsDiff = 0;
  let maxAbsValue = 0;
  let relative = 0;
  for (const name of Object.keys(a.outputs)) {
    const x = a.outputs[name].data;
    const y = b.outputs[name] && b.outputs[name].data;
    if (!y || y.length !== x.length) throw new Error(`output '${name}' differs in size`);
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < x.length; ++i) {
      diff = Math.max(diff, Math.abs(Number(x[i]) - Number(y[i])));
      scale = Math.max(scale, Math.abs(Number(x[i])));
    }
    maxAbsDiff = Math.max(maxAbsDiff, diff);
    maxAbsValue = Math.max(maxAbsValue, scale);
    relative = Math.max(relative, scale > 0 ? diff / scale : diff);
  }
  process.stdout.write(JSON.stringify({
    original, patched, inputs: a.shapes, original_run_peak: a.runPeak, patched_run_peak: b.runPeak,
    max_abs_diff: maxAbsDiff, max_abs_value: maxAbsValue, relative_diff: relative,
  }) + '\n');
}

main().catch((error) => {
  process.stderr.write(`${process.argv[2]}: ${String(error.message || error).split('\n')[0]}\n`);
  process.exit(2);
});
