// `lbot platform add|list|rm`: accounts in the config file (0600), tokens never printed or stored.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { LBOT_BIN } from '../../helpers/serve.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function lbot(dataDir: string, args: string[], env: Record<string, string> = {}) {
  return execa(process.execPath, [LBOT_BIN, '--data-dir', dataDir, ...args], { reject: false, env, extendEnv: false });
}

describe('lbot platform', () => {
  it('adds, lists (masked) and removes accounts; the config stays 0600 and holds only the env name', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-platform-'));
    dirs.push(dataDir);
    const secret = '123456:AAE-very-secret-token';
    const add = await lbot(dataDir, ['platform', 'add', 'tg', '--platform', 'telegram', '--token-env', 'TG_TOKEN', '--api-base', 'http://127.0.0.1:9/'], {
      TG_TOKEN: secret,
    });
    expect(add.exitCode, add.stderr).toBe(0);
    expect(add.stdout).toContain('bot telegram:tg');
    const list = await lbot(dataDir, ['--json', 'platform', 'list'], { TG_TOKEN: secret });
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([
      {
        name: 'tg',
        platform: 'telegram',
        bot_id: 'telegram:tg',
        token_env: 'TG_TOKEN',
        token: '****',
        api_base: 'http://127.0.0.1:9/',
      },
    ]);
    expect(list.stdout).not.toContain(secret);
    const unset = await lbot(dataDir, ['--json', 'platform', 'list']);
    expect(JSON.parse(unset.stdout)).toMatchObject([{ token: '(not set)' }]);
    const file = path.join(dataDir, 'lbot.config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).not.toContain(secret);

    const dup = await lbot(dataDir, ['platform', 'add', 'tg', '--platform', 'telegram', '--token-env', 'X']);
    expect(dup.exitCode).toBe(2);
    expect(dup.stderr).toContain('already exists');
    const rmd = await lbot(dataDir, ['platform', 'rm', 'tg']);
    expect(rmd.exitCode).toBe(0);
    expect((await lbot(dataDir, ['platform', 'list'])).stdout).toContain('no platform accounts');
    expect((await lbot(dataDir, ['platform', 'rm', 'tg'])).exitCode).toBe(3);
  });

  it('refuses a bad account: missing token env, bad env name, a non-http api base, lark without app id, http without callback', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-platform-'));
    dirs.push(dataDir);
    const cases: Array<[string[], string]> = [
      [['platform', 'add', 'a', '--platform', 'slack'], '--token-env is required'],
      [['platform', 'add', 'a', '--platform', 'slack', '--token-env', 'BAD-NAME'], 'token_env'],
      [['platform', 'add', 'a', '--platform', 'discord', '--token-env', 'T', '--api-base', 'file:///etc/passwd'], 'api_base'],
      [['platform', 'add', 'a', '--platform', 'lark', '--token-env', 'T'], '--app-id'],
      [['platform', 'add', 'a', '--platform', 'http', '--token-env', 'T'], '--api-base is required for http'],
      [['platform', 'add', 'a', '--platform', 'http', '--api-base', 'http://127.0.0.1:1/cb'], '--token-env is required'],
      [['platform', 'add', 'a', '--platform', 'slack', '--token-env', 'T', '--callback-secret-env', 'S'], '--callback-secret-env is for --platform http only'],
      [['platform', 'add', '../x', '--platform', 'onebot'], 'name'],
    ];
    for (const [args, needle] of cases) {
      const r = await lbot(dataDir, args);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(needle);
    }
  });
});
