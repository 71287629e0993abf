// The heap shim's figures (heap_shim.c), asked for by a signal: what
// ort_driver.js and patch_compare.js read around each session and run.
//   const {snapshot, sleepMs} = require('./heap_snapshot.js');
//   const {current, peak} = snapshot();  // heap bytes now, and the peak since the last snapshot
//   settle();                             // gc until the heap stops shrinking (node --expose-gc)
// Needs FOOTPRINT_HEAP_REPORT (the shim's report file) and LD_PRELOAD=heap_shim.so.
'use strict';
const fs = require('fs');

const kReportSignal = 34 + 3;  // SIGRTMIN+3 in glibc, as heap_shim.c.
const reportPath = process.env.FOOTPRINT_HEAP_REPORT;

function sleepMs(ms) { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); }

function snapshot() {
  fs.writeFileSync(reportPath + '.ack', '');  // Any allocation here happens before the signal.
  process.kill(process.pid, kReportSignal);
  for (let i = 0; i < 200; ++i) {
    sleepMs(1);
    const text = fs.readFileSync(reportPath, 'utf8');
    if (text.endsWith('\n')) {
      fs.writeFileSync(reportPath, '');
      const [current, peak] = text.trim().split(' ').map(Number);
      return {current, peak};
    }
  }
  throw new Error('heap shim did not answer (is LD_PRELOAD set?)');
}

// Collects garbage until the heap stops shrinking: V8 frees the backing
// stores of dead ArrayBuffers (a released session's outputs) off the main
// thread, after gc() returns.
function settle() {
  if (!global.gc) return;
  let last = snapshot().current;
  for (let i = 0; i < 20; ++i) {
    global.gc();
    sleepMs(20);
    const now = snapshot().current;
    if (now === last) return;
    last = now;
  }
}

module.exports = {settle, snapshot, sleepMs};
