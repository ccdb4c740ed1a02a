// The reference MCP servers from npm (server-everything, -memory, -filesystem), started from node_modules,
// over stdio, legacy SSE and Streamable HTTP.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { McpServerRecordSchema } from '../../../src/runtime/mcp/config.js';
import { EVERYTHING, FILESYSTEM, freePort, MEMORY, openSession, stdioRecord, waitPort } from './helpers.js';

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lbot-mcp-real-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts server-everything with an HTTP transport on a free port; stopped when the test ends. */
async function everythingOverHttp(mode: 'sse' | 'streamableHttp'): Promise<number> {
  const port = await freePort();
  const proc = execa(process.execPath, [EVERYTHING, mode], { env: { PORT: String(port) }, reject: false, stdio: 'ignore', detached: true });
  onTestFinished(async () => {
    if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
    await proc;
  });
  await waitPort(port);
  return port;
}

describe('server-everything', () => {
  it('stdio: echo and a tiny image', async () => {
    const { session } = openSession(stdioRecord('everything', ['node', EVERYTHING, 'stdio']));
    await session.start();
    expect(session.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']));
    expect(await session.callTool('echo', { message: 'hi' }, { timeoutMs: 10_000 })).toEqual([{ type: 'text', text: 'Echo: hi' }]);
    const image = await session.callTool('get-tiny-image', {}, { timeoutMs: 10_000 });
    expect(image.some((c) => c.type === 'image_base64' && String(c.image_base64).startsWith('data:image/png;base64,'))).toBe(true);
  });

  it('legacy HTTP+SSE transport', async () => {
    const port = await everythingOverHttp('sse');
    const { session } = openSession(McpServerRecordSchema.parse({ name: 'ev-sse', transport: 'sse', url: `http://127.0.0.1:${port}/sse` }));
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'connected', pid: null });
    expect(await session.callTool('echo', { message: 'over sse' }, { timeoutMs: 10_000 })).toEqual([{ type: 'text', text: 'Echo: over sse' }]);
  });

  it('Streamable HTTP transport, with a static header', async () => {
    const port = await everythingOverHttp('streamableHttp');
    const { session } = openSession(
      McpServerRecordSchema.parse({ name: 'ev-http', transport: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Api-Key': 'k-123456' } }),
    );
    await session.start();
    expect(session.status).toBe('connected');
    expect(await session.callTool('get-sum', { a: 2, b: 3 }, { timeoutMs: 10_000 })).toEqual([{ type: 'text', text: expect.stringContaining('5') }]);
  });

  it('an HTTP server that is not there fails in mcp_init and is retried', async () => {
    const port = await freePort();
    const { session } = openSession(McpServerRecordSchema.parse({ name: 'gone', transport: 'http', url: `http://127.0.0.1:${port}/mcp` }), {
      retryDelaysMs: [50],
    });
    await session.start();
    expect(session.runtimeInfo()).toMatchObject({ status: 'error', error_phase: 'mcp_init', retry_count: 2 });
  });
});

describe('server-memory and server-filesystem', () => {
  it('memory: entities written and read back through the knowledge graph tools', async () => {
    const dir = await tempDir();
    const { session } = openSession(stdioRecord('memory', ['node', MEMORY], { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') }));
    await session.start();
    await session.callTool(
      'create_entities',
      { entities: [{ name: 'lbot', entityType: 'project', observations: ['hosts agent runners'] }] },
      { timeoutMs: 10_000 },
    );
    const graph = await session.callTool('read_graph', {}, { timeoutMs: 10_000 });
    expect(JSON.stringify(graph)).toContain('hosts agent runners');
    expect(await readFile(path.join(dir, 'memory.jsonl'), 'utf8')).toContain('lbot');
  });

  it('filesystem: lists and reads inside the allowed directory only', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'note.txt'), 'hello from lbot');
    const { session } = openSession(stdioRecord('fs', ['node', FILESYSTEM, dir]));
    await session.start();
    expect(JSON.stringify(await session.callTool('list_directory', { path: dir }, { timeoutMs: 10_000 }))).toContain('note.txt');
    expect(JSON.stringify(await session.callTool('read_text_file', { path: path.join(dir, 'note.txt') }, { timeoutMs: 10_000 }))).toContain('hello from lbot');
    await expect(session.callTool('read_text_file', { path: '/etc/hostname' }, { timeoutMs: 10_000 })).rejects.toMatchObject({ failure: 'tool_error' });
  });
});
