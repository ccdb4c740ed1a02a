// Runner plugins run isolated (docs/host.md "The plugin boundary"): under plugins.isolation sandbox a
// hostile runner reaches nothing of the host but its stdio — not the data dir, the config, serve.token,
// a box socket, the network — while its proxy calls work; network only by manifest, narrowed by a
// binding; a plugin over its memory limit is killed and the run says why.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tmpSocketDir } from '../../../src/runtime/socket-dir.js';
import { sandboxSkipReason } from '../../helpers/sandbox.js';
import { withReason } from '../../helpers/skip.js';
import { errorOf, REPO_ROOT, reports, scenario, type Scenario } from './harness.js';

const HOSTILE = 'plugin:acme/hostile/default';
const skip = sandboxSkipReason();
const SECRET_FILES = ['lbot.db', 'lbot.config.json', 'serve.token'];

/** A listener on the host that counts who reached it. */
async function listen(where: { path: string } | { host: string; port: 0 }): Promise<{ server: net.Server; hits: () => number; port: number }> {
  let hits = 0;
  const server = net.createServer((socket) => {
    hits++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(where, resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return { server, hits: () => hits, port: typeof address === 'object' && address ? address.port : 0 };
}

/** The host's sensitive things the hostile runner goes for, and the run's targets naming them. */
async function bait(s: Scenario, opts: { writes: boolean }) {
  await writeFile(path.join(s.dataDir, 'serve.token'), 'tok-0123456789abcdef0123456789abcdef', { mode: 0o600 });
  await mkdir(path.join(s.dataDir, 'box', 'run'), { recursive: true, mode: 0o700 });
  const relay = await listen({ path: path.join(s.dataDir, 'box', 'run', `relay-${process.pid}.sock`) });
  await mkdir(tmpSocketDir(), { recursive: true, mode: 0o700 });
  const tmpRelay = await listen({ path: path.join(tmpSocketDir(), `isolation-test-${process.pid}-${Date.now()}.sock`) });
  const tcp = await listen({ host: '127.0.0.1', port: 0 });
  // Outside /tmp too: a path under the host's /tmp lands in the sandbox's private /tmp, never the host's.
  const mark = `escape-${process.pid}-${Date.now()}.txt`;
  const writes = opts.writes
    ? [path.join(s.plugins.dir('hostile'), mark), path.join(s.dataDir, mark), path.join(REPO_ROOT, 'dist', mark), path.join(REPO_ROOT, mark)]
    : [];
  const targets = {
    data_dir: s.dataDir,
    files: SECRET_FILES,
    cwd_relative: path.relative(s.root, s.dataDir),
    sockets: [String(relay.server.address()), String(tmpRelay.server.address())],
    tcp: { host: '127.0.0.1', port: tcp.port },
    writes,
  };
  return { targets, writes, hits: () => relay.hits() + tmpRelay.hits(), tcpHits: () => tcp.hits() };
}

async function runHostile(s: Scenario, targets: Record<string, unknown>, args: string[] = []) {
  const cfg = await s.writeJson(`hostile-${Date.now()}.json`, { targets });
  // LBOT_HOME names the data dir in lbot's env: the plugin's env must not carry it.
  const r = await s.lbot(
    ['--json', 'run', '--event', path.join('fixtures', 'events', 'msg.json'), '--runner', HOSTILE, '--config', cfg, ...args].map((a) =>
      a.startsWith('fixtures/') ? path.resolve(a) : a,
    ),
    { env: { LBOT_HOME: s.dataDir } },
  );
  return { ...r, report: (reports(r.stdout)[0] ?? {}) as Record<string, string> };
}

describe('runner plugin isolation', () => {
  it.skipIf(skip !== null)(
    withReason('under sandbox, every attempt of a hostile runner to reach the host fails, and its proxy calls still work', skip),
    async () => {
      const s = await scenario(['hostile']);
      await s.writeConfig({ plugins: { isolation: 'sandbox' } });
      const b = await bait(s, { writes: true });
      const r = await runHostile(s, b.targets);
      expect(r.exitCode, r.stderr).toBe(0);
      const attempts = Object.entries(r.report).filter(([k]) => /^(abs|lbot_home|ppid_cwd|proc_walk|socket|write):|^(tcp|list_data_dir)$/.test(k));
      // 3 files × 4 ways, 2 sockets, tcp, 4 writes, the data dir listing.
      expect(attempts.length, JSON.stringify(r.report)).toBe(SECRET_FILES.length * 4 + 2 + 1 + 4 + 1);
      // A write may be refused, or land in the sandbox's own tmpfs when the path lies under /tmp (a checkout in
      // /tmp puts the repository there): either way nothing reaches the host, which the existsSync checks prove.
      for (const [what, outcome] of attempts) expect(outcome, `${what}: ${outcome}`).toMatch(what.startsWith('write:') ? /^(denied: |ok)/ : /^denied: /);
      expect(b.hits()).toBe(0);
      expect(b.tcpHits()).toBe(0);
      for (const w of b.writes) expect(existsSync(w), w).toBe(false);
      // What it may do: write its own home, talk to the host through the proxy; hardened as the box is.
      expect(r.report.home_write).toMatch(/^ok/);
      expect(r.report.proxy).toBe('still works');
      expect(r.report.no_new_privs).toBe('ok: true');
      expect(r.report.seccomp).toBe('ok: true');
      if (process.getuid?.() === 0) expect(r.report.uid).toBe('65532');
      // lbot/sdk resolves without a module hook: through the sandbox's /node_modules/lbot link to lbot itself.
      expect(r.report.lbot_resolves).toBe(`ok: ${path.join(REPO_ROOT, 'package.json').slice(0, 80)}`);
      // The home is private to the installation, under the data dir but not the data dir itself.
      const homes = path.join(s.dataDir, 'plugin-sandbox', 'homes');
      expect(existsSync(homes)).toBe(true);
    },
  );

  it('control: unisolated (none), the same runner reads the database and the token and reaches the TCP port', async () => {
    const s = await scenario(['hostile']);
    await s.writeConfig({ plugins: { isolation: 'none' } });
    const b = await bait(s, { writes: false });
    const r = await runHostile(s, b.targets);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.report['abs:lbot.db']).toMatch(/^ok/);
    expect(r.report['abs:serve.token']).toMatch(/^ok/);
    expect(r.report['ppid_cwd:lbot.config.json']).toMatch(/^ok/);
    expect(r.report.tcp).toBe('ok: connected');
    expect(r.report.proxy).toBe('still works');
  });

  it.skipIf(skip !== null)(withReason('network only when the manifest declares it; a binding can take it away', skip), async () => {
    const s = await scenario(['hostile']);
    await s.writeConfig({ plugins: { isolation: 'sandbox' } });
    const tcp = await listen({ host: '127.0.0.1', port: 0 });
    const targets = { tcp: { host: '127.0.0.1', port: tcp.port } };
    expect((await runHostile(s, targets)).report.tcp).toMatch(/^denied/);
    await s.plugins.editYaml('hostile', 'manifest.yaml', (doc) => {
      (doc.spec as Record<string, unknown>).permissions = { network: true };
    });
    const granted = await runHostile(s, targets);
    expect(granted.report.tcp, granted.stderr).toBe('ok: connected');
    expect(tcp.hits()).toBe(1);
    const binding = await s.writeJson('offline.json', { binding_id: 'offline', runner_id: HOSTILE, network: false });
    const narrowed = await runHostile(s, targets, ['--binding', binding]);
    expect(narrowed.report.tcp, narrowed.stderr).toMatch(/^denied/);
    expect(tcp.hits()).toBe(1);
  });

  it.skipIf(skip !== null)(withReason('a plugin over plugins.limits.memory_mb is killed and the run reports the limit', skip), async () => {
    const s = await scenario(['hostile']);
    await s.writeConfig({ plugins: { isolation: 'sandbox', limits: { memory_mb: 96 } } });
    const r = await runHostile(s, { allocate_mb: 400 });
    expect(r.exitCode).not.toBe(0);
    const error = errorOf(r.stdout);
    expect(error?.code, r.stdout).toBe('runner.crashed');
    expect(String(error?.message)).toMatch(/killed for exceeding its memory limit of 96 MB \(plugins\.limits\.memory_mb\)/);
    // Within the limit the same runner completes.
    const ok = await runHostile(s, { allocate_mb: 16 });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.report.hoarded_mb).toBe('16');
  });
});
