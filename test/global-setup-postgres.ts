// A private PostgreSQL cluster for the suite: initdb into a temp dir, one loopback port, its unix socket
// in that dir, trust auth on loopback only. Tests read its URL with inject('postgresUrl') and make a
// database of their own. Without a server the PostgreSQL tests are skipped with the reason, except
// under CI, where a cluster that cannot start fails the run.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://… of the superuser's `postgres` database, or null when no cluster could start. */
    postgresUrl: string | null;
    /** Why there is no cluster (shown on the skipped tests). */
    postgresSkipReason: string;
  }
}

const DIR_PREFIX = 'lbot-pg-';
/** A temp dir without a live server that is older than this is a leftover of a killed run. */
const STALE_MS = 10 * 60_000;

type Cluster = { dir: string; url: string; bin: string; asUser: string | null };

function run(label: string, cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // cwd: the server user may not be allowed into the directory the suite runs from
    execFile(cmd, args, { cwd, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${label} failed: ${(stderr || stdout || err.message).trim().slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

/** The directory holding initdb and pg_ctl: LBOT_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin, else PATH. */
function findBinDir(): string | null {
  const env = process.env['LBOT_PG_BINDIR'];
  if (env) return existsSync(path.join(env, 'initdb')) ? env : null;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+$/.test(v) && existsSync(path.join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

/** PostgreSQL refuses to run as root: as root, the server runs as the package's `postgres` user. */
function serverUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres' && uid && gid) return { name, uid: Number(uid), gid: Number(gid) };
  }
  throw new Error('running as root, and there is no `postgres` user to run the server as (install the postgresql package)');
}

function pg(cluster: Cluster, tool: string, args: string[], timeoutMs = 60_000): Promise<string> {
  const exe = path.join(cluster.bin, tool);
  return cluster.asUser === null
    ? run(tool, exe, args, cluster.dir, timeoutMs)
    : run(tool, 'runuser', ['-u', cluster.asUser, '--', exe, ...args], cluster.dir, timeoutMs);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

/** Removes clusters of earlier runs that were killed before their teardown (no live postmaster, old enough). */
function removeStaleDirs(): void {
  const tmp = os.tmpdir();
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = path.join(tmp, name);
    try {
      const pidFile = path.join(dir, 'data', 'postmaster.pid');
      const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : NaN;
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) continue;
      if (Date.now() - statSync(dir).mtimeMs < STALE_MS) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run is removing it
    }
  }
}

async function startCluster(): Promise<Cluster> {
  const bin = findBinDir();
  if (bin === null)
    throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) found; install the postgresql package (scripts/system-deps.sh does as root)');
  const user = serverUser();
  removeStaleDirs();
  const dir = mkdtempSync(path.join(os.tmpdir(), DIR_PREFIX));
  const cluster: Cluster = { dir, url: '', bin, asUser: user?.name ?? null };
  try {
    if (user) chownSync(dir, user.uid, user.gid);
    const data = path.join(dir, 'data');
    await pg(cluster, 'initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync', '--no-instructions']);
    // A port can be taken between probing and binding (other suites on the machine): try a few.
    let lastError: unknown = null;
    for (let attempt = 0; attempt < 4; attempt++) {
      const port = await freePort();
      const opts = [
        `-c listen_addresses=127.0.0.1`,
        `-c port=${port}`,
        `-c unix_socket_directories=${dir}`,
        '-c fsync=off',
        '-c synchronous_commit=off',
        '-c full_page_writes=off',
        '-c max_connections=200',
        '-c shared_buffers=32MB',
      ].join(' ');
      try {
        await pg(cluster, 'pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', path.join(dir, 'server.log'), '-o', opts]);
        cluster.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
        return cluster;
      } catch (err) {
        lastError = err;
        const log = existsSync(path.join(dir, 'server.log')) ? readFileSync(path.join(dir, 'server.log'), 'utf8') : '';
        if (!/Address already in use|could not bind/i.test(log)) break;
      }
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

let cluster: Cluster | null = null;

export async function setup(project: TestProject): Promise<void> {
  try {
    cluster = await startCluster();
    project.provide('postgresUrl', cluster.url);
    project.provide('postgresSkipReason', '');
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    // CI runs the PostgreSQL tests, never skips them.
    if (process.env['CI']) throw new Error(`CI needs a PostgreSQL cluster for the store tests: ${reason}`);
    project.provide('postgresUrl', null);
    project.provide('postgresSkipReason', `no PostgreSQL server: ${reason.split('\n')[0] ?? reason}`);
  }
}

export async function teardown(): Promise<void> {
  if (!cluster) return;
  const c = cluster;
  cluster = null;
  try {
    await pg(c, 'pg_ctl', ['stop', '-D', path.join(c.dir, 'data'), '-m', 'immediate', '-w', '-t', '30']);
  } finally {
    rmSync(c.dir, { recursive: true, force: true });
  }
}
