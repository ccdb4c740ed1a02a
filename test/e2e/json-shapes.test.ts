// Every command's --json output walked through its shape (src/core/shapes, docs/cli.md "JSON output"): one
// data dir, the built binary, LBOT_CHECK_SHAPES=1 so lbot itself refuses a value that breaks its shape, and
// the output parsed here with the same schemas (an item is one object, a list one array, a stream NDJSON).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { Shape } from '../../src/core/shapes/index.js';
import * as shapes from '../../src/core/shapes/index.js';
import { SHAPES } from '../../src/core/shapes/registry.js';
import { REPO_ROOT } from '../helpers/plugins.js';
import { api, done, emit, say, scenario, SCRIPTED, type CliResult, type Scenario } from './host/harness.js';

type Kind = 'item' | 'list' | 'stream' | 'error';
type Row = { args: string[]; shape: Shape; kind: Kind; env?: Record<string, string> };

const CHECK = { LBOT_CHECK_SHAPES: '1' };
/** Shapes this walk does not print, each with where its output is checked instead. */
const ELSEWHERE: Record<string, string> = {
  BoxServeLine: 'a long-running box server (test/e2e/box-serve.test.ts and test/integration/box/remote.test.ts start it under LBOT_CHECK_SHAPES)',
  WorkerLine: 'a long-running queue worker (test/e2e/queue.test.ts starts two under LBOT_CHECK_SHAPES)',
  ServeLine: 'a long-running serve/dev process (test/e2e/serve, test/e2e/dev print it under LBOT_CHECK_SHAPES in their own processes)',
  RunStarted: 'schedule run-now needs a running serve (test/e2e/schedules)',
  BoxExec: 'needs a usable sandbox (test/e2e/box-cli.test.ts)',
  BoxProcess: 'needs a usable sandbox (test/e2e/box-cli.test.ts)',
  BoxProcessStopped: 'needs a usable sandbox (test/e2e/box-cli.test.ts)',
  ConformanceReport: 'the conformance suite takes tens of seconds (test/e2e/dev/runner-test.test.ts)',
  ScaffoldedRunner: 'runner init writes and links a whole project (test/e2e/dev/scaffold.test.ts)',
  SkillCreated: 'skill new (test/e2e/skill-cli.test.ts)',
  McpLogin: 'needs an OAuth server (test/e2e/mcp/oauth.test.ts)',
  McpLogout: 'needs an OAuth server (test/e2e/mcp/oauth.test.ts)',
  FakeModelServer: 'a long-running server (test/e2e/host/models.test.ts)',
  KbProgress: 'checked here, on the stderr of kb add',
  JsonSchema: 'checked here by lbot schema NAME',
};

function parsed(r: CliResult, row: Row): unknown[] {
  const what = `lbot ${row.args.join(' ')}`;
  if (row.kind === 'stream')
    return r.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  expect(lines, `${what}: one line of JSON`).toHaveLength(1);
  const value: unknown = JSON.parse(lines[0] ?? 'null');
  if (row.kind === 'list') {
    expect(Array.isArray(value), `${what}: a list is one JSON array`).toBe(true);
    return Array.isArray(value) ? value : [];
  }
  expect(Array.isArray(value), `${what}: an item is one object`).toBe(false);
  return [value];
}

function check(r: CliResult, row: Row): void {
  const what = `lbot ${row.args.join(' ')}`;
  if (row.kind === 'error') expect(r.exitCode, `${what}: ${r.stderr}`).not.toBe(0);
  else expect(r.exitCode, `${what}: ${r.stderr}`).toBe(0);
  for (const v of parsed(r, row)) {
    const ok = (row.shape.schema as z.ZodType).safeParse(v);
    expect(
      ok.success,
      `${what} → ${row.shape.name}: ${ok.success ? '' : JSON.stringify(ok.error.issues.slice(0, 3))}\n${JSON.stringify(v).slice(0, 400)}`,
    ).toBe(true);
  }
}

describe('--json shapes of every command', () => {
  it('walks each command through its shape', async () => {
    const s: Scenario = await scenario();
    const lbot = (args: string[], env: Record<string, string> = {}) => s.lbot(['--json', ...args], { env: { ...CHECK, ...env } });
    const covered = new Set<string>();
    const walk = async (rows: Row[]) => {
      const results = await Promise.all(rows.map((row) => lbot(row.args, row.env)));
      rows.forEach((row, i) => {
        const r = results[i];
        if (!r) return;
        check(r, row);
        covered.add(row.shape.name);
      });
      return results;
    };

    // One real run that leaves a record of every kind: events, transcript, state, an artifact.
    const script = [
      api('state.set', { scope: 'conversation', key: 'k', value: { n: 1 } }),
      emit('artifact.created', { artifact_type: 'file', name: 'a.txt', content_base64: 'YQ==' }),
      say('pong'),
      done(),
    ];
    const run = await s.run(script, { json: true, verbose: true, env: CHECK });
    check(run, { args: ['run'], shape: shapes.StreamItem, kind: 'stream' });
    covered.add('StreamItem');
    const runId = String((JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { run_id?: unknown }).run_id);

    const doc = path.join(s.root, 'doc.md');
    await writeFile(doc, '# Harbour\n\nThe harbour opens at six.\n');
    const binding = await s.writeJson('binding.json', { binding_id: 'b-file', runner_id: SCRIPTED });
    const legacy = await s.writeJson('legacy.json', { ai: { runner: { runner: 'local-agent' }, 'local-agent': { model: 'm' } } });
    const echo = path.join(REPO_ROOT, 'fixtures', 'mcp', 'echo.js');
    const skillZip = path.join(REPO_ROOT, 'fixtures', 'skills', 'hello-skill.zip');

    // Writes first, one at a time (they share the config file).
    for (const row of [
      { args: ['binding', 'add', '--id', 'b1', '--runner', SCRIPTED], shape: shapes.Binding, kind: 'item' },
      { args: ['binding', 'add', binding], shape: shapes.Binding, kind: 'item' },
      { args: ['schedule', 'add', 'hourly', '--cron', '0 * * * *'], shape: shapes.Schedule, kind: 'item' },
      { args: ['platform', 'add', 'tg', '--platform', 'telegram', '--token-env', 'TG_TOKEN'], shape: shapes.PlatformAccount, kind: 'item' },
      { args: ['model', 'add', 'm', '--provider', 'fake', '--reply', 'hi', '--no-tools'], shape: shapes.Model, kind: 'item' },
      { args: ['mcp', 'add', 'echo', '--', process.execPath, echo], shape: shapes.McpServerConfig, kind: 'item' },
      { args: ['kb', 'create', 'docs'], shape: shapes.KbCreated, kind: 'item' },
      { args: ['kb', 'add', 'docs', doc], shape: shapes.KbIngestion, kind: 'item' },
      { args: ['skill', 'install', skillZip], shape: shapes.SkillInstall, kind: 'item' },
      { args: ['config', 'set', 'plugins.limits.memory_mb', '512'], shape: shapes.ConfigChange, kind: 'item' },
      { args: ['state', 'set', 'k2', '"v"', '--scope-key', 'placeholder'], shape: shapes.ErrorEnvelope, kind: 'error' },
    ] satisfies Row[]) {
      const [r] = await walk([row]);
      if (row.args[1] === 'add' && row.args[0] === 'kb' && r)
        for (const l of r.stderr.split('\n').filter((x) => x.startsWith('{'))) {
          expect(shapes.KbProgress.schema.safeParse(JSON.parse(l)).success, l).toBe(true);
          covered.add('KbProgress');
        }
    }

    // --quiet: the same result, no progress on stderr.
    const quiet = await lbot(['kb', 'reindex', 'docs', '--quiet']);
    check(quiet, { args: ['kb', 'reindex', 'docs', '--quiet'], shape: shapes.KbIngestion, kind: 'item' });
    expect(quiet.stderr).toBe('');

    const states = await lbot(['state', 'list']);
    const scopeKey = String((JSON.parse(states.stdout) as Array<{ scope_key?: unknown }>)[0]?.scope_key);
    const artifacts = await lbot(['artifacts', 'list']);
    const artifactId = String((JSON.parse(artifacts.stdout) as Array<{ artifact_id?: unknown }>)[0]?.artifact_id);

    // Reads, all at once.
    await walk([
      { args: ['runs', 'list'], shape: shapes.RunRecord, kind: 'list' },
      { args: ['runs', 'show', runId], shape: shapes.RunRecord, kind: 'item' },
      { args: ['events', 'list'], shape: shapes.EventRecord, kind: 'list' },
      { args: ['conversations'], shape: shapes.Conversation, kind: 'list' },
      { args: ['events', 'get', 'ev-1'], shape: shapes.EventRecord, kind: 'item' },
      { args: ['transcript', 'page', '--conversation', 'c1'], shape: shapes.TranscriptItem, kind: 'list' },
      { args: ['state', 'list'], shape: shapes.StateEntry, kind: 'list' },
      { args: ['state', 'list', '--conversation', 'c1'], shape: shapes.StateEntry, kind: 'list' },
      { args: ['state', 'get', 'k', '--conversation', 'c1'], shape: shapes.StateValue, kind: 'item' },
      { args: ['state', 'get', 'k', '--conversation', 'nope'], shape: shapes.ErrorEnvelope, kind: 'error' },
      { args: ['state', 'get', 'k', '--scope-key', scopeKey], shape: shapes.StateValue, kind: 'item' },
      { args: ['artifacts', 'list'], shape: shapes.Artifact, kind: 'list' },
      { args: ['artifacts', 'show', artifactId], shape: shapes.Artifact, kind: 'item' },
      { args: ['artifacts', 'read', artifactId], shape: shapes.ArtifactBytes, kind: 'item' },
      { args: ['runner', 'list'], shape: shapes.Runner, kind: 'list' },
      { args: ['runner', 'show', SCRIPTED], shape: shapes.RunnerDetail, kind: 'item' },
      { args: ['binding', 'list'], shape: shapes.Binding, kind: 'list' },
      { args: ['binding', 'show', 'b1'], shape: shapes.Binding, kind: 'item' },
      { args: ['binding', 'migrate', legacy], shape: shapes.Binding, kind: 'item' },
      { args: ['schedule', 'list'], shape: shapes.Schedule, kind: 'list' },
      { args: ['platform', 'list'], shape: shapes.PlatformAccount, kind: 'list' },
      { args: ['outbox', 'list'], shape: shapes.OutboxMessage, kind: 'list' },
      { args: ['db', 'status'], shape: shapes.DbSchema, kind: 'item' },
      { args: ['db', 'migrate'], shape: shapes.DbSchema, kind: 'item' },
      { args: ['model', 'list'], shape: shapes.Model, kind: 'list' },
      { args: ['model', 'show', 'm'], shape: shapes.ModelDetail, kind: 'item' },
      { args: ['model', 'test', 'm'], shape: shapes.ModelTest, kind: 'item' },
      { args: ['mcp', 'list'], shape: shapes.McpServer, kind: 'list' },
      { args: ['mcp', 'show', 'echo'], shape: shapes.McpServerDetail, kind: 'item' },
      { args: ['mcp', 'test', 'echo'], shape: shapes.McpTest, kind: 'item' },
      { args: ['mcp', 'tools'], shape: shapes.McpTool, kind: 'list' },
      { args: ['mcp', 'call', 'echo', 'echo', '--args', '{"text":"hi"}'], shape: shapes.McpCall, kind: 'item' },
      { args: ['kb', 'list'], shape: shapes.KnowledgeBase, kind: 'list' },
      { args: ['kb', 'show', 'docs'], shape: shapes.KbDetail, kind: 'item' },
      { args: ['kb', 'search', 'docs', 'harbour'], shape: shapes.KbSearch, kind: 'item' },
      { args: ['skill', 'list'], shape: shapes.Skill, kind: 'list' },
      { args: ['skill', 'show', 'hello-skill'], shape: shapes.SkillDetail, kind: 'item' },
      { args: ['skill', 'cat', 'hello-skill', 'SKILL.md'], shape: shapes.SkillFile, kind: 'item' },
      { args: ['skill', 'verify'], shape: shapes.SkillReport, kind: 'item' },
      { args: ['config', 'show'], shape: shapes.Config, kind: 'item' },
      { args: ['config', 'get', 'plugins.isolation'], shape: shapes.ConfigValue, kind: 'item' },
      { args: ['box', 'profiles'], shape: shapes.BoxProfile, kind: 'list' },
      { args: ['box', 'sessions'], shape: shapes.BoxSession, kind: 'list' },
      { args: ['box', 'errors'], shape: shapes.BoxError, kind: 'list' },
      { args: ['box', 'status'], shape: shapes.BoxStatus, kind: 'item' },
      { args: ['doctor'], shape: shapes.DoctorReport, kind: 'item' },
      { args: ['serve', 'token'], shape: shapes.ServeToken, kind: 'item' },
      { args: ['schema'], shape: shapes.ShapeInfo, kind: 'list' },
      { args: ['schema', 'RunRecord'], shape: shapes.JsonSchema, kind: 'item' },
      { args: ['runs', 'show', 'no-such-run'], shape: shapes.ErrorEnvelope, kind: 'error' },
      { args: ['rnu'], shape: shapes.ErrorEnvelope, kind: 'error' },
    ]);

    // Changes and removals last.
    for (const row of [
      { args: ['state', 'set', 'k2', '"v"', '--conversation', 'c1'], shape: shapes.StateChange, kind: 'item' },
      { args: ['state', 'delete', 'k2', '--scope-key', scopeKey], shape: shapes.StateChange, kind: 'item' },
      { args: ['mcp', 'disable', 'echo'], shape: shapes.McpServer, kind: 'item' },
      { args: ['config', 'unset', 'plugins.limits.memory_mb'], shape: shapes.ConfigChange, kind: 'item' },
      { args: ['binding', 'rm', 'b1'], shape: shapes.Removed, kind: 'item' },
      { args: ['schedule', 'rm', 'hourly'], shape: shapes.Removed, kind: 'item' },
      { args: ['platform', 'rm', 'tg'], shape: shapes.Removed, kind: 'item' },
      { args: ['model', 'rm', 'm'], shape: shapes.Removed, kind: 'item' },
      { args: ['mcp', 'remove', 'echo'], shape: shapes.Removed, kind: 'item' },
      { args: ['kb', 'rm', 'docs'], shape: shapes.Removed, kind: 'item' },
      { args: ['skill', 'rm', 'hello-skill'], shape: shapes.Removed, kind: 'item' },
    ] satisfies Row[])
      await walk([row]);

    // --jsonl: the same items, one a line.
    const jsonl = await s.lbot(['--jsonl', 'runs', 'list'], { env: CHECK });
    expect(jsonl.exitCode, jsonl.stderr).toBe(0);
    for (const l of jsonl.stdout.trim().split('\n')) expect(shapes.RunRecord.schema.safeParse(JSON.parse(l)).success).toBe(true);

    // Every shape is printed by some command above, or named with where it is checked.
    expect(SHAPES.map((x) => x.name).filter((n) => !covered.has(n) && !(n in ELSEWHERE))).toEqual([]);
  }, 240_000);
});
