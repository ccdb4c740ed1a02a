// The Discord gateway protocol as lbot speaks it (docs/delivery.md): frames in and out, and what each
// close code means for the connection. The WebSocket and timers live in runtime/delivery/discord-gateway.ts.
import { z } from 'zod';

export const GATEWAY_VERSION = 10;

export const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/** GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT: what MESSAGE_CREATE with its text needs. */
export const INTENTS = (1 << 9) | (1 << 12) | (1 << 15);

/** A frame from the gateway; `d` is read per opcode. */
export const GatewayFrameSchema = z.looseObject({
  op: z.number().int(),
  d: z.unknown().optional(),
  s: z.number().int().nullable().optional(),
  t: z.string().nullable().optional(),
});
export type GatewayFrame = z.infer<typeof GatewayFrameSchema>;

export const HelloSchema = z.looseObject({
  heartbeat_interval: z
    .number()
    .int()
    .positive()
    .max(10 * 60_000),
});
export const ReadySchema = z.looseObject({
  session_id: z.string().min(1),
  resume_gateway_url: z.string().url().optional(),
  user: z.looseObject({ id: z.string() }),
});
/** The answer of GET /gateway/bot. */
export const GatewayBotSchema = z.looseObject({ url: z.string().url() });

export const identifyFrame = (token: string, os: string) => ({
  op: OP.IDENTIFY,
  d: { token, intents: INTENTS, properties: { os, browser: 'lbot', device: 'lbot' } },
});
export const resumeFrame = (token: string, sessionId: string, seq: number | null) => ({ op: OP.RESUME, d: { token, session_id: sessionId, seq } });
export const heartbeatFrame = (seq: number | null) => ({ op: OP.HEARTBEAT, d: seq });

/** `<base>/?v=10&encoding=json` for a gateway URL as Discord hands it out. */
export function gatewayUrl(base: string): string {
  const u = new URL(base);
  u.searchParams.set('v', String(GATEWAY_VERSION));
  u.searchParams.set('encoding', 'json');
  return u.toString();
}

/**
 * What to do after the socket closed with `code`: resume the session, identify afresh, or stop for good
 * (the token or the intents are refused; retrying would only be refused again).
 */
export function afterClose(code: number): 'resume' | 'identify' | 'stop' {
  switch (code) {
    case 4004: // authentication failed
    case 4010: // invalid shard
    case 4011: // sharding required
    case 4012: // invalid API version
    case 4013: // invalid intents
    case 4014: // disallowed intents (MESSAGE_CONTENT not enabled for the app)
      return 'stop';
    case 4007: // invalid seq on resume
    case 4009: // session timed out
      return 'identify';
    default:
      return 'resume';
  }
}

/** Why Discord closed, for the operator. */
export function closeReason(code: number): string {
  const known: Record<number, string> = {
    4004: 'authentication failed: the bot token is wrong',
    4013: 'invalid intents',
    4014: 'disallowed intents: enable the Message Content intent for the app in the Discord developer portal',
    4007: 'invalid sequence on resume',
    4009: 'session timed out',
  };
  return known[code] ?? `close code ${code}`;
}
