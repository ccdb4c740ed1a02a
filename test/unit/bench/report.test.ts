// The bench figure contract: figures and their targets, the aggregation of repeated runs, and the --json document.
import { afterEach, describe, expect, it, vi } from 'vitest';
// @ts-expect-error bench/ is plain ESM JavaScript without type declarations
import { assemble, figure, machineInfo, report, spread, summarize } from '../../../bench/stats.mjs';
// @ts-expect-error bench/ is plain ESM JavaScript without type declarations
import { BenchDocumentSchema, BenchReportSchema } from '../../../bench/schema.mjs';

interface Target {
  level: string;
  of: string;
  op: string;
  limit: number;
  actual: number | null;
  met: boolean | null;
}
interface Figure {
  name: string;
  value: number | null;
  ratio: number | null;
  targets: Target[];
  met: boolean | null;
}
interface SummaryTarget {
  level: string;
  actual: { median: number; min: number; max: number } | null;
  met_runs: number;
  runs: number;
  met_every_run: boolean;
  median_met: boolean | null;
}
interface Summary {
  name: string;
  reported: number;
  value: { median: number; min: number; max: number } | null;
  ratio: { median: number; min: number; max: number } | null;
  targets: SummaryTarget[];
  met_every_run: boolean | null;
}
const fig = figure as (spec: Record<string, unknown>) => Figure;
const summarizeRuns = summarize as (reports: ({ figures: Figure[] } | null)[], repeat?: number) => Summary[];

/** The host start-up figure of one run: lbot's time against the floor, ≤ 3× required, ≤ 2× stretch. */
const hostRun = (value: number, baseline: number) =>
  fig({
    name: 'host.run',
    label: 'lbot run',
    unit: 'ms',
    value,
    baseline,
    baselineLabel: 'floor',
    target: { of: 'ratio', op: '<=', limit: 3 },
    stretch: { limit: 2 },
  });
const reportOf = (...figures: Figure[]) => ({ bench: 'host', figures, detail: {} });

afterEach(() => vi.restoreAllMocks());

describe('figure', () => {
  it('computes the ratio and checks required and stretch targets against it', () => {
    const f = hostRun(250, 100);
    expect(f.ratio).toBe(2.5);
    expect(f.targets.map((t) => [t.level, t.op, t.limit, t.met])).toEqual([
      ['required', '<=', 3, true],
      ['stretch', '<=', 2, false],
    ]);
    expect(f.met).toBe(true);
  });

  it('checks a share from below, a speedup as baseline / value and a plain value against its limit', () => {
    const share = fig({ name: 'serve.throughput', unit: 'runs/s', value: 20, baseline: 100, target: { of: 'share', op: '>=', limit: 0.25 } });
    expect([share.ratio, share.met]).toEqual([0.2, false]);
    const speedup = fig({ name: 'box.vs_srt', unit: 'ms', value: 4, baseline: 100, target: { of: 'speedup', op: '>=', limit: 20 } });
    expect([speedup.targets[0]?.actual, speedup.met]).toEqual([25, true]);
    const value = fig({ name: 'kb.bm25', unit: 'ms', value: 12, baseline: 1, target: { of: 'value', op: '<=', limit: 10 } });
    expect([value.targets[0]?.actual, value.met]).toEqual([12, false]);
  });

  it('leaves a target unmeasured when its baseline could not run', () => {
    const f = fig({ name: 'box.vs_srt', unit: 'ms', value: 4, baseline: null, target: { of: 'speedup', limit: 20 }, unavailable: 'srt is not installed' });
    expect([f.ratio, f.met, f.targets[0]?.op]).toEqual([null, null, '>=']);
  });

  it('refuses a figure without a unit, with an unusable name or without a numeric limit', () => {
    expect(() => fig({ name: 'a', unit: '', value: 1 })).toThrow(/unit/);
    expect(() => fig({ name: 'Host Run', unit: 'ms', value: 1 })).toThrow(/name/);
    expect(() => fig({ name: 'a', unit: 'ms', value: 1, target: { of: 'ratio', limit: 'x' } })).toThrow(/limit/);
  });
});

describe('report', () => {
  it("prints one final line that run.js's schema accepts", () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    (report as (b: string, f: Figure[], e: object) => void)('host', [hostRun(250, 100)], { run: { lbot_run_ms: 250 } });
    const parsed = BenchReportSchema.safeParse(JSON.parse(lines.at(-1) ?? ''));
    expect(parsed.success).toBe(true);
    expect(lines.some((l) => l.includes('host.run') && l.includes('required ≤ 3× met') && l.includes('stretch ≤ 2× MISSED'))).toBe(true);
  });

  it('prints the ratio of an informational figure against its baseline, with no verdict', () => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    const relay = fig({ name: 'mcp.relay_lines', unit: 'ms', value: 0.6, baseline: 0.48, baselineLabel: 'direct SDK client call' });
    (report as (b: string, f: Figure[], e: object) => void)('mcp', [relay], {});
    expect(lines).toContain('  mcp.relay_lines: 0.600 ms vs 0.480 ms (direct SDK client call) = 1.25×');
  });

  it('refuses a report line whose figure lacks its unit or carries an unknown target kind', () => {
    const f = hostRun(250, 100) as unknown as Record<string, unknown>;
    const { unit: _unit, ...noUnit } = f;
    expect(BenchReportSchema.safeParse(reportOf(noUnit as unknown as Figure)).success).toBe(false);
    const odd = { ...f, targets: [{ level: 'required', of: 'vibes', op: '<=', limit: 3, actual: 1, met: true }] };
    expect(BenchReportSchema.safeParse(reportOf(odd as unknown as Figure)).success).toBe(false);
  });
});

describe('aggregation over repeated runs', () => {
  it('gives the median with min and max of value and ratio', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spread([4, 1, 2, 3])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spread([])).toBeNull();
    const [s] = summarizeRuns([reportOf(hostRun(280, 100)), reportOf(hostRun(200, 100)), reportOf(hostRun(260, 100))]);
    expect(s?.reported).toBe(3);
    expect(s?.value).toEqual({ median: 260, min: 200, max: 280 });
    expect(s?.ratio).toEqual({ median: 2.6, min: 2, max: 2.8 });
  });

  it('counts a target met in every run only when each of the runs met it', () => {
    const all = summarizeRuns([reportOf(hostRun(280, 100)), reportOf(hostRun(200, 100)), reportOf(hostRun(260, 100))])[0];
    const required = all?.targets.find((t) => t.level === 'required');
    const stretch = all?.targets.find((t) => t.level === 'stretch');
    expect([required?.met_runs, required?.runs, required?.met_every_run, all?.met_every_run]).toEqual([3, 3, true, true]);
    expect([stretch?.met_runs, stretch?.met_every_run, stretch?.median_met]).toEqual([1, false, false]);

    // One of three runs over the limit: the median still meets the target, "every run" does not.
    const once = summarizeRuns([reportOf(hostRun(280, 100)), reportOf(hostRun(310, 100)), reportOf(hostRun(260, 100))])[0];
    expect([once?.targets[0]?.met_runs, once?.targets[0]?.median_met, once?.met_every_run]).toEqual([2, true, false]);
  });

  it('does not pass a target when a run failed to report', () => {
    const [s] = summarizeRuns([reportOf(hostRun(200, 100)), null, reportOf(hostRun(210, 100))], 3);
    expect([s?.reported, s?.targets[0]?.met_runs, s?.targets[0]?.runs, s?.met_every_run]).toEqual([2, 2, 3, false]);
  });
});

describe('the --json document', () => {
  const run = (n: number, figures: Figure[] | null) => ({
    run: n,
    ok: figures !== null,
    loadavg: [0.5, 0.4, 0.3],
    exit_code: figures === null ? 1 : 0,
    signal: null,
    duration_s: 1.5,
    error: figures === null ? 'exit_1' : null,
    report: figures === null ? null : reportOf(...figures),
  });
  const serveShare = (value: number) =>
    fig({ name: 'serve.throughput', unit: 'runs/s', value, baseline: 1000, baselineLabel: 'bare fastify', target: { of: 'share', op: '>=', limit: 0.25 } });
  const documentOf = (runs: ReturnType<typeof run>[], strict = false) =>
    (assemble as (input: object) => Record<string, unknown> & { exit_code: number; totals: Record<string, unknown> })({
      startedAt: '2026-12-02T19:00:00.000Z',
      finishedAt: '2026-12-02T19:05:00.000Z',
      command: { benches: ['host'], repeat: 3, strict },
      machine: { start: machineInfo(), end: machineInfo() },
      benches: [{ bench: 'host', script: 'bench/host.mjs', runs }],
    });

  it('validates against the schema, with the summary and the totals of three runs', () => {
    const doc = documentOf([
      run(1, [hostRun(200, 100), serveShare(300)]),
      run(2, [hostRun(220, 100), serveShare(200)]),
      run(3, [hostRun(210, 100), serveShare(280)]),
    ]);
    const parsed = BenchDocumentSchema.safeParse(doc);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(doc.totals).toMatchObject({ required: 2, required_met_every_run: 1, missed_required: ['serve.throughput'], failed: [] });
    // A missed target is reported, not an exit code.
    expect(doc.exit_code).toBe(0);
    expect(documentOf([run(1, [serveShare(200)]), run(2, [serveShare(300)]), run(3, [serveShare(300)])], true).exit_code).toBe(1);
  });

  it('exits 1 when a bench failed to run', () => {
    const doc = documentOf([run(1, [hostRun(200, 100)]), run(2, null), run(3, [hostRun(200, 100)])]);
    expect(BenchDocumentSchema.safeParse(doc).success).toBe(true);
    expect(doc.totals).toMatchObject({ failed: ['host'], missed_required: ['host.run'] });
    expect(doc.exit_code).toBe(1);
  });

  it('refuses a document without machine information', () => {
    const doc = documentOf([run(1, [hostRun(200, 100)]), run(2, [hostRun(200, 100)]), run(3, [hostRun(200, 100)])]);
    expect(BenchDocumentSchema.safeParse({ ...doc, machine: {} }).success).toBe(false);
  });
});
