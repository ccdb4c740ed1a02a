// A private PostgreSQL cluster for a bench (Debian's postgresql package; scripts/system-deps.sh installs it):
// initdb in a temp dir, trust auth on loopback, a free port; as root the server runs as the `postgres` user.
// LBOT_BENCH_DATABASE_URL instead names a server of your own (a database the bench may create databases on).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

function binDir() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

function serverUser() {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root without a postgres user');
  const [, , uid, gid] = line.split(':');
  return { name: 'postgres', uid: Number(uid), gid: Number(gid) };
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

/** Starts a cluster (or uses LBOT_BENCH_DATABASE_URL); resolves {url, stop()} or null with the reason in `why`. */
export async function startPostgres() {
  if (process.env.LBOT_BENCH_DATABASE_URL) return { url: process.env.LBOT_BENCH_DATABASE_URL, stop: async () => {} };
  const bin = binDir();
  if (!bin) return { why: 'no PostgreSQL server binaries (install the postgresql package, or set LBOT_BENCH_DATABASE_URL)' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-pg-'));
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const as = (tool, args) =>
    user
      ? execFileSync('runuser', ['-u', user.name, '--', path.join(bin, tool), ...args], { cwd: dir, stdio: 'pipe' })
      : execFileSync(path.join(bin, tool), args, { cwd: dir, stdio: 'pipe' });
  const port = await freePort();
  const data = path.join(dir, 'data');
  as('initdb', ['-D', data, '-U', 'lbot', '--auth=trust', '--no-sync']);
  as('pg_ctl', ['-D', data, '-w', '-l', path.join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`, 'start']);
  return {
    url: `postgres://lbot@127.0.0.1:${port}/postgres`,
    async stop() {
      try {
        as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A new empty database on the server of `url`; returns its URL. */
export async function createDatabase(url, name) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
