// Starts a real `lbot serve` process for e2e tests and talks to it over HTTP.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { REPO_ROOT } from './plugins.js';

export const LBOT_BIN = path.join(REPO_ROOT, 'bin', 'lbot.js');

export type ServeProcess = {
  url: string;
  token: string;
  proc: ResultPromise;
  stderr(): string;
  request(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: unknown; text: string }>;
  /** Polls GET /v1/runs/:id until its status is neither `running` nor `queued`. */
  waitRun(runId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<{ exitCode: number | undefined }>;
};

/** Without `pluginsDir`, serve uses its default plugins dir `<data-dir>/plugins`. */
export async function startServe(opts: {
  dataDir: string;
  pluginsDir?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Arguments for node itself, before lbot's (`--import HOOK`). */
  nodeArgs?: string[];
}): Promise<ServeProcess> {
  const proc = execa(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      LBOT_BIN,
      '--data-dir',
      opts.dataDir,
      ...(opts.pluginsDir === undefined ? [] : ['--plugins', opts.pluginsDir]),
      '--json',
      'serve',
      '--port',
      '0',
      ...(opts.args ?? []),
    ],
    {
      env: { ...opts.env },
      reject: false,
      buffer: false,
      stdin: 'ignore',
    },
  );
  let errText = '';
  proc.stderr?.on('data', (d: Buffer) => (errText += d.toString()));
  const lines = createInterface({ input: proc.stdout! });
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${errText}`)), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line) as { url: string });
    });
    void proc.then(() => reject(new Error(`serve exited early: ${errText}`)));
  });
  const token = opts.env?.LBOT_API_TOKEN ?? (await readFile(path.join(opts.dataDir, 'serve.token'), 'utf8')).trim();
  const request: ServeProcess['request'] = async (method, route, body, headers) => {
    const res = await fetch(`${ready.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, json, text };
  };
  return {
    url: ready.url,
    token,
    proc,
    stderr: () => errText,
    request,
    async waitRun(runId, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await request('GET', `/v1/runs/${runId}`);
        const rec = r.json as Record<string, unknown>;
        if (rec && rec.status !== 'running' && rec.status !== 'queued') return rec;
        if (Date.now() > until) throw new Error(`run ${runId} still running`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal);
      const r = await proc;
      return { exitCode: r.exitCode };
    },
  };
}
