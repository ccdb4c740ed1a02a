// `box serve --listen` parsing and the `box.remote` config keys.
import { describe, expect, it } from 'vitest';
import { parseListen } from '../../../src/commands/box-serve.js';
import { ConfigSchema, applyEnvOverrides } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';

describe('box serve --listen', () => {
  it('takes HOST:PORT, [v6]:PORT and :PORT (loopback)', () => {
    expect(parseListen('127.0.0.1:5410')).toEqual({ host: '127.0.0.1', port: 5410 });
    expect(parseListen('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0 });
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListen(':9000')).toEqual({ host: '127.0.0.1', port: 9000 });
  });

  it('refuses anything else with invalid_argument', () => {
    for (const bad of ['5410', 'host', 'a:b', '1.2.3.4:70000', '::1:80', '']) {
      expect(() => parseListen(bad), bad).toThrow(LbotError);
    }
  });
});

describe('box.remote config', () => {
  it('defaults to a local box and accepts http(s)://HOST:PORT', () => {
    expect(ConfigSchema.parse({}).box.remote).toMatchObject({ url: null, ca_file: null });
    expect(ConfigSchema.parse({ box: { remote: { url: 'https://box.internal:5410' } } }).box.remote.url).toBe('https://box.internal:5410');
    expect(ConfigSchema.safeParse({ box: { remote: { url: 'ftp://x' } } }).success).toBe(false);
    expect(ConfigSchema.safeParse({ box: { remote: { url: 'http://x:1/path' } } }).success).toBe(false);
  });

  it('is set from LBOT__BOX__REMOTE__URL; an empty value means a local box', () => {
    const from = (v: string) => ConfigSchema.parse(applyEnvOverrides({}, { LBOT__BOX__REMOTE__URL: v })).box.remote.url;
    expect(from('http://10.0.0.5:5410')).toBe('http://10.0.0.5:5410');
    expect(from('')).toBeNull();
  });
});
