// Secrets on disk: the data dir is 0700 and the database (with its WAL sidecars), the config, the serve
// token and record cassettes are 0600 after the commands that write them, under a umask of 022 that
// would otherwise leave them world-readable. Old world-readable files and dirs are tightened.
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../../helpers/serve.js';
import { api, done, REPO_ROOT, say, scenario, SCRIPTED } from './harness.js';

let savedUmask = 0;
beforeAll(() => {
  // Children inherit it: every lbot below starts with the common default umask.
  savedUmask = process.umask(0o022);
});
afterAll(() => {
  process.umask(savedUmask);
});

const modeOf = (file: string): number => statSync(file).mode & 0o777;
const octal = (n: number) => `0${n.toString(8)}`;

/** Asserts that every file exists (unless `optional`) and that neither group nor others have any access to it. */
function expectPrivate(files: string[], optional: string[] = []): void {
  for (const f of [...files, ...optional.filter((o) => existsSync(o))]) {
    expect(existsSync(f), `${f} exists`).toBe(true);
    expect(octal(modeOf(f) & 0o077), `${f} is ${octal(modeOf(f))}`).toBe('00');
  }
}

const DB_FILES = (dataDir: string) => ['lbot.db', 'lbot.db-wal', 'lbot.db-shm'].map((f) => path.join(dataDir, f));
/** After the last connection closes SQLite folds the WAL back and removes the sidecars; while open they exist. */
const DB_SIDECARS = (dataDir: string) => DB_FILES(dataDir).slice(1);

describe('files that hold secrets are private to their owner (umask 022)', () => {
  it('lbot run: a data dir it creates is 0700 and lbot.db, -wal and -shm are 0600', async () => {
    const s = await scenario();
    const fresh = path.join(s.root, 'fresh', 'data');
    const r = await s.lbot(
      [
        '--data-dir',
        fresh,
        '--plugins',
        s.plugins.pluginsDir,
        'run',
        '--event',
        path.join(REPO_ROOT, 'fixtures', 'events', 'msg.json'),
        '--runner',
        SCRIPTED,
        '--config',
        await s.writeJson('cfg.json', { script: [say('secret reply'), done()] }),
      ],
      { globals: false },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(octal(modeOf(fresh))).toBe('0700');
    expectPrivate([path.join(fresh, 'lbot.db')], DB_SIDECARS(fresh));
  });

  it('lbot run: an existing world-readable data dir, database and config of this user are tightened', async () => {
    const s = await scenario();
    await chmod(s.dataDir, 0o755);
    await s.writeConfig({ models: [{ id: 'm-fake', provider: 'fake', reply: 'PONG', api_key: 'sk-test-SECRET123' }] });
    await chmod(path.join(s.dataDir, 'lbot.config.json'), 0o644);
    const first = await s.run([say('one'), done()]);
    expect(first.exitCode, first.stderr).toBe(0);
    for (const f of DB_FILES(s.dataDir)) if (existsSync(f)) await chmod(f, 0o644);
    await chmod(s.dataDir, 0o777);
    const r = await s.run([api('models.invoke', { model_id: 'm-fake', messages: [{ role: 'user', content: 'hi' }] }), done()], {
      config: {},
      args: ['--binding', await s.writeJson('binding.json', { binding_id: 'b1', runner_id: SCRIPTED, resource_policy: { allowed_model_uuids: ['m-fake'] } })],
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(octal(modeOf(s.dataDir))).toBe('0700');
    expectPrivate([path.join(s.dataDir, 'lbot.db'), path.join(s.dataDir, 'lbot.config.json')], DB_SIDECARS(s.dataDir));
  });

  it('lbot mcp add: the config it writes (and rewrites) is 0600, in a 0700 data dir', async () => {
    const s = await scenario();
    const dataDir = path.join(s.root, 'mcp-data');
    const add = (name: string) =>
      s.lbot(['--data-dir', dataDir, 'mcp', 'add', name, '--url', 'https://mcp.example/mcp', '--header', 'Authorization=Bearer tok-SECRET'], {
        globals: false,
      });
    const first = await add('one');
    expect(first.exitCode, first.stderr).toBe(0);
    expectPrivate([path.join(dataDir, 'lbot.config.json')]);
    expect(octal(modeOf(dataDir))).toBe('0700');
    await chmod(path.join(dataDir, 'lbot.config.json'), 0o644);
    const second = await add('two');
    expect(second.exitCode, second.stderr).toBe(0);
    expectPrivate([path.join(dataDir, 'lbot.config.json')]);
  });

  it('lbot skill install: a data dir it creates is 0700', async () => {
    const s = await scenario();
    const dataDir = path.join(s.root, 'skill-data');
    const r = await s.lbot(['--data-dir', dataDir, 'skill', 'install', path.join(REPO_ROOT, 'fixtures', 'skills', 'hello-skill.zip')], { globals: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(octal(modeOf(dataDir))).toBe('0700');
  });

  it('lbot serve: serve.token, the database with its live -wal/-shm and the data dir are private, even over an old 0644 token', async () => {
    const s = await scenario();
    const dataDir = path.join(s.root, 'serve-data');
    await mkdir(dataDir, { mode: 0o755 });
    await writeFile(path.join(dataDir, 'serve.token'), 'old-token\n', { mode: 0o644 });
    const serve = await startServe({ dataDir, pluginsDir: s.plugins.pluginsDir });
    try {
      expect(serve.token).not.toBe('old-token');
      expect(octal(modeOf(dataDir))).toBe('0700');
      expectPrivate([path.join(dataDir, 'serve.token'), ...DB_FILES(dataDir)]);
    } finally {
      await serve.stop();
    }
  });

  it('lbot run --record: the cassette is 0600', async () => {
    const s = await scenario();
    await s.writeConfig({ models: [{ id: 'm-fake', provider: 'fake', reply: 'PONG' }] });
    const cassette = path.join(s.root, 'tapes', 'ping.json');
    const r = await s.run([api('models.invoke', { model_id: 'm-fake', messages: [{ role: 'user', content: 'private words' }] }), done()], {
      args: [
        '--binding',
        await s.writeJson('binding.json', { binding_id: 'b1', runner_id: SCRIPTED, resource_policy: { allowed_model_uuids: ['m-fake'] } }),
        '--record',
        cassette,
      ],
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expectPrivate([cassette]);
  });
});
