'use strict';

/** The `p`-th percentile (0-100) of ascending `sorted`, nearest rank. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** A growable list of latencies in ms. */
function createSamples() {
  let values = new Float64Array(1 << 14);
  let length = 0;
  return {
    push(value) {
      if (length === values.length) {
        const bigger = new Float64Array(values.length * 2);
        bigger.set(values);
        values = bigger;
      }
      values[length++] = value;
    },
    get length() {
      return length;
    },
    sorted: () => values.slice(0, length).sort(),
  };
}

module.exports = { percentile, createSamples };
