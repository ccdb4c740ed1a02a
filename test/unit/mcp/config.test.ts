// MCP server records: names and transports (AC-151), the stored shape, the mcp settings, and masking (AC-160).
import { describe, expect, it } from 'vitest';
import { ConfigSchema, MASK } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import {
  buildServerRecord,
  checkServerName,
  McpServerRecordSchema,
  readMcpConfig,
  storedRecord,
  type AddServerInput,
} from '../../../src/runtime/mcp/config.js';
import { maskServerRecord, redactText, secretValues } from '../../../src/runtime/mcp/masking.js';

const input = (over: Partial<AddServerInput> = {}): AddServerInput => ({
  name: 'echo',
  command: ['node', 'echo.js'],
  env: {},
  headers: {},
  inBox: false,
  ...over,
});

function codeOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof LbotError ? err.code : 'not-an-LbotError';
  }
}

describe('server names (AC-151)', () => {
  it('accepts letters, digits, _ . - and qualified-looking names', () => {
    for (const ok of ['echo', 'acme__echo', 'a', 'srv.v2', 'x-y_z', 'A1', 'a'.repeat(64)]) expect(codeOf(() => checkServerName(ok))).toBeNull();
  });

  it('refuses slashes, spaces, leading punctuation, empty and overlong names with mcp.invalid_config', () => {
    for (const bad of ['a/b', 'has space', '', '_x', '.x', '-x', 'a'.repeat(65), 'ünï']) expect(codeOf(() => checkServerName(bad))).toBe('mcp.invalid_config');
  });
});

describe('building a record from mcp add flags', () => {
  it('stdio with a command; env and in_box kept', () => {
    const r = buildServerRecord(input({ env: { API_TOKEN: 't' }, inBox: true }), '2026-01-01T00:00:00.000Z');
    expect(r).toMatchObject({
      name: 'echo',
      transport: 'stdio',
      command: ['node', 'echo.js'],
      env: { API_TOKEN: 't' },
      in_box: true,
      enabled: true,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(r.uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a URL defaults to streamable http; --transport sse is accepted (AC-151)', () => {
    expect(buildServerRecord(input({ command: [], url: 'https://mcp.example/mcp' })).transport).toBe('http');
    expect(buildServerRecord(input({ name: 'web', command: [], url: 'https://mcp.example/sse', transport: 'sse' })).transport).toBe('sse');
  });

  it('refuses a non-http URL, an unknown transport, nothing at all, and mixed forms', () => {
    expect(codeOf(() => buildServerRecord(input({ command: [], url: 'ftp://x', transport: 'sse' })))).toBe('mcp.invalid_config');
    expect(codeOf(() => buildServerRecord(input({ command: [], url: 'https://x', transport: 'carrier-pigeon' })))).toBe('mcp.invalid_config');
    expect(codeOf(() => buildServerRecord(input({ command: [] })))).toBe('mcp.invalid_config');
    expect(codeOf(() => buildServerRecord(input({ url: 'https://x', transport: 'http' })))).toBe('mcp.invalid_config');
    expect(codeOf(() => buildServerRecord(input({ command: [], url: 'https://x', transport: 'sse', inBox: true })))).toBe('mcp.invalid_config');
    expect(codeOf(() => buildServerRecord(input({ command: [], url: 'not a url', transport: 'http' })))).toBe('mcp.invalid_config');
  });

  it('stores a small record that reads back the same, and the core config schema accepts it', () => {
    const r = buildServerRecord(input());
    const stored = storedRecord(r);
    expect(stored).not.toHaveProperty('box');
    expect(stored).not.toHaveProperty('timeout_sec');
    expect(McpServerRecordSchema.parse(stored)).toEqual(r);
    const config = ConfigSchema.parse({ mcp: { servers: [stored] } });
    expect(readMcpConfig(config).servers[0]).toEqual(r);
  });

  it('box options default as box.md §8.4 says and ignore unknown keys (§8 #39)', () => {
    const r = McpServerRecordSchema.parse({ name: 'x', command: ['x'], in_box: true, box: { weird: 1 } });
    expect(r.box).toMatchObject({
      network: 'on',
      host_path_mode: 'ro',
      startup_timeout_sec: 120,
      image: null,
      cpus: null,
      memory_mb: null,
      pids_limit: null,
      read_only_rootfs: null,
    });
  });

  it('mcp settings have the spec defaults', () => {
    const { settings } = readMcpConfig(ConfigSchema.parse({}));
    expect(settings).toMatchObject({
      tool_name_prefix: false,
      call_timeout_sec: 120,
      start_timeout_sec: 30,
      retry_delays_sec: [2, 4, 8],
      bridge: { enabled: true },
    });
  });

  it('a malformed server entry is config.invalid naming its path', () => {
    const config = ConfigSchema.parse({ mcp: { servers: [{ name: 'x', command: ['x'], box: { network: 'sometimes' } }] } });
    expect(() => readMcpConfig(config)).toThrow(/mcp\.servers\.0\.box\.network/);
  });
});

describe('masking (AC-160)', () => {
  const record = McpServerRecordSchema.parse({
    name: 's',
    command: ['srv', '--api-key', 'k-abcdef', '--token=tok-999999', '--verbose', 'plain'],
    env: { API_TOKEN: 'tok-123456', HARMLESS: 'visible-but-masked' },
    headers: { Authorization: 'Bearer sk-live-abcdef' },
    box: { env: { BOX_SECRET: 'box-secret-1' } },
  });

  it('masks every env, header and box env value, secret arguments and URL secrets; keeps keys', () => {
    const masked = maskServerRecord(record);
    const text = JSON.stringify(masked);
    for (const secret of ['tok-123456', 'tok-1', 'visible-but-masked', 'sk-live-abcdef', 'box-secret-1', 'k-abcdef', 'tok-999999'])
      expect(text).not.toContain(secret);
    expect(masked.env).toEqual({ API_TOKEN: MASK, HARMLESS: MASK });
    expect(masked.command).toEqual(['srv', '--api-key', MASK, `--token=${MASK}`, '--verbose', 'plain']);
    const remote = maskServerRecord(McpServerRecordSchema.parse({ name: 'r', transport: 'http', url: 'https://user:pw@mcp.example/x?api_key=SECRETKEY&q=1' }));
    expect(String(remote.url)).not.toContain('SECRETKEY');
    expect(String(remote.url)).not.toContain('pw@');
    expect(String(remote.url)).toContain('q=1');
  });

  it('redacts configured secret values (and bearer parts) inside free text', () => {
    const secrets = secretValues(record);
    expect(redactText('server said tok-123456 and sk-live-abcdef; Bearer sk-live-abcdef', secrets)).toBe(`server said ${MASK} and ${MASK}; ${MASK}`);
  });
});
