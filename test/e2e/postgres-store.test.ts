// The built binary on PostgreSQL run stores (--store / LBOT_DATABASE_URL) against the suite's private
// cluster: `lbot db status|migrate`, a replayed run and a served run recorded in PostgreSQL and readable
// from any data dir that points at it, and bad URLs refused with their codes and exit statuses.
import { existsSync } from 'node:fs';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_EVENTS } from '../helpers/plugins.js';
import { freshDatabase, postgresSkipReason, postgresUrl } from '../helpers/postgres.js';
import { startServe, type ServeProcess } from '../helpers/serve.js';
import { withReason } from '../helpers/skip.js';
import { done, REPO_ROOT, say, scenario, SCRIPTED, type CliResult } from './host/harness.js';

type Db = Awaited<ReturnType<typeof freshDatabase>>;
const dbs: Db[] = [];
const serves: ServeProcess[] = [];

afterEach(async () => {
  for (const s of serves.splice(0)) await s.stop('SIGKILL').catch(() => undefined);
  for (const d of dbs.splice(0)) await d.drop();
});

async function database(): Promise<Db> {
  const d = await freshDatabase();
  dbs.push(d);
  return d;
}

const parse = (r: CliResult): Record<string, unknown> => {
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

describe('--store with a malformed value', () => {
  it('is a usage error (exit 2, invalid_argument) from the flag and from LBOT_DATABASE_URL, and nothing is opened', async () => {
    const s = await scenario();
    for (const r of [
      await s.lbot(['--json', '--store', 'mysql://root@localhost/db', 'runs', 'list']),
      await s.lbot(['--json', 'runs', 'list'], { env: { LBOT_DATABASE_URL: '/var/lib/lbot.db' } }),
    ]) {
      expect(r.exitCode).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'invalid_argument' } });
      expect(r.stderr).toContain('LBOT_DATABASE_URL');
    }
    expect(existsSync(path.join(s.dataDir, 'lbot.db'))).toBe(false);
  });
});

describe.skipIf(postgresUrl === null)(withReason('PostgreSQL run stores from the CLI', postgresUrl === null && postgresSkipReason), () => {
  it('db status reads without writing; db migrate applies every step once, also when two run at the same time', async () => {
    const s = await scenario();
    const d = await database();
    const before = parse(await s.lbot(['--json', '--store', d.url, 'db', 'status']));
    expect(before).toMatchObject({ backend: 'postgres', schema_version: 0, applied: [], applied_now: [] });
    const latest = before.latest_version;
    expect(typeof latest === 'number' && latest > 0).toBe(true);
    expect(parse(await s.lbot(['--json', '--store', d.url, 'db', 'status'])).schema_version).toBe(0);

    const both = await Promise.all([s.lbot(['--json', '--store', d.url, 'db', 'migrate']), s.lbot(['--json', '--store', d.url, 'db', 'migrate'])]);
    const reports = both.map(parse);
    const appliedNow = reports.flatMap((r) => (Array.isArray(r.applied_now) ? r.applied_now : []));
    expect(appliedNow).toHaveLength(Number(latest));
    for (const r of reports) expect(r).toMatchObject({ schema_version: latest });

    const again = parse(await s.lbot(['--json', 'db', 'migrate'], { env: { LBOT_DATABASE_URL: d.url } }));
    expect(again).toMatchObject({ backend: 'postgres', schema_version: latest, applied_now: [] });
    expect((await s.lbot(['--store', d.url, 'db', 'status'])).stdout).toContain(`schema version ${String(latest)} of ${String(latest)}, up to date`);
  });

  it('a replayed run is recorded in PostgreSQL, readable from another data dir, and absent from the local SQLite file', async () => {
    const s = await scenario();
    const other = await scenario();
    const d = await database();
    const r = await s.run([say('stored in postgres'), done()], { json: true, args: ['--store', d.url] });
    expect(r.exitCode, r.stderr).toBe(0);

    const remote = await other.jsonList(['--store', d.url, 'runs', 'list']);
    expect(remote).toHaveLength(1);
    expect(remote[0]).toMatchObject({ status: 'completed' });
    const runId = String(remote[0]?.run_id);
    const shown = await other.json(['--store', d.url, 'runs', 'show', runId]);
    expect(shown).toMatchObject({ run_id: runId, status: 'completed' });
    const transcript = await other.lbot(['--json', '--store', d.url, 'transcript', 'page', '--conversation', 'c1']);
    expect(transcript.exitCode, transcript.stderr).toBe(0);
    expect(transcript.stdout).toContain('stored in postgres');

    expect(await s.jsonList(['runs', 'list'])).toEqual([]);
  });

  it('lbot serve --store records served runs in PostgreSQL; a second serve on another data dir reads them', async () => {
    const a = await scenario();
    const b = await scenario();
    const d = await database();
    const first = await startServe({ dataDir: a.dataDir, pluginsDir: a.plugins.pluginsDir, args: [], env: { LBOT_DATABASE_URL: d.url } });
    serves.push(first);
    const event = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, 'msg.json'), 'utf8')) as Record<string, unknown>;
    const started = await first.request('POST', '/v1/runs', { event, runner_id: SCRIPTED, config: { script: [say('served'), done()] } });
    expect(started.status, started.text).toBe(202);
    const runId = (started.json as { run_id: string }).run_id;
    expect(await first.waitRun(runId)).toMatchObject({ status: 'completed' });

    const second = await startServe({ dataDir: b.dataDir, pluginsDir: b.plugins.pluginsDir, env: { LBOT_DATABASE_URL: d.url } });
    serves.push(second);
    const seen = await second.request('GET', `/v1/runs/${runId}`);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.json).toMatchObject({ run_id: runId, status: 'completed' });
    const results = await second.request('GET', `/v1/runs/${runId}/results`);
    expect(results.text).toContain('served');
  });

  it('lbot kb --store keeps knowledge bases in PostgreSQL: built from one data dir, searched and removed from another', async () => {
    const a = await scenario();
    const b = await scenario();
    const d = await database();
    const tree = path.join(a.root, 'kb');
    await cp(path.join(REPO_ROOT, 'fixtures/skills/real'), tree, { recursive: true });
    parse(await a.lbot(['--json', '--store', d.url, 'kb', 'create', 'docs']));
    const added = await a.lbot(['--json', '--store', d.url, 'kb', 'add', 'docs', tree]);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({ failed: 0 });
    const listed = await b.lbot(['--json', '--store', d.url, 'kb', 'list']);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ kb_id: 'docs', origin: 'store' }]);
    const found = parse(await b.lbot(['--json', '--store', d.url, 'kb', 'search', 'docs', 'animated gif']));
    const results = Array.isArray(found.results) ? (found.results as Array<{ document_id: string }>) : [];
    expect(results.length).toBeGreaterThan(0);
    expect(results[0]?.document_id).toMatch(/slack-gif-creator/);
    expect(JSON.parse((await a.lbot(['--json', 'kb', 'list'])).stdout)).toEqual([]);
    parse(await b.lbot(['--json', '--store', d.url, 'kb', 'rm', 'docs']));
    expect(JSON.parse((await a.lbot(['--json', '--store', d.url, 'kb', 'list'])).stdout)).toEqual([]);
  });

  it('an unreachable server is store.unavailable (exit 6) naming the URL without its password', async () => {
    const s = await scenario();
    const r = await s.lbot(['--json', '--store', 'postgres://lbot:hunter2@127.0.0.1:1/lbot', 'runs', 'list']);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stdout).not.toContain('hunter2');
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: 'store.unavailable', retryable: true } });
  });
});
