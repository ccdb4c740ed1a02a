// Small statistics helpers shared by the benchmarks.
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}
export const median = (values) => percentile(values, 50);
export const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
export function ratio(a, b) {
  return Math.round((a / b) * 100) / 100;
}

/** A seeded PRNG (mulberry32): the same corpus on every run. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The figure contract: every figure a bench reports names its unit, lbot's value, the baseline measured in the
// same run, the ratio between them, and its targets (required or stretch) with met/missed. run.js aggregates
// these figures over repeated runs; bench/schema.mjs defines the document they end up in.

/** What a target is checked against: the value itself, value / baseline (shown as × or as a %), or baseline / value. */
const CHECKED = {
  value: (f) => f.value,
  ratio: (f) => f.ratio,
  share: (f) => f.ratio,
  speedup: (f) => (f.value === null || f.baseline === null || f.value === 0 ? null : f.baseline / f.value),
};

/** Rounds to 4 significant digits: figures stay readable in JSON without losing what a ratio needs. */
export const round = (x) => (x === null || x === undefined || !Number.isFinite(x) ? null : Number(x.toPrecision(4)));

function checkTarget(f, level, t) {
  if (!t) return null;
  const of = t.of ?? 'ratio';
  const op = t.op ?? (of === 'share' || of === 'speedup' ? '>=' : '<=');
  if (!(of in CHECKED)) throw new Error(`figure ${f.name}: unknown target kind ${of}`);
  if (op !== '<=' && op !== '>=') throw new Error(`figure ${f.name}: unknown target direction ${op}`);
  if (!Number.isFinite(t.limit)) throw new Error(`figure ${f.name}: the target needs a numeric limit`);
  const actual = CHECKED[of](f);
  const met = actual === null || !Number.isFinite(actual) ? null : op === '<=' ? actual <= t.limit : actual >= t.limit;
  return { level, of, op, limit: t.limit, actual: round(actual), met };
}

/**
 * One figure. `target` is the required target, `stretch` an optional stricter one (its kind and direction default
 * to the required one's); a figure without either is informational. `unavailable` says why the baseline (or the
 * value) could not be measured: its targets are then neither met nor missed but not measured (met: null).
 */
export function figure({ name, label, unit, value, baseline = null, baselineLabel = null, target = null, stretch = null, unavailable = null, note = null }) {
  if (typeof name !== 'string' || !/^[a-z0-9_.-]+$/.test(name)) throw new Error(`figure name ${JSON.stringify(name)}: use lower-case words, digits, . _ -`);
  if (typeof unit !== 'string' || unit === '') throw new Error(`figure ${name}: a unit is required`);
  const v = Number.isFinite(value) ? value : null;
  const b = Number.isFinite(baseline) ? baseline : null;
  const f = {
    name,
    label: label ?? name,
    unit,
    value: v,
    baseline: b,
    baseline_label: baselineLabel,
    ratio: v !== null && b !== null && b !== 0 ? v / b : null,
  };
  const targets = [checkTarget(f, 'required', target), checkTarget(f, 'stretch', stretch && target ? { of: target.of, op: target.op, ...stretch } : stretch)];
  return {
    ...f,
    value: round(v),
    baseline: round(b),
    ratio: round(f.ratio),
    targets: targets.filter(Boolean),
    met: targets[0] ? targets[0].met : null,
    unavailable,
    note,
  };
}

const OP = { '<=': '≤', '>=': '≥' };
/** A checked quantity as a person reads it: 3.1×, 27 %, 180 ms. */
export function show(of, x, unit) {
  if (x === null || x === undefined) return '—';
  if (of === 'share') return `${Math.round(x * 100)}%`;
  if (of === 'ratio' || of === 'speedup') return `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`;
  return `${unit === 'ms' ? fmt(x) : String(round(x))} ${unit}`;
}
export const showTarget = (t, unit) => `${OP[t.op]} ${t.of === 'share' ? show(t.of, t.limit, unit) : `${t.limit}${t.of === 'value' ? ` ${unit}` : '×'}`}`;
const verdict = (met) => (met === null ? 'not measured' : met ? 'met' : 'MISSED');

/** Prints each figure on one line, then the bench's one JSON line (the line run.js reads). */
export function report(bench, figures, extra = {}) {
  console.log(`figures (${bench}):`);
  for (const f of figures) {
    const against = f.baseline === null ? '' : ` vs ${show('value', f.baseline, f.unit)} (${f.baseline_label ?? 'baseline'})`;
    const checked =
      f.targets[0] && f.targets[0].of !== 'value' && f.targets[0].actual !== null ? ` = ${show(f.targets[0].of, f.targets[0].actual, f.unit)}` : '';
    const targets = f.targets.map((t) => `${t.level} ${showTarget(t, f.unit)} ${verdict(t.met)}`).join('; ');
    console.log(
      `  ${f.name}: ${show('value', f.value, f.unit)}${against}${checked}${targets ? ` — ${targets}` : ''}${f.unavailable ? ` [${f.unavailable}]` : ''}`,
    );
  }
  console.log(JSON.stringify({ bench, figures, detail: extra }));
}

/** A bench that could not measure anything here (a missing backend or interpreter) still reports, with the reason. */
export function skip(bench, reason, extra = {}) {
  console.log(`${bench} benchmarks skipped: ${reason}`);
  console.log(JSON.stringify({ bench, figures: [], skipped: reason, detail: extra }));
}
