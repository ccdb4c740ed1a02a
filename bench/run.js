// `npm run bench`: runs every benchmark script in this folder in turn (each compares lbot against a baseline
// it measures in the same run) and prints their reports, then one summary of every figure.
//   npm run bench -- host box        a subset, by name
//   npm run bench -- --repeat 3      each bench 3 times: per figure the median with min–max, met in every run
//   npm run bench -- --json [FILE]   the whole result as one JSON document (bench/schema.mjs) on stdout, or in
//                                    FILE; on stdout the human output goes to stderr
//   npm run bench -- --strict        exit 1 when a required target is not met in every run
// Exit code: 0 when every bench ran, 1 when one failed to run (or, with --strict, missed a required target).
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { BenchDocumentSchema, BenchReportSchema } from './schema.mjs';
import { assemble, machineInfo, show, showMachine, showTarget } from './stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Modules the benches share; a bench's helper process is named `*-child.mjs`. */
const helpers = new Set(['stats.mjs', 'schema.mjs', 'postgres.mjs', 'json-lines.mjs']);
/** Tools run by hand, not by `npm run bench`. */
const tools = new Set(['compare-serve.mjs']);
const available = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && !f.endsWith('-child.mjs') && !helpers.has(f) && !tools.has(f))
  .map((f) => f.replace(/\.mjs$/, ''))
  .sort();
const TIMEOUT_MS = 10 * 60_000;
/** A report line is a few KB; anything far larger is not one. */
const MAX_REPORT_BYTES = 1 << 20;
const MAX_REPEAT = 20;

function usage(message) {
  process.stderr.write(`${message}\nusage: node bench/run.js [--repeat N] [--json [FILE]] [--strict] [${available.join(' | ')} ...]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { names: [], repeat: 1, json: false, jsonFile: null, strict: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, null];
    if (flag === '--repeat') {
      const v = inline ?? argv[++i];
      if (!/^\d+$/.test(v ?? '') || Number(v) < 1 || Number(v) > MAX_REPEAT) usage(`--repeat takes a whole number from 1 to ${MAX_REPEAT}`);
      opts.repeat = Number(v);
    } else if (flag === '--json') {
      opts.json = true;
      // The next word is the output file unless it is a flag or a bench's name.
      const next = inline ?? (argv[i + 1] && !argv[i + 1].startsWith('--') && !available.includes(argv[i + 1]) ? argv[++i] : null);
      if (next !== null && next !== '-') opts.jsonFile = path.resolve(next);
    } else if (flag === '--strict') opts.strict = true;
    else if (flag === '--help' || flag === '-h') usage('runs lbot benchmarks against baselines measured in the same run');
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (!available.includes(a)) usage(`no bench named ${a}`);
    else opts.names.push(a);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const selected = opts.names.length ? available.filter((n) => opts.names.includes(n)) : available;
// With the document on stdout, everything a person reads goes to stderr.
const human = opts.json && !opts.jsonFile ? process.stderr : process.stdout;
const say = (line = '') => human.write(`${line}\n`);

/** Runs one bench script, forwarding its output, and returns the run with its report line checked against the schema. */
function runOnce(name, run) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const loadavg = os.loadavg().map((x) => Number(x.toFixed(2)));
    const child = spawn(process.execPath, [path.join(here, `${name}.mjs`)], { stdio: ['ignore', 'pipe', 'inherit'], timeout: TIMEOUT_MS });
    let last = null;
    let tooLarge = false;
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      human.write(`${line}\n`);
      if (!line.startsWith('{"bench"')) return;
      if (Buffer.byteLength(line) > MAX_REPORT_BYTES) tooLarge = true;
      else last = line;
    });
    let spawnError = null;
    child.on('error', (err) => (spawnError = err));
    child.on('close', (code, signal) => {
      const duration_s = Number(((performance.now() - t0) / 1000).toFixed(1));
      let report = null;
      let error = spawnError ? `spawn_failed: ${spawnError.message}` : null;
      if (!error && last !== null) {
        try {
          const parsed = BenchReportSchema.safeParse(JSON.parse(last));
          if (parsed.success) report = parsed.data;
          else error = `report_invalid: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`;
        } catch (err) {
          error = `report_invalid: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      if (!error && report === null) error = tooLarge ? `report_too_large: over ${MAX_REPORT_BYTES} bytes` : 'report_missing: no {"bench":…} line on stdout';
      if (code !== 0) error = `exit_${code ?? signal}${error ? `; ${error}` : ''}`;
      else if (report !== null && report.bench !== name) error = `report_invalid: the report names bench ${report.bench}`;
      const ok = code === 0 && error === null;
      resolve({ run, ok, loadavg, exit_code: code, signal: signal ?? null, duration_s, error, report });
    });
  });
}

const pad = (s, n) => (s.length >= n ? `${s} ` : s.padEnd(n));
/** `median (min–max)`, the unit once. */
function showSpread(of, s, unit) {
  if (s === null) return '—';
  const bare = (x) => show(of, x, unit).replace(/ \S+$/, '');
  return s.min === s.max ? show(of, s.median, unit) : `${show(of, s.median, unit)} (${bare(s.min)}–${bare(s.max)})`;
}

function printSummary(doc) {
  const n = doc.command.repeat;
  say();
  say(`== summary: ${n === 1 ? 'one run' : `median (min–max) of ${n} runs`} per figure`);
  say(`   start: ${showMachine(doc.machine.start)}`);
  say(`   end:   ${showMachine(doc.machine.end)}`);
  say(`${pad('figure', 28)}${pad('lbot', 28)}${pad('baseline', 28)}${pad('checked', 24)}${pad('target', 22)}every run`);
  for (const b of doc.benches) {
    if (b.skipped) say(`${pad(b.bench, 28)}skipped: ${b.skipped}`);
    const failed = b.runs.filter((r) => !r.ok);
    for (const r of failed) say(`${pad(b.bench, 28)}run ${r.run} FAILED: ${r.error}`);
    for (const f of b.summary) {
      const checkedBy = f.targets[0]?.of ?? (f.ratio ? 'ratio' : null);
      const checked = checkedBy === 'value' || checkedBy === null ? '' : showSpread(checkedBy, f.targets[0]?.actual ?? f.ratio, f.unit);
      const rows = f.targets.length ? f.targets : [null];
      rows.forEach((t, i) => {
        const head =
          i === 0
            ? `${pad(f.name, 28)}${pad(showSpread('value', f.value, f.unit), 28)}${pad(showSpread('value', f.baseline, f.unit), 28)}${pad(checked, 24)}`
            : ' '.repeat(108);
        const verdict = t === null ? '' : `${t.met_runs}/${t.runs}${t.met_every_run ? ' met' : t.actual === null ? ' not measured' : ' MISSED'}`;
        say(`${head}${t === null ? '' : pad(`${showTarget(t, f.unit)} ${t.level}`, 22)}${verdict}${i === 0 && f.unavailable ? `  [${f.unavailable}]` : ''}`);
      });
    }
  }
  const t = doc.totals;
  say();
  say(
    `required targets met in every run: ${t.required_met_every_run} of ${t.required}` +
      (t.missed_required.length ? `; missed: ${t.missed_required.join(', ')}` : '') +
      (t.unmeasured_required.length ? `; not measured: ${t.unmeasured_required.join(', ')}` : '') +
      (t.failed.length ? `; benches that failed to run: ${t.failed.join(', ')}` : ''),
  );
}

const startedAt = new Date().toISOString();
const start = machineInfo();
say(`bench: ${selected.join(', ')}; ${opts.repeat} run${opts.repeat === 1 ? '' : 's'} each`);
say(`machine at start: ${showMachine(start)}`);
const collected = selected.map((name) => ({ bench: name, script: `bench/${name}.mjs`, runs: [] }));
// Repeats go round the whole selection, so a load swing on the machine spreads over every bench.
for (let run = 1; run <= opts.repeat; run++) {
  for (const b of collected) {
    say(`\n== ${b.bench}.mjs${opts.repeat > 1 ? ` (run ${run} of ${opts.repeat})` : ''}`);
    const r = await runOnce(b.bench, run);
    say(`${b.bench}.mjs ${r.ok ? 'done' : `failed: ${r.error}`} in ${r.duration_s} s (load before: ${r.loadavg.join(' ')})`);
    b.runs.push(r);
  }
}
const end = machineInfo();
say(`\nmachine at end: ${showMachine(end)}`);
const doc = BenchDocumentSchema.parse(
  assemble({
    startedAt,
    finishedAt: new Date().toISOString(),
    command: { benches: selected, repeat: opts.repeat, strict: opts.strict },
    machine: { start, end },
    benches: collected,
  }),
);
printSummary(doc);
if (opts.jsonFile) {
  writeFileSync(opts.jsonFile, `${JSON.stringify(doc, null, 2)}\n`);
  say(`wrote ${opts.jsonFile}`);
} else if (opts.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
process.exitCode = doc.exit_code;
