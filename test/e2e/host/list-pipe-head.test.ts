// Every list command, with and without --json, piped into `head -1`: lbot exits 0 with no stack trace
// when the reader goes away (the list commands are found in the command tree, so a new one is covered).
import type { Command } from 'commander';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../../src/cli.js';
import { loadAllCommands } from '../../../src/commands/index.js';
import { done, emit, LBOT_BIN, say, scenario, type Scenario } from './harness.js';

function listCommands(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => {
    const p = [...prefix, c.name()];
    if (c.commands.length > 0) return listCommands(c, p);
    const isList = c.name() === 'list' || p.join(' ') === 'box sessions';
    return isList && c.registeredArguments.every((a) => !a.required) && c.options.every((o) => !o.mandatory) ? [p] : [];
  });
}

const LISTS = listCommands(
  createProgram(
    () => {
      throw new Error('not run');
    },
    await loadAllCommands(),
  ),
);

async function throughPipe(s: Scenario, args: readonly string[], reader: string): Promise<{ lbotExit: string; stderr: string; out: string }> {
  const quoted = [process.execPath, LBOT_BIN, '--data-dir', s.dataDir, '--plugins', s.plugins.pluginsDir, ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const r = await execa('bash', ['-c', `${quoted} | ${reader}; echo "exit=\${PIPESTATUS[0]}" >&2`], {
    cwd: s.root,
    reject: false,
    env: { LBOT_HOME: undefined, NO_COLOR: '1' },
    timeout: 60_000,
  });
  return { lbotExit: /exit=(\d+)/.exec(r.stderr)?.[1] ?? `none: ${r.stderr}`, stderr: r.stderr, out: r.stdout };
}

describe('list commands piped into head -1', () => {
  it('finds the list commands in the command tree', () => {
    expect(LISTS.map((p) => p.join(' '))).toEqual(expect.arrayContaining(['runs list', 'events list', 'artifacts list', 'state list', 'box sessions']));
  });

  it('every list command, --json and plain, exits 0 without a stack trace when its reader stops reading', async () => {
    const s = await scenario();
    for (let i = 0; i < 2; i++) {
      const artifacts = Array.from({ length: 40 }, (_, j) =>
        emit('artifact.created', { artifact_id: `r${i}-${j}`, artifact_type: 'file', name: `a-${j}.txt`, content_base64: 'YQ==' }),
      );
      const r = await s.run([...artifacts, say('ok'), done()]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const table = LISTS.flatMap((p) => [[...p, '--json'], p]);
    const failures: string[] = [];
    // Two at a time: enough to finish quickly, little load.
    for (let i = 0; i < table.length; i += 2) {
      await Promise.all(
        table.slice(i, i + 2).map(async (args) => {
          // `head -1` as a user types it after --json; `true` after plain output: a reader gone before lbot's
          // first write, so the write always fails (the same stdout path for both modes).
          const reader = args.includes('--json') ? 'head -1' : 'true';
          const r = await throughPipe(s, args, reader);
          if (r.lbotExit !== '0' || /EPIPE|Unhandled|\n\s+at /.test(r.stderr))
            failures.push(`lbot ${args.join(' ')} | ${reader}: exit ${r.lbotExit}\n${r.stderr}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
