// What a process that uses ONNX Runtime (onnxruntime-node, CPU) reaches for
// one model, measured as a new user's process would meet it: run under
// heap_shim.so (LD_PRELOAD), it prints one JSON line
//   {"model", "options", "warm", "before", "load_peak", "create_retained",
//    "inputs_bytes", "run_peak", "run_retained", "process_peak", "phase"}
// Every figure is heap bytes above `before`, the heap just before
// InferenceSession.create(path):
// load_peak: the high-water during create (the file read, the graph, the
//   optimizers, the initializers made tensors, pre-packing);
// create_retained: what create leaves held;
// run_peak: the high-water from after create through the first run, the
//   zero inputs of the bound shapes (made after create) included;
// run_retained: held after that run, the outputs still referenced;
// process_peak: the larger of load_peak and run_peak, and `phase` which one.
// options: "default" (InferenceSession's defaults: arena and memory pattern
//   on, all optimizations, the default thread pools) or "noarena" (the same
//   with the CPU arena and memory pattern off).
// warm: with --warm, a session of the same model is created, run and released
//   first, so that the process's one-time allocations (the environment,
//   kernel registries, thread pools, MLAS's buffers) are not counted; without
//   it, they are, as in a process that loads one model.
// Usage: node --expose-gc process_peak.js MODEL.onnx DIM_DEFAULT [default|noarena] [--warm] [--dim NAME=VALUE]...
'use strict';
const path = require('path');
const ort = require(path.join(process.env.FOOTPRINT_ORT_MODULES, 'onnxruntime-node'));

const {settle, snapshot} = require('./heap_snapshot.js');

const {zeroInputs: zeroInputsOf} = require('./zero_inputs.js');
const zeroInputs = (session, dimDefault) => zeroInputsOf(ort, session, dimDefault);


async function main() {
  const args = process.argv.slice(2);
  const warm = args.includes('--warm');
  // --dim NAME=VALUE (repeatable): one symbolic dim by name, as the analyzer's --dim.
  const named = {};
  const positional = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--warm') continue;
    if (args[i] === '--dim') {
      const [name, value] = args[++i].split('=');
      named[name] = Number(value);
      continue;
    }
    positional.push(args[i]);
  }
  const [model, dimDefaultText, optionsName = 'default'] = positional;
  const dimDefault = {default: Number(dimDefaultText || '1'), named};
  const options = {logSeverityLevel: 3};
  if (optionsName === 'noarena') Object.assign(options, {enableCpuMemArena: false, enableMemPattern: false});
  else if (optionsName === 'default1t') Object.assign(options, {intraOpNumThreads: 1, interOpNumThreads: 1});
  else if (optionsName !== 'default') throw new Error(`options '${optionsName}': default, default1t or noarena`);
  if (warm) {
    const session = await ort.InferenceSession.create(model, options);
    await session.run(zeroInputs(session, dimDefault).feeds);
    await session.release();
  }
  settle();
  const before = snapshot();
  const session = await ort.InferenceSession.create(model, options);
  const created = snapshot();
  const {feeds, shapes, bytes} = zeroInputs(session, dimDefault);
  const outputs = await session.run(feeds);
  const ran = snapshot();
  const loadPeak = created.peak - before.current;
  const runPeak = ran.peak - before.current;
  process.stdout.write(JSON.stringify({
    model, options: optionsName, warm, before: before.current, load_peak: loadPeak,
    create_retained: created.current - before.current, inputs_bytes: bytes, inputs: shapes,
    run_peak: runPeak, run_retained: ran.current - before.current,
    process_peak: Math.max(loadPeak, runPeak), phase: loadPeak >= runPeak ? 'create' : 'run',
    outputs: Object.keys(outputs).length,
  }) + '\n');
}

main().catch((error) => {
  process.stderr.write(`${process.argv[2]}: ${String(error.message || error).split('\n')[0]}\n`);
  process.exit(2);
});
