// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against lbot's MCP
// client: every client scenario, each through test/conformance/lbot-client.mjs, which drives the built
// CLI as a user would (mcp add --url, test, tools, call; mcp login when told to). A scenario that
// lbot deliberately does not pass must be listed, with its reason, in test/conformance/expected-failures.yml.
//
// All scenarios are started at once through a bounded pool, the ones with a login first (they run
// longest); each test then waits for its own scenario. A scenario is bounded by its own timeout (the
// suite's --timeout and a kill of the suite process), not by time spent waiting for a pool slot.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/plugins.js';

const SUITE = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const CLIENT = path.join(REPO_ROOT, 'test', 'conformance', 'lbot-client.mjs');
const EXPECTED = path.join(REPO_ROOT, 'test', 'conformance', 'expected-failures.yml');
/** Scenarios in flight at once: each mostly waits on lbot processes and the suite's servers. */
const PARALLEL = Math.max(3, Math.min(6, availableParallelism() * 2));
const SCENARIO_TIMEOUT_MS = 150_000;
/** Backstop only: a scenario's own limit is SCENARIO_TIMEOUT_MS, enforced on the suite process. */
const TEST_TIMEOUT_MS = 15 * 60_000;

const listing = await execa(process.execPath, [SUITE, 'list', '--client']);
const scenarios = listing.stdout
  .split('\n')
  .map((l) => /^\s+- (\S+)$/.exec(l)?.[1])
  .filter((s): s is string => s !== undefined);
const out = mkdtempSync(path.join(tmpdir(), 'lbot-conformance-results-'));

type Check = { id: string; status: string; description?: string };
type Outcome = { exitCode: number | undefined; all: string; checks: Check[]; ms: number };

function checksOf(scenario: string): Check[] {
  const dir = path.join(out, path.dirname(scenario));
  const base = path.basename(scenario);
  const run = readdirSync(dir).find((d) => d.startsWith(`${base}-`));
  if (!run) return [];
  const parsed: unknown = JSON.parse(readFileSync(path.join(dir, run, 'checks.json'), 'utf8'));
  return Array.isArray(parsed) ? parsed.filter((c): c is Check => typeof c === 'object' && c !== null && 'status' in c) : [];
}

async function runScenario(scenario: string): Promise<Outcome> {
  const started = Date.now();
  const r = await execa(
    process.execPath,
    [
      SUITE,
      'client',
      '--command',
      `${process.execPath} ${CLIENT}`,
      '--scenario',
      scenario,
      '--timeout',
      String(SCENARIO_TIMEOUT_MS),
      '--expected-failures',
      EXPECTED,
      '-o',
      out,
    ],
    { reject: false, all: true, env: { NO_COLOR: '1' }, timeout: SCENARIO_TIMEOUT_MS + 30_000 },
  );
  return {
    exitCode: r.exitCode,
    all: `${r.all ?? ''}${r.timedOut ? '\n(the suite process was killed after its timeout)' : ''}`,
    checks: checksOf(scenario),
    ms: Date.now() - started,
  };
}

/** Runs every scenario, PARALLEL at a time, in the given order; one promise per scenario. */
function pool(names: string[]): Map<string, Promise<Outcome>> {
  const results = new Map<string, Promise<Outcome>>();
  const queue = [...names];
  const settle = new Map<string, (o: Outcome) => void>();
  for (const n of names) results.set(n, new Promise<Outcome>((resolve) => settle.set(n, resolve)));
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const name = next;
      const outcome = await runScenario(name).catch((err: unknown): Outcome => ({ exitCode: undefined, all: String(err), checks: [], ms: 0 }));
      settle.get(name)?.(outcome);
    }
  };
  for (let i = 0; i < PARALLEL; i++) void worker();
  return results;
}

// Scenarios with a browser login take longest: they go first so the pool drains evenly.
const order = [
  ...scenarios.filter((s) => s.startsWith('auth/') && !s.startsWith('auth/client-credentials')),
  ...scenarios.filter((s) => !s.startsWith('auth/') || s.startsWith('auth/client-credentials')),
];
const outcomes = pool(order);

afterAll(async () => {
  const done = await Promise.all([...outcomes.entries()].map(async ([name, o]) => `${name} ${Math.round((await o).ms / 1000)}s`));
  console.log(`conformance scenario times (${PARALLEL} at a time): ${done.join(', ')}`);
  rmSync(out, { recursive: true, force: true });
});

describe('[conformance] MCP client scenarios of the official suite', () => {
  it('the pinned suite has the 23 client scenarios', () => {
    expect(scenarios).toHaveLength(23);
    expect(scenarios).toContain('auth/scope-step-up');
  });

  describe('each scenario', () => {
    // In pool order, so each result is reported as soon as it is in.
    for (const scenario of order) {
      it(scenario, { timeout: TEST_TIMEOUT_MS }, async () => {
        const r = await outcomes.get(scenario);
        if (!r) throw new Error(`scenario ${scenario} was not started`);
        const failed = r.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
        expect(failed, r.all).toEqual([]);
        expect(r.checks.filter((c) => c.status === 'SUCCESS').length, r.all).toBeGreaterThan(0);
        expect(r.exitCode, r.all).toBe(0);
      });
    }
  });
});
