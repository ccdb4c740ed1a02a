// parseRpcMessage picks the one strict variant a value can be by its keys; it must accept and refuse exactly
// what the union RpcMessageSchema does, for well-formed messages and for every way of breaking one.
import { describe, expect, it } from 'vitest';
import { parseRpcMessage, RpcMessageSchema } from '../../../src/core/protocol/wire.js';

const valid: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'state.get', params: { run_id: 'r', scope: 'conversation', key: 'k' } },
  { jsonrpc: '2.0', id: 'a', method: 'initialize' },
  { jsonrpc: '2.0', method: 'run/result', params: { run_id: 'r' } },
  { jsonrpc: '2.0', method: 'shutdown' },
  { jsonrpc: '2.0', id: 2, result: { value: null } },
  { jsonrpc: '2.0', id: 2, result: null },
  { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'no', data: { code: 'unauthorized' } } },
  { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'bad request' } },
];

const invalid: unknown[] = [
  null,
  42,
  'text',
  [],
  [{ jsonrpc: '2.0', id: 1, result: 1 }],
  {},
  { jsonrpc: '1.0', id: 1, result: 1 },
  { jsonrpc: '2.0', id: 1 },
  { jsonrpc: '2.0', id: 1.5, result: 1 },
  { jsonrpc: '2.0', id: null, result: 1 },
  { jsonrpc: '2.0', id: 1, result: 1, error: { code: 1, message: 'both' } },
  { jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'no' } },
  { jsonrpc: '2.0', id: 1, method: 'm', result: 1 },
  { jsonrpc: '2.0', id: 1, method: '', params: {} },
  { jsonrpc: '2.0', id: 1, method: 'm', params: [] },
  { jsonrpc: '2.0', method: 'm', params: 'x' },
  { jsonrpc: '2.0', method: 'm', params: null },
  { jsonrpc: '2.0', method: 'm', extra: true },
  { jsonrpc: '2.0', id: 1, result: 1, extra: true },
  { jsonrpc: '2.0', id: {}, method: 'm' },
];

describe('parseRpcMessage', () => {
  it('accepts what the union accepts, with the same parsed value', () => {
    for (const v of valid) {
      const picked = parseRpcMessage(v);
      const union = RpcMessageSchema.safeParse(v);
      expect(union.success, JSON.stringify(v)).toBe(true);
      expect(picked, JSON.stringify(v)).toEqual({ success: true, data: union.data });
    }
  });

  it('refuses what the union refuses', () => {
    for (const v of invalid) {
      expect(RpcMessageSchema.safeParse(v).success, JSON.stringify(v)).toBe(false);
      expect(parseRpcMessage(v).success, JSON.stringify(v)).toBe(false);
    }
  });

  it('keeps the params a line was parsed to, a __proto__ key as plain data', () => {
    const value: unknown = JSON.parse('{"jsonrpc":"2.0","id":1,"method":"state.get","params":{"__proto__":{"polluted":true},"key":"k"}}');
    const parsed = parseRpcMessage(value);
    if (!parsed.success || !('params' in parsed.data)) throw new Error('expected a request');
    const params = parsed.data.params;
    expect(Object.getPrototypeOf(params)).toBe(Object.prototype);
    expect(Object.keys(params)).toEqual(['__proto__', 'key']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
