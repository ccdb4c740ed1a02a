// The one env builder for children: each kind's allowlist, no shell functions, what lbot sets on top.
import { describe, expect, it } from 'vitest';
import { childEnv } from '../../../src/runtime/process/env.js';
import { buildPluginEnv } from '../../../src/runtime/plugins/env.js';

const host = {
  PATH: '/usr/bin',
  HOME: '/home/u',
  USER: 'u',
  TERM: 'xterm',
  AWS_SECRET_ACCESS_KEY: 'secret',
  NODE_OPTIONS: '--require /tmp/evil.js',
  LANG: '() { :; }; echo pwned',
};

describe('childEnv', () => {
  it('gives each kind its own allowlist and nothing else of the host env', () => {
    expect(childEnv('plugin', {}, host)).toEqual({ PATH: '/usr/bin', HOME: '/home/u' });
    expect(childEnv('mcp', {}, host)).toEqual({ PATH: '/usr/bin', HOME: '/home/u', USER: 'u', TERM: 'xterm' });
    expect(childEnv('helper', { X: '1' }, host)).toEqual({ PATH: '/usr/bin', X: '1' });
  });

  it('never passes an exported shell function on', () => {
    expect(childEnv('mcp', {}, host).LANG).toBeUndefined();
  });

  it('gives a helper a PATH even when the host has none', () => {
    expect(childEnv('helper', {}, {})).toEqual({ PATH: '/usr/bin:/bin' });
  });

  it('lets a plugin binding set variables but not the protocol ones', () => {
    const env = buildPluginEnv('acme/echo', { PATH: '/opt/bin', LBOT_PLUGIN_IDENTITY: 'evil/other', MODE: 'x' }, host);
    expect(env).toEqual({ PATH: '/opt/bin', HOME: '/home/u', MODE: 'x', LBOT_PROTOCOL_VERSION: '1', LBOT_PLUGIN_IDENTITY: 'acme/echo' });
  });
});
