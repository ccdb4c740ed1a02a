// `lbot platform add|list|rm`: the accounts replies are sent with, kept in the config (0600).
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { DELIVERY_PLATFORMS, describeAccount, PlatformAccountSchema } from '../core/delivery/accounts.js';
import { parseFlags } from './shared/flags.js';
import type { GetContext } from './shared/context.js';
import { firstIssue } from '../core/zod-issue.js';
import * as shapes from '../core/shapes/index.js';

const AddFlagsSchema = z.object({
  platform: z.enum(DELIVERY_PLATFORMS),
  tokenEnv: z.string().optional(),
  apiBase: z.string().optional(),
  botId: z.string().optional(),
  appId: z.string().optional(),
  callbackSecretEnv: z.string().optional(),
  replace: z.boolean().optional(),
});

const accountsOf = (raw: Record<string, unknown>) => (Array.isArray(raw.platforms) ? raw.platforms.filter(isRecord) : []);

export function registerPlatform(program: Command, getCtx: GetContext): void {
  const platform = program.command('platform').description('Manage platform accounts: the credentials replies are delivered with');
  platform
    .command('add <name>')
    .description('add an account; the token stays in the env variable named by --token-env')
    .requiredOption('--platform <platform>', DELIVERY_PLATFORMS.join('|'))
    .option('--token-env <VAR>', 'env variable holding the bot token (Lark: the app secret; http: the signing secret)')
    .option('--api-base <url>', 'API base URL (self-hosted Bot API servers, emulators; http: the callback URL)')
    .option('--bot-id <id>', 'the bot_id of the events this account answers (default <platform>:<name>)')
    .option('--app-id <id>', 'Lark: the app id')
    .option('--callback-secret-env <VAR>', 'http: env variable holding the secret callbacks are signed with (default: the --token-env secret)')
    .option('--replace', 'replace an existing account with the same name')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(AddFlagsSchema, raw);
      if (!f.tokenEnv && f.platform !== 'onebot')
        throw new LbotError('invalid_argument', `--token-env is required for ${f.platform}`, {
          hint: 'name the env variable that holds the token, e.g. --token-env TELEGRAM_BOT_TOKEN',
        });
      if (f.platform === 'lark' && !f.appId) throw new LbotError('invalid_argument', '--app-id is required for lark');
      if (f.callbackSecretEnv && f.platform !== 'http') throw new LbotError('invalid_argument', '--callback-secret-env is for --platform http only');
      if (f.platform === 'http' && !f.apiBase)
        throw new LbotError('invalid_argument', '--api-base is required for http: the callback URL replies are POSTed to', {
          hint: 'e.g. --api-base https://backend.example/lbot/callback',
        });
      const value = {
        name,
        platform: f.platform,
        token_env: f.tokenEnv ?? null,
        api_base: f.apiBase ?? null,
        bot_id: f.botId ?? null,
        app_id: f.appId ?? null,
        ...(f.callbackSecretEnv ? { callback_secret_env: f.callbackSecretEnv } : {}),
      };
      const parsed = PlatformAccountSchema.safeParse(value);
      if (!parsed.success) {
        const issue = firstIssue(parsed.error, 'account');
        throw new LbotError('invalid_argument', issue.text, { details: { path: issue.path } });
      }
      await ctx.configFile().update((rawConfig) => {
        const list = accountsOf(rawConfig);
        if (list.some((x) => x.name === name) && !f.replace)
          throw new LbotError('invalid_argument', `platform account ${name} already exists`, { hint: 'pass --replace to overwrite it' });
        rawConfig.platforms = [...list.filter((x) => x.name !== name), value];
      });
      ctx.output.item(
        shapes.PlatformAccount,
        describeAccount(parsed.data, process.env),
        (d) => `added ${String(d.name)} (${String(d.platform)}, bot ${String(d.bot_id)})`,
      );
    });
  platform
    .command('list')
    .description('list accounts (tokens are never shown)')
    .action(() => {
      const ctx = getCtx();
      const list = ctx.configFile().config.platforms.map((a) => describeAccount(a, process.env));
      ctx.output.list(
        shapes.PlatformAccount,
        list,
        (l) =>
          l
            .map(
              (a) =>
                `${a.name}  ${a.platform}  bot ${a.bot_id}  ${a.api_base ?? '(no api base)'}  token ${a.token_env === null ? '(none)' : `$${a.token_env} ${a.token ?? ''}`}`,
            )
            .join('\n') || 'no platform accounts',
      );
    });
  platform
    .command('rm <name>')
    .description('remove an account')
    .action(async (name: string) => {
      const ctx = getCtx();
      if (!ctx.configFile().config.platforms.some((a) => a.name === name))
        throw new LbotError('not_found', `platform account ${name} not found`, { hint: 'lbot platform list shows the accounts' });
      await ctx.configFile().update((rawConfig) => {
        rawConfig.platforms = accountsOf(rawConfig).filter((x) => x.name !== name);
      });
      ctx.output.item(shapes.Removed, { ok: true, removed: name }, () => `removed ${name}`);
    });
}
