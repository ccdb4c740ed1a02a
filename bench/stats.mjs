// Small statistics helpers shared by the benchmarks.
import os from 'node:os';
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}
export const median = (values) => percentile(values, 50);
export const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
/**
 * Calls `fn` `count` times with `concurrency` calls in flight, as a load client does; stops starting calls once
 * `more()` is false. Resolves the seconds it took.
 */
export async function inFlight(concurrency, count, fn, more = () => true) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count && more()) {
        next++;
        await fn();
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

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

/** ` = 2.5×` or ` = 27%`: the quantity the required target checks, or an informational figure's ratio to its baseline. */
function checkedPart(f) {
  const t = f.targets[0];
  if (t) return t.of !== 'value' && t.actual !== null ? ` = ${show(t.of, t.actual, f.unit)}` : '';
  return f.ratio !== null ? ` = ${show('ratio', f.ratio, f.unit)}` : '';
}

/** Prints each figure on one line, then the bench's one JSON line (the line run.js reads). */
export function report(bench, figures, extra = {}) {
  console.log(`figures (${bench}):`);
  for (const f of figures) {
    const against = f.baseline === null ? '' : ` vs ${show('value', f.baseline, f.unit)} (${f.baseline_label ?? 'baseline'})`;
    const checked = checkedPart(f);
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

// Aggregation over repeated runs (`npm run bench -- --repeat N`).

/** The median (the mean of the two middle values for an even count), min and max; null without values. */
export function spread(values) {
  const xs = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  const mid = xs.length >> 1;
  const med = xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
  return { median: round(med), min: round(xs[0]), max: round(xs[xs.length - 1]) };
}

/**
 * Per figure over `repeat` runs of one bench (`reports[i]` is run i's report, or null when that run failed): the
 * spread of value, baseline and ratio, and for each target how many runs met it. A target counts as met in every
 * run only when it was measured and met in all `repeat` runs, so a failed or unmeasured run never passes.
 */
export function summarize(reports, repeat = reports.length) {
  const byName = new Map();
  for (const r of reports) {
    for (const f of r?.figures ?? []) {
      if (!byName.has(f.name)) byName.set(f.name, []);
      byName.get(f.name).push(f);
    }
  }
  return [...byName.entries()].map(([name, runs]) => {
    const last = runs[runs.length - 1];
    const targets = last.targets.map((t) => {
      const same = runs.map((f) => f.targets.find((u) => u.level === t.level)).filter(Boolean);
      const actual = spread(same.map((u) => u.actual));
      const metRuns = same.filter((u) => u.met === true).length;
      const medianMet = actual === null ? null : t.op === '<=' ? actual.median <= t.limit : actual.median >= t.limit;
      return {
        level: t.level,
        of: t.of,
        op: t.op,
        limit: t.limit,
        actual,
        met_runs: metRuns,
        runs: repeat,
        met_every_run: metRuns === repeat,
        median_met: medianMet,
      };
    });
    const required = targets.find((t) => t.level === 'required');
    return {
      name,
      label: last.label,
      unit: last.unit,
      baseline_label: last.baseline_label,
      reported: runs.length,
      value: spread(runs.map((f) => f.value)),
      baseline: spread(runs.map((f) => f.baseline)),
      ratio: spread(runs.map((f) => f.ratio)),
      targets,
      met_every_run: required ? required.met_every_run : null,
      unavailable: runs.map((f) => f.unavailable).find((u) => u) ?? null,
    };
  });
}

/** The counts a person (and `--strict`) reads first: required targets met in every run, missed, not measured. */
export function totals(benches) {
  const out = { benches: benches.length, failed: [], skipped: [], required: 0, required_met_every_run: 0, missed_required: [], unmeasured_required: [] };
  for (const b of benches) {
    if (b.runs.some((r) => !r.ok)) out.failed.push(b.bench);
    if (b.skipped) out.skipped.push(b.bench);
    for (const f of b.summary) {
      const t = f.targets.find((u) => u.level === 'required');
      if (!t) continue;
      out.required++;
      if (t.met_every_run) out.required_met_every_run++;
      else if (t.actual === null) out.unmeasured_required.push(f.name);
      else out.missed_required.push(f.name);
    }
  }
  return out;
}

/** What the figures were measured on: printed at the start and the end of `npm run bench`, kept in its document. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    at: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
    cores: cpus.length,
    cpu_model: (cpus[0]?.model ?? 'unknown').trim(),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    arch: process.arch,
    total_mem_mb: Math.round(os.totalmem() / 2 ** 20),
    free_mem_mb: Math.round(os.freemem() / 2 ** 20),
  };
}
export const showMachine = (m) =>
  `load ${m.loadavg.join(' ')} on ${m.cores} cores (${m.cpu_model}), Node ${m.node}, ${m.platform}, ${m.free_mem_mb} of ${m.total_mem_mb} MB free`;

/**
 * The `--json` document from what run.js collected: `benches` is [{ bench, script, runs }], each run
 * { run, ok, exit_code, signal, duration_s, error, report }. Exit code 1 when a bench failed to run, or with
 * `strict` when a required target was not met in every run; a missed target alone is reported, not an error.
 */
export function assemble({ startedAt, finishedAt, command, machine, benches }) {
  const full = benches.map((b) => ({
    bench: b.bench,
    script: b.script,
    skipped: b.runs.map((r) => r.report?.skipped).find((s) => s) ?? null,
    runs: b.runs,
    summary: summarize(
      b.runs.map((r) => (r.ok ? r.report : null)),
      command.repeat,
    ),
  }));
  const t = totals(full);
  const missed = t.missed_required.length + t.unmeasured_required.length > 0;
  return {
    schema: 'lbot.bench/v1',
    started_at: startedAt,
    finished_at: finishedAt,
    command,
    machine,
    benches: full,
    totals: t,
    exit_code: t.failed.length > 0 || (command.strict && missed) ? 1 : 0,
  };
}
