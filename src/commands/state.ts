// `lbot state list|get|set|delete`: host-owned runner state, for operators (scope keys come from `state list`).
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { StateScopeSchema } from '../core/protocol/binding.js';
import { serializeStateValue, STATE_VALUE_LIMIT_BYTES } from '../core/host/api/state.js';
import { aliasStateKey, parseScopeKey } from '../core/host/state-scope.js';
import { ApiError } from '../core/host/api-error.js';
import { parseJsonText } from '../core/json-parse.js';
import { parseFlags } from './shared/flags.js';
import { LimitFlag } from './shared/schemas.js';
import { withStores } from './shared/stores.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

export function registerState(program: Command, getCtx: GetContext): void {
  const state = program.command('state').description('Inspect and edit runner state (conversation, actor, subject and runner scopes)');
  state
    .command('list')
    .description('list state entries {runner_id, binding_id, scope, scope_key, key, value}')
    .option('--runner <id>', 'only this runner')
    .option('--binding <id>', 'only this binding')
    .option('--scope <scope>', 'conversation | actor | subject | runner')
    .option('--limit <n>', 'at most N entries')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(
        z.object({ runner: z.string().optional(), binding: z.string().optional(), scope: StateScopeSchema.optional(), limit: LimitFlag }),
        raw,
      );
      const entries = await withStores(ctx, (s) =>
        s.state.entries({
          ...(f.runner ? { runner_id: f.runner } : {}),
          ...(f.binding ? { binding_id: f.binding } : {}),
          ...(f.scope ? { scope: f.scope } : {}),
          ...(f.limit ? { limit: f.limit } : {}),
        }),
      );
      ctx.output.list(shapes.StateEntry, entries, (l) => l.map((e) => `${e.scope_key}  ${e.key} = ${JSON.stringify(e.value)}`).join('\n') || 'no state');
    });
  state
    .command('get <key>')
    .description('print one value')
    .requiredOption('--scope-key <key>', 'scope key (see `state list`)')
    .action(async (key: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ scopeKey: z.string().min(1) }), raw);
      const got = await withStores(ctx, (s) => s.state.get(f.scopeKey, aliasStateKey(key)));
      if (!got.found) throw new LbotError('not_found', `state key ${key} not found under ${f.scopeKey}`);
      ctx.output.item(shapes.StateValue, { key: aliasStateKey(key), value: got.value }, (v) => JSON.stringify(v.value));
    });
  state
    .command('set <key> <json>')
    .description('set one value (JSON, at most 262,144 bytes)')
    .requiredOption('--scope-key <key>', 'scope key (see `state list`)')
    .action(async (key: string, json: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ scopeKey: z.string().min(1) }), raw);
      const { scope, identity } = parseScopeKey(f.scopeKey);
      const value = parseJsonText(json, '<json>', 'invalid_argument');
      let text: string;
      try {
        text = serializeStateValue(value, STATE_VALUE_LIMIT_BYTES, key);
      } catch (err) {
        if (err instanceof ApiError) throw new LbotError(err.code === 'payload_too_large' ? 'payload_too_large' : 'invalid_argument', err.message);
        throw err;
      }
      await withStores(ctx, (s) => s.state.set(scope, f.scopeKey, aliasStateKey(key), text, { ...identity, bot_id: null, workspace_id: null }));
      ctx.output.item(shapes.StateChange, { ok: true, key: aliasStateKey(key), scope_key: f.scopeKey, deleted: false }, () => null);
    });
  state
    .command('delete <key>')
    .description('delete one value')
    .requiredOption('--scope-key <key>', 'scope key (see `state list`)')
    .action(async (key: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ scopeKey: z.string().min(1) }), raw);
      const deleted = await withStores(ctx, (s) => s.state.delete(f.scopeKey, aliasStateKey(key)));
      if (!deleted) throw new LbotError('not_found', `state key ${key} not found under ${f.scopeKey}`);
      ctx.output.item(shapes.StateChange, { ok: true, key: aliasStateKey(key), scope_key: f.scopeKey, deleted: true }, () => null);
    });
}
