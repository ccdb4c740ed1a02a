// The conformance report: totals, the exit decision (warnings fail only with --strict), a text table
// and JUnit XML for CI.
import type { CheckResult } from './checks.js';

export type ConformanceReport = {
  plugin_dir: string;
  plugin: string | null;
  strict: boolean;
  ok: boolean;
  counts: { pass: number; fail: number; warn: number; blocked: number; na: number };
  checks: CheckResult[];
  duration_ms: number;
};

/** True when a check result fails the suite: errors always, warnings only when strict. */
export function isFailing(c: CheckResult, strict: boolean): boolean {
  return c.status === 'fail' && (c.severity === 'error' || strict);
}

export function buildReport(opts: { pluginDir: string; plugin: string | null; strict: boolean; checks: CheckResult[]; durationMs: number }): ConformanceReport {
  const { checks, strict } = opts;
  const counts = { pass: 0, fail: 0, warn: 0, blocked: 0, na: 0 };
  for (const c of checks) {
    if (c.status === 'pass') counts.pass++;
    else if (c.status === 'blocked') counts.blocked++;
    else if (c.status === 'n/a') counts.na++;
    else if (isFailing(c, strict)) counts.fail++;
    else counts.warn++;
  }
  return { plugin_dir: opts.pluginDir, plugin: opts.plugin, strict, ok: counts.fail === 0, counts, checks, duration_ms: Math.round(opts.durationMs) };
}

/** The status word printed for a check: warnings that do not fail the suite read WARN. */
export function statusLabel(c: CheckResult, strict: boolean): string {
  if (c.status === 'fail') return isFailing(c, strict) ? 'FAIL' : 'WARN';
  return c.status.toUpperCase();
}

/** One line per check plus a summary, for people. */
export function renderText(r: ConformanceReport): string {
  const width = Math.max(...r.checks.map((c) => c.id.length));
  const lines = r.checks.map((c) => `${statusLabel(c, r.strict).padEnd(7)} ${c.id.padEnd(width)}  ${c.evidence}`);
  const { pass, fail, warn, blocked, na } = r.counts;
  lines.push(
    '',
    `${r.plugin ?? r.plugin_dir}: ${pass} passed, ${fail} failed, ${warn} warning(s), ${blocked} blocked, ${na} n/a${
      r.ok
        ? ''
        : ` — failing: ${r.checks
            .filter((c) => isFailing(c, r.strict))
            .map((c) => c.id)
            .join(', ')}`
    }`,
  );
  return lines.join('\n');
}

function xml(text: string): string {
  // Characters XML 1.0 cannot carry at all are dropped; the rest are escaped.
  return (
    text
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
  );
}

/** JUnit XML (one testsuite, one testcase per check) as CI systems read it. */
export function renderJunit(r: ConformanceReport): string {
  const name = r.plugin ?? r.plugin_dir;
  const seconds = (r.duration_ms / 1000).toFixed(3);
  const skipped = r.counts.blocked + r.counts.na;
  const cases = r.checks.map((c) => {
    const head = `    <testcase classname="${xml(`lbot.conformance.${name}`)}" name="${xml(c.id)}" time="0">`;
    let body: string;
    if (c.status === 'pass') body = `      <system-out>${xml(c.evidence)}</system-out>`;
    else if (c.status === 'blocked' || c.status === 'n/a') body = `      <skipped message="${xml(`${c.status.toUpperCase()}: ${c.evidence}`)}"/>`;
    else if (isFailing(c, r.strict)) body = `      <failure message="${xml(c.title)}" type="${c.severity}">${xml(c.evidence)}</failure>`;
    else body = `      <system-out>${xml(`WARN: ${c.evidence}`)}</system-out>`;
    return `${head}\n${body}\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="lbot runner test" tests="${r.checks.length}" failures="${r.counts.fail}" errors="0" skipped="${skipped}" time="${seconds}">`,
    `  <testsuite name="${xml(name)}" tests="${r.checks.length}" failures="${r.counts.fail}" errors="0" skipped="${skipped}" time="${seconds}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
