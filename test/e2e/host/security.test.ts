// Acceptance §10, security hardening of the host (AC-210 … AC-212, AC-219, AC-220, AC-222).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  api,
  CLI_BINDING,
  done,
  dump,
  emit,
  eventPath,
  F_CFG_MODELS,
  list,
  openDb,
  pick,
  reports,
  say,
  scenario,
  SCRIPTED,
  str,
  summaries,
} from './harness.js';

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

describe('security hardening', () => {
  it('AC-210 filtering adapter parameters', async () => {
    const s = await scenario();
    const vars = ['topic=x', 'api_key=k', '_internal=1', 'DB_PASSWORD=p', 'user_token=t', 'Credential_Id=c', 'secretive=s'].flatMap((v) => ['--var', v]);
    const r = await s.run([dump, done()], { json: true, args: vars });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(pick(reports(r.stdout)[0], 'adapter.extra.params')).toEqual({ topic: 'x' });
  });

  it('AC-211 runner environment allowlist', async () => {
    const s = await scenario();
    const binding = await s.writeJson('b.json', { binding_id: 'b-env', runner_id: SCRIPTED, env: { MY_SETTING: 'on' } });
    const r = await s.run([{ dump_env: true }, done()], {
      json: true,
      args: ['--binding', binding],
      env: { AWS_SECRET_ACCESS_KEY: 'leak', LBOT_TEST_SECRET: 's3cr3t', NODE_OPTIONS: '--no-warnings' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const env = reports(r.stdout)[0] as Record<string, unknown>;
    expect(env).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
    expect(env).not.toHaveProperty('LBOT_TEST_SECRET');
    expect(env).not.toHaveProperty('NODE_OPTIONS');
    expect(JSON.stringify(env)).not.toMatch(/leak|s3cr3t/);
    expect(env.MY_SETTING).toBe('on');
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'MY_SETTING']);
    for (const name of Object.keys(env)) {
      expect(allowed.has(name) || name.startsWith('LBOT_'), name).toBe(true);
    }
    expect(
      Object.keys(env)
        .filter((n) => n.startsWith('LBOT_'))
        .every((n) => !/SECRET|TOKEN|KEY/.test(n)),
    ).toBe(true);
  });

  it('AC-212 secret redaction everywhere', async () => {
    const s = await scenario();
    await s.writeConfig({ models: F_CFG_MODELS });
    await s.editRunner((doc) => {
      const spec = doc.spec as Record<string, unknown>;
      spec.config = [{ name: 'model', type: 'llm-model-selector' }];
    });
    const r = await s.run(
      [dump, api('models.invoke', { model_id: 'm-fake', messages: [{ role: 'user', content: 'hi' }] }), { stderr: 'runner log line' }, done()],
      {
        json: true,
        verbose: true,
        config: { model: 'm-fake' },
        args: [],
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [ctx, call] = reports(r.stdout);
    expect(call).toMatchObject({ ok: true, result: { message: { content: 'FAKE_PONG' } } });
    const models = list(ctx, 'resources.models');
    expect(models).toHaveLength(1);
    for (const m of models) expect(Object.keys(m as object).sort()).toEqual(['model_id', 'model_type', 'provider']);
    const outputs = [r.stdout, r.stderr];
    for (const args of [
      ['runs', 'list'],
      ['events', 'list'],
      ['config', 'show'],
      ['runner', 'list'],
      ['state', 'list'],
      ['artifacts', 'list'],
    ]) {
      const o = await s.lbot(['--json', '--debug', ...args]);
      outputs.push(o.stdout, o.stderr);
    }
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const shown = await s.lbot(['--json', 'runs', 'show', runId]);
    outputs.push(shown.stdout, shown.stderr);
    for (const o of outputs) expect(o).not.toContain('SECRET123');
    const config = path.join(s.dataDir, 'lbot.config.json');
    for (const file of await filesUnder(s.dataDir)) {
      if (file === config) continue;
      expect((await readFile(file)).includes('SECRET123'), file).toBe(false);
    }
  });

  it('AC-219 artifact names cannot choose storage paths', async () => {
    const s = await scenario();
    const target = `/tmp/lbot-pwn-${randomUUID()}.txt`;
    const name = `../../../..${target}`;
    const r = await s.run([emit('artifact.created', { artifact_id: 'art-pwn', artifact_type: 'file', name, content_base64: 'aGVsbG8=' }), say('ok'), done()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(target)).toBe(false);
    expect(await s.json(['artifacts', 'show', 'art-pwn'])).toMatchObject({ name, size_bytes: 5 });
    const db = openDb(s.dataDir);
    let key: unknown;
    try {
      key = (db.prepare('SELECT storage_key FROM agent_artifact WHERE artifact_id = ?').get('art-pwn') as { storage_key?: unknown } | undefined)?.storage_key;
    } finally {
      db.close();
    }
    expect(typeof key).toBe('string');
    expect(String(key)).not.toContain('lbot-pwn');
    expect(String(key)).not.toContain('..');
    const stored = (await filesUnder(s.dataDir)).filter((f) => f.includes(`${path.sep}artifacts${path.sep}`));
    expect(stored.length).toBeGreaterThan(0);
    for (const f of stored) expect(path.resolve(f).startsWith(path.resolve(s.dataDir) + path.sep)).toBe(true);
    const read = await s.json(['artifacts', 'read', 'art-pwn']);
    expect(Buffer.from(str(read, 'content_base64'), 'base64').toString()).toBe('hello');
  });

  it('AC-220 audit completeness', async () => {
    const s = await scenario();
    const r = await s.run(
      [
        api('state.get', { scope: 'conversation', key: 'k' }),
        api('storage.set', { area: 'workspace', key: 'k', value_base64: 'dg==' }),
        api('history.page', { conversation_id: 'c9' }),
        emit('state.updated', { scope: 'conversation', key: 'external.session_id', value: 'sess-9' }),
        emit('action.requested', { action: 'message.edit', target: { message_id: 'm1' }, payload: { text: 'x' } }),
        say('ok'),
        done(),
      ],
      { json: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const record = await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]);
    expect(record).toMatchObject({ binding_id: CLI_BINDING, runner_id: SCRIPTED, event_id: 'ev-1', status: 'completed' });
    expect(pick(record, 'started_at')).toEqual(expect.any(Number));
    expect(pick(record, 'ended_at')).toEqual(expect.any(Number));
    expect(list(record, 'api_calls').map((c) => [pick(c, 'action'), pick(c, 'resource'), pick(c, 'decision'), pick(c, 'code')])).toEqual([
      ['state.get', 'conversation:k', 'allowed', null],
      ['storage.set', 'storage:workspace/k', 'denied', 'unauthorized'],
      ['history.page', 'conversation:c9', 'denied', 'unauthorized'],
    ]);
    expect(list(record, 'state_writes')).toContainEqual(expect.objectContaining({ scope: 'conversation', key: 'external.session_id' }));
    const observed = list(record, 'observed');
    expect(observed).toContainEqual(expect.objectContaining({ type: 'state.updated', data: expect.objectContaining({ key: 'external.session_id' }) }));
    expect(observed).toContainEqual(
      expect.objectContaining({ type: 'action.requested', executed: false, data: expect.objectContaining({ action: 'message.edit' }) }),
    );
  });

  it('AC-222 runners cannot read arbitrary local files', async () => {
    const s = await scenario();
    const base = JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
    const event = await s.writeJson('passwd.json', {
      ...base,
      input: {
        text: 'ping',
        contents: [{ type: 'text', text: 'ping' }],
        attachments: [{ artifact_id: 'pw', artifact_type: 'file', url: 'file:///etc/passwd' }],
      },
    });
    const r = await s.run([api('artifacts.metadata', { artifact_id: 'pw' }), api('artifacts.read_range', { artifact_id: 'pw' }), done()], {
      json: true,
      event,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('root:');
    const [meta, read] = reports(r.stdout);
    expect(meta).toMatchObject({ ok: true, result: { artifact_id: 'pw' } });
    if (pick(read, 'ok') === true) {
      const content = pick(read, 'result.content_base64');
      expect(content === null || content === '' || content === undefined).toBe(true);
    } else {
      expect(read).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
    const cli = await s.lbot(['--json', 'artifacts', 'read', 'pw']);
    expect(cli.stdout).not.toContain('root:');
    expect(Buffer.from(String(pick(JSON.parse(cli.stdout || '{}'), 'content_base64') ?? ''), 'base64').toString()).not.toContain('root:');
  });
});
