// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against lbot's MCP
// client: every client scenario, each through test/conformance/lbot-client.mjs, which drives the built
// CLI as a user would (mcp add --url, test, tools, call; mcp login when told to). A scenario that
// lbot deliberately does not pass must be listed, with its reason, in test/conformance/expected-failures.yml.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/plugins.js';

const SUITE = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const CLIENT = path.join(REPO_ROOT, 'test', 'conformance', 'lbot-client.mjs');
const EXPECTED = path.join(REPO_ROOT, 'test', 'conformance', 'expected-failures.yml');
/** Scenarios run this many at a time (each starts several lbot processes). */
const PARALLEL = 3;
const SCENARIO_TIMEOUT_MS = 150_000;

const listing = await execa(process.execPath, [SUITE, 'list', '--client']);
const scenarios = listing.stdout
  .split('\n')
  .map((l) => /^\s+- (\S+)$/.exec(l)?.[1])
  .filter((s): s is string => s !== undefined);
const out = mkdtempSync(path.join(tmpdir(), 'lbot-conformance-results-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

// A small gate: at most PARALLEL scenarios at once, whatever vitest's own concurrency.
let running = 0;
const waiting: Array<() => void> = [];
async function gated<T>(work: () => Promise<T>): Promise<T> {
  while (running >= PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

type Check = { id: string; status: string; description?: string };

function checksOf(scenario: string): Check[] {
  const dir = path.join(out, path.dirname(scenario));
  const base = path.basename(scenario);
  const run = readdirSync(dir).find((d) => d.startsWith(`${base}-`));
  if (!run) return [];
  const parsed: unknown = JSON.parse(readFileSync(path.join(dir, run, 'checks.json'), 'utf8'));
  return Array.isArray(parsed) ? parsed.filter((c): c is Check => typeof c === 'object' && c !== null && 'status' in c) : [];
}

describe('[conformance] MCP client scenarios of the official suite', () => {
  it('the pinned suite has the 23 client scenarios', () => {
    expect(scenarios).toHaveLength(23);
    expect(scenarios).toContain('auth/scope-step-up');
  });

  describe.concurrent('each scenario', () => {
    for (const scenario of scenarios) {
      it(scenario, { timeout: SCENARIO_TIMEOUT_MS + 30_000 }, async () => {
        const r = await gated(() =>
          execa(
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
            {
              reject: false,
              all: true,
              env: { NO_COLOR: '1' },
            },
          ),
        );
        const checks = checksOf(scenario);
        const failed = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
        expect(failed, r.all).toEqual([]);
        expect(checks.filter((c) => c.status === 'SUCCESS').length, r.all).toBeGreaterThan(0);
        expect(r.exitCode, r.all).toBe(0);
      });
    }
  });
});
