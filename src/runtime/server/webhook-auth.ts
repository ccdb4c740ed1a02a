// Verifies that a webhook call really comes from the platform: Slack request signatures, Telegram's secret
// token header, Lark's verification token and Discord's Ed25519 signatures. Timing-safe comparisons throughout.
import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import type { WebhookAuth } from '../../core/config.js';
import { isRecord } from '../../core/json.js';

export type WebhookRequest = { headers: Record<string, string | string[] | undefined>; rawBody: string; body: unknown; nowS: number };

/** Slack rejects requests older than five minutes; so do we (replay protection), for Discord too. */
const SLACK_MAX_SKEW_S = 300;
const DISCORD_MAX_SKEW_S = SLACK_MAX_SKEW_S;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const header = (req: WebhookRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether a platform has a verifier configured (then its webhook needs no bearer token). */
export function hasWebhookAuth(auth: WebhookAuth, platform: string): boolean {
  return (
    (platform === 'slack' && !!auth.slack) ||
    (platform === 'telegram' && !!auth.telegram) ||
    (platform === 'lark' && !!auth.lark) ||
    (platform === 'discord' && !!auth.discord)
  );
}

/** Null when the call is authentic, else the reason it is not. */
export function verifyWebhook(auth: WebhookAuth, platform: string, req: WebhookRequest): string | null {
  switch (platform) {
    case 'slack': {
      if (!auth.slack) return 'no slack signing secret is configured';
      const ts = header(req, 'x-slack-request-timestamp');
      const sig = header(req, 'x-slack-signature');
      if (!ts || !sig) return 'missing X-Slack-Request-Timestamp or X-Slack-Signature';
      if (!/^\d+$/.test(ts) || Math.abs(req.nowS - Number(ts)) > SLACK_MAX_SKEW_S) return 'the Slack request timestamp is too old or malformed';
      const expected = `v0=${createHmac('sha256', auth.slack.signing_secret).update(`v0:${ts}:${req.rawBody}`).digest('hex')}`;
      return sameText(sig, expected) ? null : 'the Slack signature does not match';
    }
    case 'telegram': {
      if (!auth.telegram) return 'no telegram secret token is configured';
      const got = header(req, 'x-telegram-bot-api-secret-token');
      return got && sameText(got, auth.telegram.secret_token) ? null : 'missing or wrong X-Telegram-Bot-Api-Secret-Token';
    }
    case 'lark': {
      if (!auth.lark) return 'no lark verification token is configured';
      const body = req.body;
      const token = isRecord(body) ? (isRecord(body.header) ? body.header.token : body.token) : undefined;
      return typeof token === 'string' && sameText(token, auth.lark.verification_token) ? null : 'missing or wrong Lark verification token';
    }
    case 'discord': {
      if (!auth.discord) return 'no discord public key is configured';
      const sig = header(req, 'x-signature-ed25519');
      const ts = header(req, 'x-signature-timestamp');
      if (!sig || !ts || !/^[0-9a-fA-F]{128}$/.test(sig)) return 'missing or malformed X-Signature-Ed25519 / X-Signature-Timestamp';
      // The signature covers the timestamp, so a recorded request cannot be replayed once it is stale.
      if (!/^\d+$/.test(ts) || Math.abs(req.nowS - Number(ts)) > DISCORD_MAX_SKEW_S) return 'the Discord request timestamp is too old or malformed';
      const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(auth.discord.public_key, 'hex')]), format: 'der', type: 'spki' });
      return verify(null, Buffer.from(ts + req.rawBody), key, Buffer.from(sig, 'hex')) ? null : 'the Discord signature does not match';
    }
    default:
      return `${platform} webhooks have no signature scheme; use the bearer token`;
  }
}
