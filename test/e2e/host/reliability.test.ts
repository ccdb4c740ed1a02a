// Acceptance §9, reliability and bad input (AC-190 … AC-203), and durability of acknowledged state
// writes when `lbot run` is killed with SIGKILL mid-run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import { withReason } from '../../helpers/skip.js';
import { delta, done, dump, errorOf, eventPath, firstLine, LBOT_BIN, list, pick, reports, say, scenario, str, summaries, type Scenario } from './harness.js';

const MARKER_MAIN = (marker: string, original: string) =>
  `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, '');\n${original}`;

/** A scripted copy that leaves a marker file when its process starts. */
async function markedRunner(s: Scenario): Promise<{ runner: string; marker: string }> {
  const marker = path.join(s.root, 'started');
  const original = await readFile(path.join(s.plugins.dir('scripted'), 'main.js'), 'utf8');
  return { runner: await s.addPlugin('marked', { mainJs: MARKER_MAIN(marker, original) }), marker };
}

async function msg(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(eventPath('msg.json'), 'utf8')) as Record<string, unknown>;
}

const dbFile = (s: Scenario) => path.join(s.dataDir, 'lbot.db');
/** GNU time measures the peak RSS of a child (AC-199). */
const GNU_TIME = '/usr/bin/time';
const HAS_TIME = existsSync(GNU_TIME);

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** Direct children of a process (from /proc), so a test can clean up after SIGKILLing their parent. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** SIGKILLs `lbot run` as a crash would, then the process groups of the plugins it leaves behind. */
async function crash(child: ResultPromise): Promise<void> {
  const plugins = childrenOf(child.pid ?? 0);
  child.kill('SIGKILL');
  await child;
  for (const p of plugins) {
    try {
      process.kill(-p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

describe('reliability and bad input', () => {
  it('AC-190 malformed event JSON', async () => {
    const s = await scenario();
    const { runner, marker } = await markedRunner(s);
    const text = (await readFile(eventPath('msg.json'), 'utf8')).replace(
      '"delivery":{"surface":"cli","supports_streaming":true}}',
      '"delivery":{"surface":"cli","supports_streaming":true},}',
    );
    const file = path.join(s.root, 'trailing.json');
    await writeFile(file, text);
    const r = await s.lbot(['--json', 'run', '--event', file, '--runner', runner, '--config', await s.writeJson('cfg.json', { script: [say('x'), done()] })]);
    expect(r.exitCode, r.stderr).toBe(2);
    const err = errorOf(r.stdout);
    expect(err?.code).toBe('event.parse_error');
    expect(String(err?.message)).toMatch(/:5:\d+|line 5/);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(dbFile(s))).toBe(false);
  });

  it('AC-191 schema-invalid event input', async () => {
    const s = await scenario();
    const base = await msg();
    const cases: Array<[string, Record<string, unknown>, string]> = [];
    for (const field of ['event_id', 'event_type', 'source', 'input', 'delivery']) {
      const e = { ...base };
      delete e[field];
      cases.push([`missing ${field}`, e, field]);
    }
    cases.push(['event_time "yesterday"', { ...base, event_time: 'yesterday' }, 'event_time']);
    cases.push(['input.contents "x"', { ...base, input: { text: 'ping', contents: 'x' } }, 'input.contents']);
    for (const [label, event, field] of cases) {
      const file = await s.writeJson(`bad-${field}.json`, event);
      const r = await s.run([say('x'), done()], { json: true, event: file });
      expect(r.exitCode, label).toBe(2);
      const err = errorOf(r.stdout);
      expect(err?.code, label).toBe('event.invalid');
      expect((pick(err, 'details.path') as string[]).join('.'), label).toBe(field);
    }
    expect(existsSync(dbFile(s))).toBe(false);
  });

  it('AC-191 variant: unusable event files', async () => {
    const s = await scenario();
    const dir = path.join(s.root, 'a-dir');
    await mkdir(dir);
    const empty = await s.writeJson('empty.json', '');
    const none = await s.writeJson('none.json', '[]');
    for (const [label, file, pattern] of [
      ['missing path', path.join(s.root, 'nope.json'), /no such file/],
      ['directory', dir, /directory/],
      ['empty file', empty, /empty/],
      ['empty array', none, /empty|no events/],
    ] as const) {
      const r = await s.run([say('x'), done()], { json: true, event: file });
      expect(r.exitCode, label).toBe(2);
      expect(r.stderr, label).toMatch(/^lbot: error\[[a-z_.]+\]: /);
      expect(String(errorOf(r.stdout)?.message), label).toMatch(pattern);
    }
    expect(existsSync(dbFile(s))).toBe(false);
  });

  it('AC-193 oversized inline event data', async () => {
    const s = await scenario();
    const file = await s.writeJson('big.json', { ...(await msg()), data: { blob: 'd'.repeat(1024 * 1024 + 10) } });
    const r = await s.run([say('x'), done()], { event: file });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('error[event.invalid]');
    expect(r.stderr).toMatch(/hint:.*(raw_ref|attachments)/);
    expect(existsSync(dbFile(s))).toBe(false);
  });

  it('AC-194 runner crash mid-stream', async () => {
    const s = await scenario();
    const r = await s.run([delta('par'), { stderr: 'about to die: disk on fire' }, { sleep_ms: 100 }, { exit: 137 }], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    const err = errorOf(r.stdout);
    expect(err?.code).toBe('runner.crashed');
    expect(String(err?.message)).toContain('137');
    expect(String(err?.message)).toContain('disk on fire');
    const [summary] = summaries(r.stdout);
    const record = await s.json(['runs', 'show', str(summary, 'run_id')]);
    expect(record).toMatchObject({ status: 'failed', error: { code: 'runner.crashed' } });
    const items = list(await s.page(['transcript', 'page', '--conversation', 'c1']), 'items');
    expect(items.map((i) => pick(i, 'role'))).toEqual(['user']);
    const next = await s.run([say('fine'), done()]);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stdout).toBe('fine\n');
  });

  it('AC-195 runner exceeds its deadline', async () => {
    const s = await scenario();
    const r = await s.run([{ sleep_ms: 30000 }], { json: true, config: { timeout: 2 } });
    expect(r.exitCode, r.stderr).toBe(5);
    expect(errorOf(r.stdout)).toMatchObject({ code: 'runner.timeout', retryable: true });
    const record = await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]);
    expect(record).toMatchObject({ status: 'timed_out', error: { code: 'runner.timeout' } });
    // documented bound: ≈2 s, at most 2 s + the cancel grace, ≤ 5 s in total (host-recorded times)
    const took = Number(pick(record, 'ended_at')) - Number(pick(record, 'started_at'));
    expect(took).toBeGreaterThanOrEqual(1.6);
    expect(took).toBeLessThanOrEqual(5);
  });

  it('AC-196 runner ignores cancel: the whole process group is killed', async () => {
    const s = await scenario();
    // a duration no other test uses, so pgrep finds only what this run started
    const seconds = `600.${process.pid}${Date.now() % 100000}`;
    const pgrep = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${seconds}`], { encoding: 'utf8' }).trim();
      } catch {
        return '';
      }
    };
    const started = Date.now();
    const child = s.spawn(
      await s.runArgs([{ ignore_cancel: true }, { spawn: ['sleep', seconds] }, say('working'), { sleep_ms: 60000 }], { json: true, config: { timeout: 2 } }),
    );
    await firstLine(child, (l) => l.includes('working'));
    expect(pgrep()).not.toBe('');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(5);
    expect(Date.now() - started).toBeLessThan(10_000);
    const found = pgrep();
    expect(found.trim()).toBe('');
  });

  it('AC-197 no deadline still allows cancel', async () => {
    const s = await scenario();
    const child = s.spawn(await s.runArgs([dump, { sleep_ms: 600000 }], { json: true, config: { timeout: 0 } }));
    const line = await firstLine(child, (l) => l.includes('message.completed'));
    const ctx = reports(line)[0];
    expect(pick(ctx, 'runtime.deadline_at')).toBeNull();
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(130);
    const record = await s.json(['runs', 'show', str(summaries(r.stdout)[0], 'run_id')]);
    expect(record).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });

  it('AC-198 non-JSON on stdout', async () => {
    const s = await scenario();
    const line = `hello world ${'x'.repeat(100)}TAIL-BEYOND-80`;
    const r = await s.run([{ emit_raw: line }, say('x'), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    const message = String(errorOf(r.stdout)?.message);
    expect(errorOf(r.stdout)?.code).toBe('runner.protocol_error');
    expect(message).toContain(line.slice(0, 80));
    expect(message).not.toContain('TAIL-BEYOND-80');
  });

  /** Every text value of every table of the scenario's database. */
  const storedTexts = (s: Scenario): string[] => {
    const db = new Database(dbFile(s), { readonly: true, fileMustExist: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all().map(String);
      const texts: string[] = [];
      for (const t of tables) {
        for (const row of db.prepare(`SELECT * FROM "${t}"`).raw().all()) {
          if (Array.isArray(row)) for (const v of row) if (typeof v === 'string') texts.push(v);
        }
      }
      return texts;
    } finally {
      db.close();
    }
  };

  it('stderr that is not UTF-8 is kept escaped in the run record, without replacement characters', async () => {
    const s = await scenario();
    const bad = Buffer.concat([Buffer.from('oops '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' end')]);
    const r = await s.run([{ stderr_base64: bad.toString('base64') }, { exit: 1 }], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(errorOf(r.stdout)?.code).toBe('runner.crashed');
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const record = JSON.stringify(await s.json(['runs', 'show', runId]));
    expect(record).not.toContain('\uFFFD');
    expect(record).toMatch(/oops (\\)+xff(\\)+xfe(\\)+xc3 end/);
    const texts = storedTexts(s);
    expect(texts.some((v) => /oops (\\)+xff(\\)+xfe(\\)+xc3 end/.test(v))).toBe(true);
    expect(texts.filter((v) => v.includes('\uFFFD'))).toEqual([]);
  });

  it('a line that is not UTF-8 fails the run with runner.protocol_error, stored as an escaped excerpt', async () => {
    const s = await scenario();
    const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","method":"x","params":{"s":"ab'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('cd"}}')]);
    const r = await s.run([{ emit_raw_base64: bad.toString('base64') }, say('x'), done()], { json: true });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(errorOf(r.stdout)?.code).toBe('runner.protocol_error');
    const runId = str(summaries(r.stdout)[0], 'run_id');
    const record = await s.json(['runs', 'show', runId]);
    expect(record).toMatchObject({ error: { code: 'runner.protocol_error' } });
    const message = str(record, 'error.message');
    expect(message).toContain('not valid UTF-8');
    expect(message).toContain('\\"s\\":\\"ab\\xff\\xfe\\xc3cd\\"');
    expect(message.length).toBeLessThan(400);
    // Nowhere in the database: no replacement character in any text value (the excerpt is stored as is,
    // or inside a JSON column where the backslashes are escaped once more).
    const texts = storedTexts(s);
    expect(texts.some((v) => /ab(\\)+xff(\\)+xfe(\\)+xc3cd/.test(v))).toBe(true);
    expect(texts.filter((v) => v.includes('\uFFFD'))).toEqual([]);
  });

  /** `lbot run` of a runner in a scenario with the giant-line fixture, under /usr/bin/time when `measure`. */
  const giantScenario = async () => {
    const s = await scenario(['echo', 'giant-line']);
    const timed = (runner: string, measure: boolean) => {
      const lbot = [
        process.execPath,
        LBOT_BIN,
        '--data-dir',
        s.dataDir,
        '--plugins',
        s.plugins.pluginsDir,
        '--json',
        'run',
        '--event',
        eventPath('msg.json'),
        '--runner',
        runner,
      ];
      const [file = '', ...args] = measure ? [GNU_TIME, '-f', 'MAXRSS_KB=%M', ...lbot] : lbot;
      return execa(file, args, { reject: false, cwd: s.root, timeout: 60_000 });
    };
    return timed;
  };

  it('AC-199 giant line', async () => {
    const timed = await giantScenario();
    const r = await timed('plugin:acme/giant-line/default', false);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(errorOf(r.stdout)?.code).toBe('runner.protocol_error');
    expect(String(errorOf(r.stdout)?.message)).toMatch(/8388608|8 MiB|line/i);
  });

  it.skipIf(!HAS_TIME)(
    withReason('AC-199 giant line: the peak RSS of lbot stays bounded', !HAS_TIME && `${GNU_TIME} is missing, so the peak RSS of lbot cannot be measured`),
    async () => {
      const timed = await giantScenario();
      const r = await timed('plugin:acme/giant-line/default', true);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(errorOf(r.stdout)?.code).toBe('runner.protocol_error');
      const peak = Number(/MAXRSS_KB=(\d+)/.exec(r.stderr)?.[1]);
      const base = await timed('plugin:acme/echo/default', true);
      expect(base.exitCode, base.stderr).toBe(0);
      const baseline = Number(/MAXRSS_KB=(\d+)/.exec(base.stderr)?.[1]);
      expect(peak, r.stderr).toBeGreaterThan(0);
      expect(baseline, base.stderr).toBeGreaterThan(0);
      // growth over a plain run stays below 4 × the 8 MiB line limit
      console.info(`AC-199 peak RSS ${peak} KiB, plain run ${baseline} KiB`);
      expect(peak - baseline).toBeLessThan(4 * 8 * 1024);
    },
  );

  it('AC-201 unusable data dir', async () => {
    const s = await scenario();
    const file = await s.writeJson('a-file', '{}');
    const targets = [file];
    // root ignores directory permissions; a sysfs directory is read-only even for root
    if (isRoot()) targets.push('/sys/fs');
    else {
      const ro = path.join(s.root, 'ro');
      await mkdir(ro, { mode: 0o555 });
      targets.push(ro);
    }
    for (const dir of targets) {
      const r = await execa(
        process.execPath,
        [
          LBOT_BIN,
          '--data-dir',
          dir,
          '--plugins',
          s.plugins.pluginsDir,
          '--json',
          'run',
          '--event',
          eventPath('msg.json'),
          '--runner',
          'plugin:acme/scripted/default',
        ],
        { reject: false, cwd: s.root },
      );
      expect(r.exitCode, dir).toBe(6);
      expect(errorOf(r.stdout)?.code, dir).toBe('store.unavailable');
      expect(String(errorOf(r.stdout)?.message), dir).toContain(dir);
      expect(r.stderr, dir).not.toMatch(/\n\s+at /);
    }
  });

  it('AC-203 deeply nested or hostile JSON', async () => {
    const s = await scenario();
    const base = await readFile(eventPath('msg.json'), 'utf8');
    const nested = base.replace(/}\s*$/, `,"data":{"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`);
    const nestedFile = path.join(s.root, 'nested.json');
    await writeFile(nestedFile, nested);
    const r = await s.run([say('x'), done()], { json: true, event: nestedFile });
    expect([0, 2]).toContain(r.exitCode);
    if (r.exitCode === 2) expect(errorOf(r.stdout)?.code).toBe('event.invalid');
    expect(r.stderr).not.toMatch(/Maximum call stack|RangeError|\n\s+at /);

    const dup = base.replace('"text":"ping"', '"text":"first","text":"last"');
    const dupFile = path.join(s.root, 'dup.json');
    await writeFile(dupFile, dup);
    const d = await s.run([dump, done()], { json: true, event: dupFile });
    expect([0, 2]).toContain(d.exitCode);
    if (d.exitCode === 0) expect(pick(reports(d.stdout)[0], 'input.text')).toBe('last');
    else expect(errorOf(d.stdout)?.code).toBe('event.invalid');
  });

  it('kill -9 mid-run keeps every acknowledged state write, and the database opens without repair', async () => {
    const s = await scenario();
    const steps = Array.from({ length: 3000 }, (_, i) => ({
      api: { action: 'state.set', args: { scope: 'conversation', key: `key-${i}`, value: { i } } },
      report: true,
    }));
    const child = s.spawn(await s.runArgs([...steps, say('all written'), done()], { json: true }));
    const acknowledged: number[] = [];
    await new Promise<void>((resolve, reject) => {
      let buf = '';
      child.stdout?.on('data', (chunk: Buffer | string) => {
        buf += chunk.toString();
        const lines = buf.split('\n');
        buf = lines.pop() ?? '';
        for (const l of lines) {
          const content = pick(JSON.parse(l), 'data.message.content');
          if (typeof content === 'string' && pick(JSON.parse(content), 'ok') === true) acknowledged.push(acknowledged.length);
        }
        if (acknowledged.length >= 200) resolve();
      });
      void child.then(() => reject(new Error('lbot run ended before it was killed')));
    });
    await crash(child);
    expect(acknowledged.length).toBeGreaterThanOrEqual(200);

    const db = new Database(dbFile(s), { fileMustExist: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
    const keys = new Set((await s.jsonList(['state', 'list', '--scope', 'conversation'])).map((e) => e.key));
    for (const i of acknowledged) expect(keys.has(`key-${i}`), `key-${i}`).toBe(true);
    // and the data dir keeps working
    const next = await s.run([say('after the crash'), done()]);
    expect(next.exitCode, next.stderr).toBe(0);
  });

  it('what `lbot run` prints is committed first: killed right after a line, under the longest commit window, the stores hold it', async () => {
    const s = await scenario();
    // Writes may wait a whole second to share a commit; a printed line may not.
    await s.writeConfig({ runs: { commit_window_ms: 1000 } });
    const child = s.spawn(await s.runArgs([say('printed before the crash'), { sleep_ms: 30_000 }, done()], { json: true }));
    const line = await firstLine(child, (l) => l.includes('message.completed'));
    await crash(child);
    const run_id = str(JSON.parse(line), 'run_id');
    const db = new Database(dbFile(s), { readonly: true, fileMustExist: true });
    try {
      const results = db.prepare("SELECT body_json FROM run_items WHERE run_id = ? AND kind = 'result'").all(run_id);
      expect(JSON.stringify(results)).toContain('printed before the crash');
      const events = db.prepare('SELECT count(*) AS n FROM event_log WHERE run_id = ?').get(run_id);
      expect(pick(events, 'n')).toBeGreaterThanOrEqual(1);
    } finally {
      db.close();
    }
    // The next process finds the run its predecessor left running and marks it interrupted.
    const next = await s.run([say('after the crash'), done()]);
    expect(next.exitCode, next.stderr).toBe(0);
    const shown = await s.json(['runs', 'show', run_id]);
    expect(str(shown, 'status')).toBe('interrupted');
  });
});
