// Compares serve's CPU per run between two built checkouts, both up at once (not a bench of `npm run bench`).
//   node bench/compare-serve.mjs <checkout A> <checkout B> [--rounds N] [--burst N]
//     [--node-args-a|-b "FLAGS"] [--env-a|-b KEY=VALUE]…
// Each checkout starts its own `lbot serve` with the echo runner on a data dir of its own; after 1,000 untimed
// requests each, the client alternates bursts of requests (64 in flight) between the two and sums, per side,
// the CPU time serve and its runner used during that side's bursts (/proc/<pid>/stat). A machine whose speed
// drifts over seconds slows both sides alike, which two benches run one after the other cannot ensure.
// A checkout is a directory with `bin/lbot.js` and a built `dist/` (a `git worktree` with `npm run build`); the
// same checkout twice, with node flags or environment for one side, compares settings. serve's log goes to a
// pipe this process drains, as under a container runtime or a service manager.
import http from 'node:http';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './json-lines.mjs';
import { inFlight, percentile } from './stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CONCURRENCY = 64;
const WARMUP = 1000;
const TOKEN = 'compare-token';

function parseArgs(argv) {
  const opts = { checkouts: [], rounds: 8, burst: 400, nodeArgs: [[], []], env: [{}, {}] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const side = a.endsWith('-a') ? 0 : 1;
    if (a === '--rounds' || a === '--burst') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1) usage(`${a} takes a positive whole number`);
      opts[a.slice(2)] = n;
    } else if (a === '--node-args-a' || a === '--node-args-b') {
      opts.nodeArgs[side].push(...(argv[++i] ?? '').split(' ').filter(Boolean));
    } else if (a === '--env-a' || a === '--env-b') {
      const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(argv[++i] ?? '');
      if (!m) usage(`${a} takes KEY=VALUE`);
      opts.env[side][m[1]] = m[2];
    } else if (a.startsWith('--')) usage(`unknown flag ${a}`);
    else opts.checkouts.push(path.resolve(a));
  }
  if (opts.checkouts.length !== 2) usage('give two checkouts');
  return opts;
}

function usage(message) {
  process.stderr.write(
    `${message}\nusage: node bench/compare-serve.mjs <checkout A> <checkout B> [--rounds N] [--burst N] [--node-args-a|-b FLAGS] [--env-a|-b KEY=VALUE]\n`,
  );
  process.exit(2);
}

const opts = parseArgs(process.argv.slice(2));
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });
const event = JSON.parse(readFileSync(path.join(root, 'fixtures', 'events', 'msg.json'), 'utf8'));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'lbot-compare-serve-'));

function post(url, body) {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU time (user + system) of a process in ms. */
function cpuMs(pid, file = `/proc/${pid}/stat`) {
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

function descendants(pid) {
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

let sent = 0;
async function startServe(checkout, i) {
  const dir = path.join(tmp, String(i));
  cpSync(path.join(root, 'fixtures', 'runners', 'echo'), path.join(dir, 'plugins', 'echo'), { recursive: true });
  const args = [
    ...opts.nodeArgs[i],
    path.join(checkout, 'bin', 'lbot.js'),
    '--data-dir',
    path.join(dir, 'data'),
    '--plugins',
    path.join(dir, 'plugins'),
    '--json',
    'serve',
    '--port',
    '0',
  ];
  const env = { ...process.env, LBOT_API_TOKEN: TOKEN, LBOT__SERVE__MAX_CONCURRENT_RUNS: '256', LBOT__SERVE__MAX_RUNS_PER_PLUGIN: '256', ...opts.env[i] };
  const { child, url } = await startServer(args, { env, stderr: 'pipe' });
  const send = async () => {
    const body = JSON.stringify({ event: { ...event, event_id: `cmp-${sent}`, conversation_id: `cmp-conv-${sent++}` }, runner_id: 'plugin:acme/echo/default' });
    if ((await post(`${url}/v1/runs?wait=1`, body)) !== 200) throw new Error(`serve of ${checkout} failed a run`);
  };
  return { checkout, child, send, mainMs: 0, serveMs: 0, runnerMs: 0, secs: 0, runs: 0, latencies: [] };
}

async function load(send, count, latencies) {
  return await inFlight(CONCURRENCY, count, async () => {
    const t = performance.now();
    await send();
    latencies?.push(performance.now() - t);
  });
}

const sides = [];
try {
  for (const [i, checkout] of opts.checkouts.entries()) sides.push(await startServe(checkout, i));
  for (const side of sides) await load(side.send, WARMUP);
  for (let r = 0; r < opts.rounds; r++) {
    for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
      const runner = descendants(side.child.pid);
      const mainThread = () => cpuMs(side.child.pid, `/proc/${side.child.pid}/task/${side.child.pid}/stat`);
      const before = [cpuMs(side.child.pid), ...runner.map((p) => cpuMs(p))];
      const mainBefore = mainThread();
      side.secs += await load(side.send, opts.burst, side.latencies);
      const after = [cpuMs(side.child.pid), ...runner.map((p) => cpuMs(p))];
      side.mainMs += mainThread() - mainBefore;
      side.serveMs += after[0] - before[0];
      side.runnerMs += after.slice(1).reduce((a, b) => a + b, 0) - before.slice(1).reduce((a, b) => a + b, 0);
      side.runs += opts.burst;
    }
  }
  console.log(`serve CPU per run, ${opts.rounds} alternating bursts of ${opts.burst} runs per side, ${CONCURRENCY} in flight`);
  for (const [i, s] of sides.entries()) {
    const perRun = (ms) => (ms / s.runs).toFixed(3);
    console.log(
      `  ${'AB'[i]} ${s.checkout}: serve ${perRun(s.serveMs)} ms (main thread ${perRun(s.mainMs)} ms), runner ${perRun(s.runnerMs)} ms, ${Math.round(s.runs / s.secs)} runs/s, p50 ${percentile(s.latencies, 50).toFixed(1)} ms, p99 ${percentile(s.latencies, 99).toFixed(1)} ms`,
    );
  }
} finally {
  for (const s of sides) s.child.kill('SIGTERM');
  agent.destroy();
  rmSync(tmp, { recursive: true, force: true });
}
