// The runner's side of the channel (dist/sdk/plugin-main.js): it reads the host's lines under the
// same 8 MiB cap as the host, answers a last line that has no newline, and ends on an oversized line.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES } from '../../../src/core/protocol/index.js';
import { DEFAULT_BOOTSTRAP } from '../../../src/runtime/plugins/spawn.js';
import { createTempPlugins, type TempPlugins } from '../../helpers/plugins.js';

let plugins: TempPlugins;

beforeAll(async () => {
  plugins = await createTempPlugins(['echo']);
});

afterAll(async () => {
  await plugins.cleanup();
});

function runBootstrap(feed: (stdin: NodeJS.WritableStream) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DEFAULT_BOOTSTRAP, path.join(plugins.dir('echo'), 'main.js')], {
      cwd: plugins.dir('echo'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    feed(child.stdin);
  });
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1', host: { name: 'test', version: '0' } } });

describe('SDK stdio', () => {
  it('answers a last line that ends without a newline, then exits at end of input', async () => {
    const r = await runBootstrap((stdin) => stdin.end(initialize));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"id":1');
  });

  it('ends with a message when the host sends a line over the cap', async () => {
    const r = await runBootstrap((stdin) => {
      stdin.write(`${initialize}\n`);
      stdin.end(Buffer.alloc(MAX_LINE_BYTES + 1024, 0x61));
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the host sent a line longer than ${MAX_LINE_BYTES} bytes`);
  });
});
