// Box benchmark (issue 3): for `true` and `sh -c 'echo hi'`, an exec in a warm lbot session against a bare
// spawn (the floor), a fresh one-shot bwrap sandbox, a one-shot lbot exec, and `srt` from
// @anthropic-ai/sandbox-runtime (the peer). All baselines are measured in this same run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, lstatSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, fmt, median, ratio, report, skip } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const { ConfigSchema } = await import(path.join(root, 'dist/core/config.js'));
const { createBoxService } = await import(path.join(root, 'dist/runtime/box/service.js'));
const { argvToCommand } = await import(path.join(root, 'dist/core/box/shell.js'));

const WARM = Number(process.env.BENCH_WARM ?? 200);
const COLD = Number(process.env.BENCH_COLD ?? 20);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-box-'));
const CASES = [
  { name: 'true', argv: ['true'] },
  { name: "sh -c 'echo hi'", argv: ['sh', '-c', 'echo hi'] },
];

/** Spawns argv with piped stdout/stderr and resolves with the wall time once it has closed. */
function timedSpawn(argv, env = { PATH: '/usr/local/bin:/usr/bin:/bin' }) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env });
    let err = '';
    c.stdout.resume();
    c.stderr.on('data', (b) => (err += b));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`${argv.join(' ')} exited ${code}: ${err.trim().slice(0, 300)}`))));
  });
}

async function sample(n, fn) {
  for (let i = 0; i < Math.min(5, n); i++) await fn();
  const times = [];
  for (let i = 0; i < n; i++) times.push(await fn());
  return median(times);
}

function bwrapOneShot(argv) {
  const links = [];
  for (const p of ['/bin', '/sbin', '/lib', '/lib64']) {
    try {
      const st = lstatSync(p);
      links.push(...(st.isSymbolicLink() ? ['--symlink', readlinkSync(p), p] : ['--ro-bind', p, p]));
    } catch {
      // absent
    }
  }
  return [
    'bwrap',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    ...links,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--',
    ...argv,
  ];
}

// BENCH_BOX_LIMITS=rlimit measures without per-exec cgroup moves (each costs the kernel an RCU grace period).
const config = ConfigSchema.parse({ box: process.env.BENCH_BOX_LIMITS ? { bwrap: { limits: process.env.BENCH_BOX_LIMITS } } : {} }).box;
const box = createBoxService({ dataDir: path.join(tmp, 'data'), config });
const status = await box.status();
if (!status.available) {
  console.log(`box unavailable: ${status.connector_error}`);
  skip('box', `box unavailable: ${status.connector_error}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}
const srt = path.join(root, 'node_modules', '.bin', 'srt');
// The peer needs ripgrep and socat; the bench's own setup installs them (as root, with apt) when missing.
spawnSync('bash', [path.join(root, 'bench', 'peer-deps.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
let peerReason = existsSync(srt) ? null : 'the srt binary is not installed (npm i -D @anthropic-ai/sandbox-runtime@0.0.78)';
if (!peerReason) {
  try {
    await timedSpawn([srt, 'true'], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmp });
  } catch (err) {
    peerReason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  }
}

const rows = [];
try {
  for (const c of CASES) {
    const cmd = argvToCommand(c.argv);
    await box.exec({ session_id: 'bench', cmd: 'true' });
    const warm = await sample(WARM, async () => {
      const t = performance.now();
      const { result } = await box.exec({ session_id: 'bench', cmd });
      if (result.exit_code !== 0) throw new Error(`warm exec failed: ${result.stderr}`);
      return performance.now() - t;
    });
    const bare = await sample(WARM, () => timedSpawn(c.argv));
    const oneShotBwrap = await sample(COLD, () => timedSpawn(bwrapOneShot(c.argv)));
    const oneShotLbot = await sample(COLD, async () => {
      const t = performance.now();
      await box.exec({ cmd });
      return performance.now() - t;
    });
    const peer = peerReason
      ? null
      : await sample(COLD, () =>
          timedSpawn([srt, ...(c.argv[0] === 'sh' ? ['-c', c.argv[2]] : c.argv)], { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmp }),
        );
    rows.push({ case: c.name, warm_ms: warm, bare_ms: bare, oneshot_bwrap_ms: oneShotBwrap, oneshot_lbot_ms: oneShotLbot, srt_ms: peer });
  }
} finally {
  await box.removeSession('bench').catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}

console.log(`box backend: ${status.backend.name} (${status.backend.reason}); medians of ${WARM} warm / ${COLD} cold runs`);
for (const r of rows) {
  console.log(`\n${r.case}`);
  console.log(`  bare spawn (floor)        ${fmt(r.bare_ms)} ms`);
  console.log(`  lbot warm-session exec    ${fmt(r.warm_ms)} ms   ${ratio(r.warm_ms, r.bare_ms)}× floor (target ≤ 3×)`);
  console.log(`  fresh one-shot bwrap      ${fmt(r.oneshot_bwrap_ms)} ms   ${ratio(r.oneshot_bwrap_ms, r.bare_ms)}× floor`);
  console.log(`  lbot one-shot session     ${fmt(r.oneshot_lbot_ms)} ms   ${ratio(r.oneshot_lbot_ms, r.bare_ms)}× floor`);
  if (r.srt_ms === null) console.log(`  srt (peer)                peer unavailable: ${peerReason}`);
  else console.log(`  srt (peer)                ${fmt(r.srt_ms)} ms   warm exec is ${ratio(r.srt_ms, r.warm_ms)}× faster (target ≥ 20×)`);
}
const slug = (name) => (name === 'true' ? 'true' : 'sh');
const summary = {
  backend: status.backend.name,
  limits_mode: status.backend.limits_mode ?? null,
  cases: rows,
  peer: peerReason ? { available: false, reason: peerReason } : { available: true, package: '@anthropic-ai/sandbox-runtime@0.0.78' },
};
report(
  'box',
  rows.flatMap((r) => [
    figure({
      name: `box.warm_exec.${slug(r.case)}`,
      label: `warm-session exec, ${r.case}`,
      unit: 'ms',
      value: r.warm_ms,
      baseline: r.bare_ms,
      baselineLabel: 'bare spawn',
      target: { of: 'ratio', op: '<=', limit: 3 },
      stretch: { limit: 2 },
      note: `${status.backend.name}, limits ${status.backend.limits_mode ?? 'n/a'}`,
    }),
    figure({
      name: `box.vs_srt.${slug(r.case)}`,
      label: `warm-session exec vs srt, ${r.case}`,
      unit: 'ms',
      value: r.warm_ms,
      baseline: r.srt_ms,
      baselineLabel: 'srt (@anthropic-ai/sandbox-runtime)',
      target: { of: 'speedup', op: '>=', limit: 20 },
      unavailable: peerReason ? `peer unavailable: ${peerReason}` : null,
    }),
    figure({
      name: `box.oneshot.${slug(r.case)}`,
      label: `one-shot lbot exec, ${r.case}`,
      unit: 'ms',
      value: r.oneshot_lbot_ms,
      baseline: r.bare_ms,
      baselineLabel: 'bare spawn',
    }),
    figure({
      name: `box.oneshot_bwrap.${slug(r.case)}`,
      label: `fresh one-shot bwrap, ${r.case}`,
      unit: 'ms',
      value: r.oneshot_bwrap_ms,
      baseline: r.bare_ms,
      baselineLabel: 'bare spawn',
    }),
  ]),
  summary,
);
