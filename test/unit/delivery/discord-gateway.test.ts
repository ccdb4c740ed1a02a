// The Discord gateway protocol's pure parts: the connection URL, the frames lbot sends, close codes.
import { describe, expect, it } from 'vitest';
import { afterClose, gatewayUrl, heartbeatFrame, identifyFrame, INTENTS, resumeFrame } from '../../../src/core/delivery/discord-gateway.js';

describe('Discord gateway protocol', () => {
  it('connects with v=10 and JSON encoding, keeping what the URL had', () => {
    expect(gatewayUrl('wss://gateway.discord.gg')).toBe('wss://gateway.discord.gg/?v=10&encoding=json');
    expect(gatewayUrl('wss://g.example/path?v=9')).toBe('wss://g.example/path?v=10&encoding=json');
  });

  it('identifies with GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT; resumes with session and sequence', () => {
    expect(INTENTS).toBe(512 + 4096 + 32768);
    expect(identifyFrame('T', 'linux')).toEqual({ op: 2, d: { token: 'T', intents: INTENTS, properties: { os: 'linux', browser: 'lbot', device: 'lbot' } } });
    expect(resumeFrame('T', 's1', 42)).toEqual({ op: 6, d: { token: 'T', session_id: 's1', seq: 42 } });
    expect(heartbeatFrame(null)).toEqual({ op: 1, d: null });
  });

  it('stops on refused credentials or intents, identifies afresh on a lost session, resumes otherwise', () => {
    for (const code of [4004, 4010, 4011, 4012, 4013, 4014]) expect(afterClose(code)).toBe('stop');
    for (const code of [4007, 4009]) expect(afterClose(code)).toBe('identify');
    for (const code of [1000, 1001, 1006, 4000, 4008]) expect(afterClose(code)).toBe('resume');
  });
});
