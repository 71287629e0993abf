// The zero inputs both ORT drivers feed a session (ort_driver.js,
// process_peak.js): each graph input of the element type it declares, its
// symbolic dims bound to DIM_DEFAULT (or by name).
'use strict';

const kElementType = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array, uint32: Uint32Array,
  uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array,
};

// `ort`: the onnxruntime-node module; `dimDefault`: a number for every
// symbolic dim, or {default, named: {NAME: value}}. Returns the feeds, each
// input's dims as "1x3x224x224", and the feeds' bytes.
function zeroInputs(ort, session, dimDefault) {
  const feeds = {};
  const shapes = {};
  let bytes = 0;
  const named = typeof dimDefault === 'object' ? dimDefault.named : {};
  const fallback = typeof dimDefault === 'object' ? dimDefault.default : dimDefault;
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
    const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : (named[d] ?? fallback)));
    const ArrayType = kElementType[meta.type];
    if (ArrayType === undefined) throw new Error(`input '${meta.name}' has type ${meta.type}`);
    const count = dims.reduce((a, b) => a * b, 1);
    feeds[meta.name] = new ort.Tensor(meta.type, new ArrayType(count), dims);
    shapes[meta.name] = dims.join('x') || 'scalar';
    bytes += count * ArrayType.BYTES_PER_ELEMENT;
  }
  return {feeds, shapes, bytes};
}

module.exports = {zeroInputs};
