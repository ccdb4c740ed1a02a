// The shared dispatch table through the three real entry points — `run` (replayEvents), `dev`
// (startDev + runEvent) and `serve` (startServe over HTTP) — on the same config, events and real
// plugin processes: each must pick the same binding and runner, one run per event.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConfigFile } from '../../../src/core/stores/config-file.js';
import type { RunOutcome } from '../../../src/core/host/host.js';
import { startDev, type DevSession } from '../../../src/runtime/dev/session.js';
import { replayEvents } from '../../../src/runtime/replay.js';
import { startServe, type ServeHandle } from '../../../src/runtime/server/serve.js';
import { DISPATCH_CASES, DISPATCH_CONFIG, type DispatchCase } from '../../helpers/dispatch-table.js';
import { createTempPlugins, FIXTURE_EVENTS, type TempPlugins } from '../../helpers/plugins.js';

const TOKEN = 't'.repeat(40);
type Picked = { binding_id: string; runner_id: string; reply: string } | { error: string };

let plugins: TempPlugins;
let dataDir: string;
let scratch: string;

beforeAll(async () => {
  plugins = await createTempPlugins(['echo', 'scripted']);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'lbot-dispatch-'));
  scratch = await mkdtemp(path.join(os.tmpdir(), 'lbot-dispatch-files-'));
  await writeFile(path.join(dataDir, 'lbot.config.json'), JSON.stringify(DISPATCH_CONFIG));
});

afterAll(async () => {
  await plugins.cleanup();
  await rm(dataDir, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
});

/** The runner config of a case as a `--config` file (null: none). */
async function configFileOf(c: DispatchCase, i: number): Promise<string | undefined> {
  if (!c.runnerConfig) return undefined;
  const file = path.join(scratch, `config-${i}.json`);
  await writeFile(file, JSON.stringify(c.runnerConfig));
  return file;
}

const picked = (o: Pick<RunOutcome, 'binding_id' | 'runner_id' | 'reply'>): Picked => ({
  binding_id: o.binding_id,
  runner_id: o.runner_id,
  reply: o.reply ?? '',
});

function expectPick(got: Picked, c: DispatchCase): void {
  if ('error' in c.expected) {
    expect(got).toEqual({ error: c.expected.error });
    return;
  }
  expect(got).toMatchObject({ binding_id: c.expected.binding_id, runner_id: c.expected.runner_id });
  expect('reply' in got && got.reply.startsWith(c.expected.reply_prefix), JSON.stringify(got)).toBe(true);
}

describe('dispatch table: lbot run', () => {
  for (const [i, c] of DISPATCH_CASES.entries()) {
    it(c.name, async () => {
      let got: Picked;
      try {
        const { outcomes } = await replayEvents({
          dataDir,
          pluginsDir: plugins.pluginsDir,
          config: openConfigFile(dataDir, {}).config,
          eventFile: path.join(FIXTURE_EVENTS, c.event),
          platform: 'auto',
          runner: c.runner,
          configFile: await configFileOf(c, i),
          vars: {},
          signal: new AbortController().signal,
          warn: () => undefined,
        });
        expect(outcomes).toHaveLength(1);
        got = picked(outcomes[0]!);
      } catch (err) {
        got = { error: err instanceof Error && 'code' in err ? String(err.code) : String(err) };
      }
      expectPick(got, c);
    });
  }
});

describe('dispatch table: lbot serve', () => {
  let serve: ServeHandle;
  beforeAll(async () => {
    serve = await startServe({
      dataDir,
      pluginsDir: plugins.pluginsDir,
      configFile: openConfigFile(dataDir, {}),
      port: 0,
      env: { LBOT_API_TOKEN: TOKEN },
      warn: () => undefined,
    });
  });
  afterAll(() => serve.close());

  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${serve.url}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  /** The run as its record says once it has ended (a fast run may be over before the answer arrives). */
  const finished = async (run_id: string): Promise<Picked> => {
    for (;;) {
      const res = await fetch(`${serve.url}/v1/runs/${run_id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const run = (await res.json()) as {
        status: string;
        binding_id: string;
        runner_id: string;
        results: Array<{ data?: { message?: { content?: unknown } } }>;
      };
      if (run.status !== 'running') {
        const reply = run.results.map((r) => r.data?.message?.content).find((t) => typeof t === 'string');
        return { binding_id: run.binding_id, runner_id: run.runner_id, reply: typeof reply === 'string' ? reply : '' };
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  for (const c of DISPATCH_CASES) {
    it(c.name, async () => {
      const event: unknown = JSON.parse(await readFile(path.join(FIXTURE_EVENTS, c.event), 'utf8'));
      // A named runner goes to POST /v1/runs; an event alone is routed by POST /v1/events.
      const res = c.runner
        ? await post('/v1/runs', { event, runner_id: c.runner, ...(c.runnerConfig ? { config: c.runnerConfig } : {}) })
        : await post('/v1/events', event);
      if (res.status >= 400) return expectPick({ error: String((res.json.error as { code: string }).code) }, c);
      const ids = c.runner ? [String(res.json.run_id)] : (res.json.run_ids as string[]);
      expect(ids).toHaveLength(1);
      expectPick(await finished(ids[0]!), c);
    });
  }
});

describe('dispatch table: lbot dev', () => {
  let dev: DevSession;
  const warnings: string[] = [];
  beforeAll(async () => {
    dev = await startDev({ dataDir, dir: plugins.pluginsDir, configFile: openConfigFile(dataDir, {}), port: 0, watch: false, warn: () => undefined });
    dev.bus.subscribe((e) => e.type === 'dev.warning' && warnings.push(e.message));
  });
  afterAll(() => dev.close());

  for (const [i, c] of DISPATCH_CASES.entries()) {
    // dev alone falls back to the served runners when nothing matches (docs/host.md); asserted below.
    if ('error' in c.expected) continue;
    it(c.name, async () => {
      // The runner and config are options of the session: one session per named runner.
      const session = c.runner
        ? await startDev({
            dataDir,
            dir: plugins.pluginsDir,
            configFile: openConfigFile(dataDir, {}),
            port: 0,
            watch: false,
            runner: c.runner,
            runnerConfigFile: await configFileOf(c, i),
            warn: () => undefined,
          })
        : dev;
      const seen: RunOutcome[] = [];
      const off = session.bus.subscribe((e) => e.type === 'run.ended' && seen.push(e.outcome));
      try {
        await session.runEvent(path.join(FIXTURE_EVENTS, c.event));
      } finally {
        off();
        if (session !== dev) await session.close();
      }
      expect(seen).toHaveLength(1);
      expectPick(picked(seen[0]!), c);
    });
  }

  it('an event no binding handles falls back to the served runners: two defaults served, none picked', async () => {
    await dev.runEvent(path.join(FIXTURE_EVENTS, 'friend.json'));
    expect(warnings.at(-1)).toMatch(/friend\.json: no runner to pick in .*: it has several; pass --runner/);
  });
});
