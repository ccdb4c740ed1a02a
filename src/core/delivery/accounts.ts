// Platform accounts: the credentials lbot replies with, bound to bots by bot_id (`lbot platform add`).
// The config keeps the name of the env variable that holds a token, never the token itself.
import { z } from 'zod';
import { LbotError } from '../errors.js';

/** `http` is lbot's generic HTTP bot (the LangBot HTTP-bot contract, docs/http-bot.md): replies go to a callback URL. */
export const DELIVERY_PLATFORMS = ['telegram', 'slack', 'discord', 'lark', 'onebot', 'http'] as const;
export type DeliveryPlatform = (typeof DELIVERY_PLATFORMS)[number];

/** Where each platform's API lives unless the account says otherwise (self-hosted servers, emulators). */
export const DEFAULT_API_BASE: Record<DeliveryPlatform, string | null> = {
  telegram: 'https://api.telegram.org',
  slack: 'https://slack.com/api',
  discord: 'https://discord.com/api/v10',
  lark: 'https://open.feishu.cn',
  // OneBot implementations listen wherever they were configured; there is no public default.
  onebot: null,
  // The HTTP bot's api_base is the caller's callback URL.
  http: null,
};

const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const PlatformAccountSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'names are 1-64 letters, digits, dots, dashes or underscores'),
  platform: z.enum(DELIVERY_PLATFORMS),
  /**
   * The env variable holding the bot token (Lark: the app secret; http: the signing secret). Optional for
   * OneBot without an access token.
   */
  token_env: EnvNameSchema.nullable().default(null),
  api_base: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .default(null),
  /** The bot whose events this account answers (the envelope's bot_id); default `<platform>:<name>`. */
  bot_id: z.string().min(1).nullable().default(null),
  /** Lark: the app id exchanged with the secret for a tenant access token. */
  app_id: z.string().min(1).nullable().default(null),
  /** http: the env variable holding the secret callbacks are signed with; default the inbound secret (token_env). */
  callback_secret_env: EnvNameSchema.nullable().default(null),
});
export type PlatformAccount = z.infer<typeof PlatformAccountSchema>;

export const accountBotId = (a: Pick<PlatformAccount, 'name' | 'platform' | 'bot_id'>): string => a.bot_id ?? `${a.platform}:${a.name}`;

export function accountApiBase(a: PlatformAccount): string {
  const base = a.api_base ?? DEFAULT_API_BASE[a.platform];
  if (!base)
    throw new LbotError('config.invalid', `platform account ${a.name}: ${a.platform} needs api_base (where its HTTP API listens)`, {
      hint: `lbot platform add ${a.name} --platform ${a.platform} --api-base URL --replace`,
    });
  return base.replace(/\/+$/, '');
}

/** The account's token from the environment; null when the account needs none (OneBot without access token). */
export function accountToken(a: PlatformAccount, env: NodeJS.ProcessEnv): string | null {
  if (a.token_env === null) return null;
  const value = env[a.token_env];
  if (!value) {
    throw new LbotError('config.invalid', `platform account ${a.name}: ${a.token_env} is not set`, {
      details: { account: a.name, token_env: a.token_env },
      hint: `export ${a.token_env}=… before starting lbot serve`,
    });
  }
  return value;
}

/** The account that answers events of `botId` (the envelope's bot_id) on `platform`. */
export function accountForBot(accounts: readonly PlatformAccount[], platform: string, botId: string | null): PlatformAccount | null {
  const same = accounts.filter((a) => a.platform === platform);
  if (botId !== null) return same.find((a) => accountBotId(a) === botId) ?? null;
  // An event that does not name its bot is answered only when exactly one account could send it.
  return same.length === 1 ? (same[0] ?? null) : null;
}

/** The secret an account's outbound requests are signed with: the HTTP bot's callback secret, else its token. */
export function accountSigningSecret(a: PlatformAccount, env: NodeJS.ProcessEnv): string | null {
  if (a.platform !== 'http' || a.callback_secret_env === null) return accountToken(a, env);
  const value = env[a.callback_secret_env];
  if (!value)
    throw new LbotError('config.invalid', `platform account ${a.name}: ${a.callback_secret_env} is not set`, {
      details: { account: a.name, callback_secret_env: a.callback_secret_env },
      hint: `export ${a.callback_secret_env}=… before starting lbot serve`,
    });
  return value;
}

/** What `lbot platform list` shows: the env name and whether it is set, never the token. */
export type AccountDescription = {
  name: string;
  platform: PlatformAccount['platform'];
  bot_id: string;
  api_base: string | null;
  token_env: string | null;
  token: string | null;
  app_id?: string;
  callback_secret_env?: string;
};

export function describeAccount(a: PlatformAccount, env: NodeJS.ProcessEnv): AccountDescription {
  return {
    name: a.name,
    platform: a.platform,
    bot_id: accountBotId(a),
    api_base: a.api_base ?? DEFAULT_API_BASE[a.platform],
    token_env: a.token_env,
    token: a.token_env === null ? null : env[a.token_env] ? '****' : '(not set)',
    ...(a.app_id ? { app_id: a.app_id } : {}),
    ...(a.callback_secret_env ? { callback_secret_env: a.callback_secret_env } : {}),
  };
}
