// `lbot state list|get|set|delete`: host-owned runner state, for operators; a scope is named by conversation or actor.
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
import { localTime, table } from './shared/table.js';
import type { CliContext, GetContext } from './shared/context.js';
import { resolveScopeKey, scopeKeyMatches } from '../core/host/state-target.js';
import * as shapes from '../core/shapes/index.js';

const TargetFlagsSchema = z.object({
  scopeKey: z.string().min(1).optional(),
  conversation: z.string().min(1).optional(),
  thread: z.string().min(1).optional(),
  actor: z.string().min(1).optional(),
  actorType: z.string().min(1).optional(),
  runner: z.string().min(1).optional(),
  binding: z.string().min(1).optional(),
});

/** The flags that name one state scope: a conversation or an actor (scope keys are built from them), or a raw scope key. */
function targetFlags(cmd: Command): Command {
  return cmd
    .option('--conversation <id>', 'the conversation scope (see lbot conversations)')
    .option('--thread <id>', 'with --conversation: its thread')
    .option('--actor <id>', 'the actor scope')
    .option('--actor-type <type>', 'with --actor: its type (default: any; user when new state is set)')
    .option('--runner <id>', 'the runner whose state it is, when several keep state there')
    .option('--binding <id>', 'the binding whose state it is, when several keep state there')
    .option('--scope-key <key>', 'a raw scope key (as lbot state list prints it)');
}

async function scopeKeyOf(ctx: CliContext, raw: unknown, create: boolean): Promise<string> {
  const t = parseFlags(TargetFlagsSchema, raw);
  if (t.scopeKey !== undefined && t.conversation === undefined && t.actor === undefined) return resolveScopeKey(t, [], false);
  const entries = await withStores(ctx, (s) => s.state.entries({ ...(t.runner ? { runner_id: t.runner } : {}) }));
  const known = entries.map((e) => e.scope_key);
  return resolveScopeKey(t, known, create);
}

export function registerState(program: Command, getCtx: GetContext): void {
  const state = program.command('state').description('Inspect and edit runner state (conversation, actor, subject and runner scopes)');
  state
    .command('list')
    .description('list state entries {runner_id, binding_id, scope, scope_key, key, value}')
    .option('--runner <id>', 'only this runner')
    .option('--binding <id>', 'only this binding')
    .option('--scope <scope>', 'conversation | actor | subject | runner')
    .option('--limit <n>', 'at most N entries')
    .option('--conversation <id>', 'only the state of this conversation')
    .option('--actor <id>', 'only the state of this actor')
    .action(async (raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(
        z.object({
          runner: z.string().optional(),
          binding: z.string().optional(),
          scope: StateScopeSchema.optional(),
          limit: LimitFlag,
          conversation: z.string().min(1).optional(),
          actor: z.string().min(1).optional(),
        }),
        raw,
      );
      const target = { conversation: f.conversation, actor: f.actor };
      const entries = await withStores(ctx, (s) =>
        s.state.entries({
          ...(f.runner ? { runner_id: f.runner } : {}),
          ...(f.binding ? { binding_id: f.binding } : {}),
          ...(f.scope ? { scope: f.scope } : {}),
          ...(f.conversation || f.actor ? {} : f.limit ? { limit: f.limit } : {}),
        }),
      );
      const picked = f.conversation || f.actor ? entries.filter((e) => scopeKeyMatches(e.scope_key, target)).slice(0, f.limit) : entries;
      ctx.output.list(shapes.StateEntry, picked, (l) =>
        l.length
          ? table([['SCOPE', 'KEY', 'VALUE', 'UPDATED'], ...l.map((e) => [e.scope_key, e.key, JSON.stringify(e.value), localTime(e.updated_at)])])
          : 'no state',
      );
    });
  targetFlags(state.command('get <key>').description('print one value (name the scope with --conversation, --actor or --scope-key)')).action(
    async (key: string, raw: unknown) => {
      const ctx = getCtx();
      const f = { scopeKey: await scopeKeyOf(ctx, raw, false) };
      const got = await withStores(ctx, (s) => s.state.get(f.scopeKey, aliasStateKey(key)));
      if (!got.found) throw new LbotError('not_found', `state key ${key} not found under ${f.scopeKey}`);
      ctx.output.item(shapes.StateValue, { key: aliasStateKey(key), value: got.value }, (v) => JSON.stringify(v.value));
    },
  );
  targetFlags(state.command('set <key> <json>').description('set one value (JSON, at most 262,144 bytes)')).action(
    async (key: string, json: string, raw: unknown) => {
      const ctx = getCtx();
      const f = { scopeKey: await scopeKeyOf(ctx, raw, true) };
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
    },
  );
  targetFlags(state.command('delete <key>').description('delete one value')).action(async (key: string, raw: unknown) => {
    const ctx = getCtx();
    const f = { scopeKey: await scopeKeyOf(ctx, raw, false) };
    const deleted = await withStores(ctx, (s) => s.state.delete(f.scopeKey, aliasStateKey(key)));
    if (!deleted) throw new LbotError('not_found', `state key ${key} not found under ${f.scopeKey}`);
    ctx.output.item(shapes.StateChange, { ok: true, key: aliasStateKey(key), scope_key: f.scopeKey, deleted: true }, () => null);
  });
}
