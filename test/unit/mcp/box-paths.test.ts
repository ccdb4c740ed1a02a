// Box-hosted MCP servers: project directory inference, venv and path rewriting, process ids (§8 #40, #41).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpServerRecordSchema } from '../../../src/runtime/mcp/config.js';
import { inferHostPath, processIdOf, rewriteCommand, unwrapVenvPath } from '../../../src/runtime/mcp/box-connector.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'lbot-mcp-paths-'));
const p = path.join(root, 'p');
mkdirSync(path.join(p, '.venv', 'bin'), { recursive: true });
writeFileSync(path.join(p, '.venv', 'bin', 'python'), '');
writeFileSync(path.join(p, 'server.py'), '');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('project directory inference', () => {
  it('a venv interpreter and a script of the same project give the project root', () => {
    expect(inferHostPath([path.join(p, '.venv', 'bin', 'python'), path.join(p, 'server.py')])).toBe(p);
  });

  it('only relative parts give none; paths whose common parent is / give none', () => {
    expect(inferHostPath(['python', 'server.py', '--port', '3'])).toBeNull();
    expect(inferHostPath([path.join(p, 'server.py'), '/usr/bin/env'])).toBeNull();
  });

  it('collapses <root>/<venv>/<bin|Scripts> only', () => {
    expect(unwrapVenvPath('/x/.venv/bin')).toBe('/x');
    expect(unwrapVenvPath('/x/env/Scripts')).toBe('/x');
    expect(unwrapVenvPath('/x/bin')).toBe('/x/bin');
  });
});

describe('command rewriting', () => {
  const mount = '/workspace/.mcp/id/workspace';
  it('a host venv python becomes python; other paths under the project move to the mount; the rest stays', () => {
    expect(rewriteCommand(['/p/.venv/bin/python3', '/p/server.py', '--data', '/p/data', '/etc/hosts', 'plain'], '/p', mount)).toEqual([
      'python',
      `${mount}/server.py`,
      '--data',
      `${mount}/data`,
      '/etc/hosts',
      'plain',
    ]);
    expect(rewriteCommand(['/p/bin/tool'], '/p', mount)).toEqual([`${mount}/bin/tool`]);
    expect(rewriteCommand(['/usr/bin/node', '/pq/x.js'], '/p', mount)).toEqual(['/usr/bin/node', '/pq/x.js']);
  });
});

describe('managed process ids', () => {
  it('use the uuid, else a sanitized name', () => {
    expect(processIdOf(McpServerRecordSchema.parse({ name: 'n', uuid: 'aaaa-bbbb', command: ['x'] }))).toBe('aaaa-bbbb');
    expect(processIdOf(McpServerRecordSchema.parse({ name: 'acme__echo', command: ['x'] }))).toBe('acme__echo');
  });
});
