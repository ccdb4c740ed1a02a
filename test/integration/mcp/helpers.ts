// Helpers for MCP integration tests: real server processes from fixtures/mcp and node_modules, sessions
// that are closed after each test, and checks that no server process group outlives its session.
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { REPO_ROOT, waitGroupGone } from '../../helpers/plugins.js';
import { McpServerRecordSchema, type McpServerRecord } from '../../../src/runtime/mcp/config.js';
import { connectHostStdio, remoteConnector, type McpConnector } from '../../../src/runtime/mcp/connectors.js';
import { McpSession, type SessionOptions } from '../../../src/runtime/mcp/session.js';

export const FIXTURES = path.join(REPO_ROOT, 'fixtures', 'mcp');
export const fixture = (name: string) => path.join(FIXTURES, name);
export const NODE_MODULES = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol');
export const EVERYTHING = path.join(NODE_MODULES, 'server-everything', 'dist', 'index.js');
export const MEMORY = path.join(NODE_MODULES, 'server-memory', 'dist', 'index.js');
export const FILESYSTEM = path.join(NODE_MODULES, 'server-filesystem', 'dist', 'index.js');

export function stdioRecord(name: string, command: string[], env: Record<string, string> = {}): McpServerRecord {
  return McpServerRecordSchema.parse({ name, command, env });
}

/**
 * A session for `record`, closed when the test ends; every server process it spawned must be gone
 * afterwards (its whole process group). Returns the session and the pids of the groups it started.
 */
export function openSession(
  record: McpServerRecord,
  over: Partial<SessionOptions> = {},
  dataDir = mkdtempSync(path.join(tmpdir(), 'lbot-mcp-')),
): { session: McpSession; groups: number[]; logs: string[] } {
  const groups: number[] = [];
  const base: McpConnector = record.transport === 'stdio' ? connectHostStdio : remoteConnector(dataDir);
  const connector: McpConnector = async (r, o) => {
    const conn = await base(r, o);
    if (conn.pid) groups.push(conn.pid);
    return conn;
  };
  const logs: string[] = [];
  const session = new McpSession(record, { connector, startTimeoutMs: 20_000, retryDelaysMs: [100, 100, 100], log: (m) => logs.push(m), ...over });
  onTestFinished(async () => {
    await session.close();
    for (const pgid of groups) if (!(await waitGroupGone(pgid, 5000))) throw new Error(`MCP server process group ${pgid} outlived its session`);
  });
  return { session, groups, logs };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export async function waitPort(port: number, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on port ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
