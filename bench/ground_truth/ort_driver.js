// Measures what ONNX Runtime (onnxruntime-node, CPU) allocates for one model:
// run under heap_shim.so (LD_PRELOAD), it prints one JSON line
//   {"model", "create_retained", "create_peak", "run_peak", "inputs": {...},
//    "path_create_retained", "default_create_retained", "default_run_retained",
//    "default_run_peak"}
// With the arena and memory pattern off (each tensor a malloc of its own),
// the session created from the model's bytes:
// create_retained: heap bytes that stay allocated after InferenceSession.create
//   (weights, pre-packed weights, session state), against before it;
// run_peak: the peak heap bytes during one run() above the figure after
//   create, the zero inputs of the bound shapes included (our arena holds the
//   graph inputs too).
// Then, each in a fresh session created from the model's path:
// path_create_retained: create_retained, arena and memory pattern off;
// default_create_retained: the same with ORT's default CPU arena and memory
//   pattern on (enableCpuMemArena, enableMemPattern: true);
// default_run_retained: in that session, the heap held after its first run
//   above what was held just before it, the outputs still referenced and the
//   inputs (made before) not counted: the arena's regions never go back
//   (core/framework/bfc_arena.cc), and the memory pattern is only recorded on
//   the first run (core/framework/execution_frame.cc);
// default_run_peak: the peak during that run above the figure before it.
// A warm-up session of the same model runs first with each set of options,
// so that one-time allocations (registries, thread pools, the logger, MLAS's
// per-thread buffers) are not counted.
// Usage: node ort_driver.js MODEL.onnx DIM_DEFAULT
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(process.env.FOOTPRINT_ORT_MODULES, 'onnxruntime-node'));

const {settle, snapshot} = require('./heap_snapshot.js');

const {zeroInputs: zeroInputsOf} = require('./zero_inputs.js');
const zeroInputs = (session, dimDefault) => zeroInputsOf(ort, session, dimDefault);


async function warmUp(modelSource, options, dimDefault) {
  const session = await ort.InferenceSession.create(modelSource, options);
  const {feeds} = zeroInputs(session, dimDefault);
  await session.run(feeds);
  await session.release();
  settle();
}

// What create from the model's path retains, and with `runToo` what the first
// run then holds (outputs referenced) and peaks at, inputs made beforehand.
async function measureFromPath(model, options, dimDefault, runToo) {
  settle();
  const before = snapshot();
  const session = await ort.InferenceSession.create(model, options);
  const created = snapshot();
  const figures = {create_retained: created.current - before.current};
  if (runToo) {
    const {feeds} = zeroInputs(session, dimDefault);
    const beforeRun = snapshot();
    const outputs = await session.run(feeds);
    const ran = snapshot();
    figures.run_retained = ran.current - beforeRun.current;
    figures.run_peak = ran.peak - beforeRun.current;
    if (Object.keys(outputs).length < 0) throw new Error('unreachable');  // Keeps the outputs referenced.
  }
  await session.release();
  return figures;
}

async function main() {
  const [model, dimDefaultText] = process.argv.slice(2);
  const dimDefault = Number(dimDefaultText || '1');
  const options = {
    executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', enableCpuMemArena: false, enableMemPattern: false, logSeverityLevel: 3,
  };
  const defaultOptions = {...options, enableCpuMemArena: true, enableMemPattern: true};
  const modelBytes = fs.readFileSync(model);
  {
    const warmUp = await ort.InferenceSession.create(modelBytes, options);
    const {feeds} = zeroInputs(warmUp, dimDefault);
    await warmUp.run(feeds);
    await warmUp.release();
  }
  // Settled, as the later fields: right after a bare gc() V8 may still be
  // freeing the warm-up's output buffers, which then fall inside create and
  // skew create_retained (once measured -6 MB on arena_relu_6144k).
  settle();
  const before = snapshot();
  const session = await ort.InferenceSession.create(modelBytes, options);
  const created = snapshot();
  const {feeds, shapes} = zeroInputs(session, dimDefault);
  await session.run(feeds);
  const ran = snapshot();
  await session.release();
  const noArena = await measureFromPath(model, options, dimDefault, false);
  await warmUp(model, defaultOptions, dimDefault);
  const defaults = await measureFromPath(model, defaultOptions, dimDefault, true);
  process.stdout.write(JSON.stringify({
    model, create_retained: created.current - before.current, create_peak: created.peak - before.current,
    run_peak: ran.peak - created.current, inputs: shapes, path_create_retained: noArena.create_retained,
    default_create_retained: defaults.create_retained, default_run_retained: defaults.run_retained,
    default_run_peak: defaults.run_peak,
  }) + '\n');
}

main().catch((error) => {
  process.stderr.write(`${process.argv[2]}: ${String(error.message || error).split('\n')[0]}\n`);
  process.exit(2);
});
