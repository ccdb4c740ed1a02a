// Starts a real `lbot box serve` process (the built binary) on a free loopback port for tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { LBOT_BIN } from './serve.js';

export type BoxServeProcess = {
  url: string;
  token: string;
  dataDir: string;
  proc: ResultPromise;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
};

export const TEST_BOX_TOKEN = 'test-box-token-0123456789abcdef0123456789abcdef';

/** `box` are `box.*` config keys of the server's data dir; `args` more flags of `box serve`. */
export async function startBoxServe(opts: { dataDir: string; box?: Record<string, unknown>; args?: string[]; token?: string }): Promise<BoxServeProcess> {
  mkdirSync(opts.dataDir, { recursive: true });
  writeFileSync(path.join(opts.dataDir, 'lbot.config.json'), JSON.stringify({ box: { workspace_quota_mb: 0, ...opts.box } }));
  const token = opts.token ?? TEST_BOX_TOKEN;
  // LBOT_CHECK_SHAPES: lbot refuses a ready line that breaks the BoxServeLine shape (test/e2e/json-shapes.test.ts).
  const env: Record<string, string> = { LBOT_BOX_TOKEN: token, LBOT_CHECK_SHAPES: '1' };
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) env[k] = process.env[k] ?? '';
  const proc = execa(
    process.execPath,
    [LBOT_BIN, '--data-dir', opts.dataDir, '--json', 'box', 'serve', '--listen', '127.0.0.1:0', '--log-format', 'json', ...(opts.args ?? [])],
    {
      env,
      extendEnv: false,
      reject: false,
      buffer: false,
      stdin: 'ignore',
    },
  );
  let errText = '';
  proc.stderr?.on('data', (d: Buffer) => (errText += d.toString()));
  const lines = createInterface({ input: proc.stdout! });
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`box serve did not start: ${errText}`)), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line) as { url: string });
    });
    void proc.then(() => reject(new Error(`box serve exited early: ${errText}`)));
  });
  return {
    url: ready.url,
    token,
    dataDir: opts.dataDir,
    proc,
    stderr: () => errText,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await proc;
    },
  };
}
