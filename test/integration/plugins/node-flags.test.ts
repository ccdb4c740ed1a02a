// The V8 flags an `execution.node` plugin starts with: the Node.js running lbot must accept them (an unknown
// flag would stop every runner from starting), they come before the bootstrap, and a command plugin's own
// argv is left as written.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BOOTSTRAP, PLUGIN_NODE_FLAGS, resolveCommand } from '../../../src/runtime/plugins/spawn.js';

describe('plugin node flags', () => {
  it('are accepted by the Node.js that runs lbot and reach the process', () => {
    const r = spawnSync(process.execPath, [...PLUGIN_NODE_FLAGS, '-p', 'JSON.stringify(process.execArgv)'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining([...PLUGIN_NODE_FLAGS]));
  });

  it('come before the bootstrap of an execution.node plugin only', () => {
    expect(resolveCommand({ node: { path: 'main.js' } }, '/p')).toEqual({
      file: process.execPath,
      args: [...PLUGIN_NODE_FLAGS, DEFAULT_BOOTSTRAP, '/p/main.js'],
    });
    expect(resolveCommand({ command: ['node', 'server.js'] }, '/p')).toEqual({ file: process.execPath, args: ['server.js'] });
  });
});
