// `lbot schedule add|list|rm|run-now`: events fired on a cron schedule by `lbot serve`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { LbotError } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { cronOf, ScheduleSchema, type Schedule } from '../core/schedules/schedule.js';
import { TOKEN_FILE_NAME } from '../runtime/server/token.js';
import { parseFlags } from './shared/flags.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';

const schedulesOf = (raw: Record<string, unknown>) => (Array.isArray(raw.schedules) ? raw.schedules.filter(isRecord) : []);

function nextTick(s: Schedule): string | null {
  const next = s.enabled ? cronOf(s).nextRun() : null;
  return next ? next.toISOString() : null;
}

export function registerSchedule(program: Command, getCtx: GetContext): void {
  const schedule = program.command('schedule').description('Manage schedules: events lbot serve fires on a cron expression');
  schedule
    .command('add <name>')
    .description('add a schedule; each tick fires the event of --event (event_type schedule.tick unless it says otherwise)')
    .requiredOption('--cron <expr>', 'cron expression: 5 fields, or 6 with seconds first ("* * * * * *" is every second)')
    .option('--event <file>', 'JSON file with the event fields each tick carries (input, data, conversation_id, …)')
    .option('--tz <zone>', 'IANA time zone the expression is read in (default: the host zone)')
    .option('--replace', 'replace an existing schedule with the same name')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ cron: z.string(), event: z.string().optional(), tz: z.string().optional(), replace: z.boolean().optional() }), raw);
      const { readJsonFile } = await import('../runtime/input-files.js');
      const event = f.event ? await readJsonFile(f.event, '--event') : {};
      if (!isRecord(event)) throw new LbotError('invalid_argument', '--event: the file must hold a JSON object');
      const value = { name, cron: f.cron, tz: f.tz ?? null, event, enabled: true };
      const parsed = ScheduleSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new LbotError('invalid_argument', `${issue?.path.join('.') || 'schedule'}: ${issue?.message ?? 'invalid'}`);
      }
      cronOf(parsed.data);
      await ctx.configFile().update((rawConfig) => {
        const list = schedulesOf(rawConfig);
        if (list.some((x) => x.name === name) && !f.replace)
          throw new LbotError('invalid_argument', `schedule ${name} already exists`, { hint: 'pass --replace to overwrite it' });
        rawConfig.schedules = [...list.filter((x) => x.name !== name), value];
      });
      ctx.output.item(
        shapes.Schedule,
        { ...parsed.data, next_tick: nextTick(parsed.data) },
        (s) => `added ${s.name} (${s.cron}${s.tz ? ` ${s.tz}` : ''}); next tick ${s.next_tick ?? '-'}; a running lbot serve picks it up when restarted`,
      );
    });
  schedule
    .command('list')
    .description('list schedules with their next tick')
    .action(() => {
      const ctx = getCtx();
      const list = ctx.configFile().config.schedules.map((s) => ({ ...s, next_tick: nextTick(s) }));
      ctx.output.list(
        shapes.Schedule,
        list,
        (l) =>
          l.map((s) => `${s.name}  ${s.cron}${s.tz ? ` (${s.tz})` : ''}  next ${s.next_tick ?? '-'}${s.enabled ? '' : '  (disabled)'}`).join('\n') ||
          'no schedules',
      );
    });
  schedule
    .command('rm <name>')
    .description('remove a schedule')
    .action(async (name: string) => {
      const ctx = getCtx();
      if (!ctx.configFile().config.schedules.some((s) => s.name === name)) throw new LbotError('not_found', `schedule ${name} not found`);
      await ctx.configFile().update((rawConfig) => {
        rawConfig.schedules = schedulesOf(rawConfig).filter((x) => x.name !== name);
      });
      ctx.output.item(shapes.Removed, { ok: true, removed: name }, () => `removed ${name}`);
    });
  schedule
    .command('run-now <name>')
    .description('fire the schedule once now, through the running lbot serve of this data dir')
    .option('--url <url>', 'the serve URL (default http://<serve.host>:<serve.port> from the config)')
    .action(async (name: string, raw: unknown) => {
      const ctx = getCtx();
      const f = parseFlags(z.object({ url: z.url().optional() }), raw);
      const config = ctx.configFile().config;
      const url = f.url ?? `http://${config.serve.host}:${config.serve.port}`;
      let token = process.env.LBOT_API_TOKEN;
      if (!token) {
        try {
          token = readFileSync(path.join(ctx.flags.dataDir, TOKEN_FILE_NAME), 'utf8').trim();
        } catch {
          throw new LbotError('invalid_argument', 'no serve token: set LBOT_API_TOKEN or start lbot serve on this data dir', {
            hint: 'schedules fire inside lbot serve',
          });
        }
      }
      let res: Response;
      try {
        res = await fetch(`${url.replace(/\/+$/, '')}/v1/schedules/${encodeURIComponent(name)}/run`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
      } catch (err) {
        throw new LbotError('invalid_argument', `cannot reach lbot serve at ${url}: ${err instanceof Error ? err.message : String(err)}`, {
          hint: 'start lbot serve, or pass --url',
        });
      }
      const body: unknown = await res.json().catch(() => null);
      if (res.status !== 202 || !isRecord(body) || typeof body.run_id !== 'string') {
        const message = isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : `HTTP ${res.status}`;
        throw new LbotError(res.status === 404 ? 'not_found' : 'invalid_argument', `schedule ${name}: ${message}`);
      }
      ctx.output.item(shapes.RunStarted, { run_id: body.run_id }, (r) => `started run ${r.run_id}`);
    });
}
