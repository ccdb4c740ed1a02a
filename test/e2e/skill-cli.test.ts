// `lbot skill …` end to end on the built binary: acceptance AC-130…AC-138, AC-142, AC-143, AC-221,
// verify/validate/new/remove, and installs killed or interrupted half way.
import { createHash } from 'node:crypto';
import { existsSync, watch } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { buildStoredZip, buildZip, skillMd, tempDir, writeZip } from '../integration/skill-zip.js';
import { withReason } from '../helpers/skip.js';

/** Whether lbot can be run in a namespace with no network (AC-142). */
const OFFLINE = (await execa('unshare', ['-rn', 'true'], { reject: false })).exitCode === 0;

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin', 'lbot.js');
const FIX = path.join(REPO, 'fixtures', 'skills');
if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');

type Cli = { exitCode: number; stdout: string; stderr: string };

function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) env[k] = process.env[k] ?? '';
  return { ...env, ...extra };
}

async function scenario() {
  const root = await tempDir('lbot-skill-e2e-');
  const dataDir = path.join(root, 'data');
  const lbot = async (args: string[], env: Record<string, string> = {}, wrap: string[] = []): Promise<Cli> => {
    const argv = [...wrap, process.execPath, BIN, '--data-dir', dataDir, ...args];
    const r = await execa(argv[0] ?? process.execPath, argv.slice(1), { reject: false, env: baseEnv(env), extendEnv: false, cwd: root, timeout: 60_000 });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  const json = async <T>(args: string[], env: Record<string, string> = {}): Promise<T> => {
    const r = await lbot([...args, '--json'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  return { root, dataDir, skillsRoot: path.join(dataDir, 'skills'), lbot, json };
}

async function snapshot(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = async (rel: string) => {
    for (const n of (await readdir(path.join(root, rel))).sort()) {
      const r = path.join(rel, n);
      const st = await stat(path.join(root, r));
      if (st.isDirectory()) {
        out.push(`${r}/ ${st.mode & 0o777}`);
        await walk(r);
      } else
        out.push(
          `${r} ${st.mode & 0o777} ${createHash('sha256')
            .update(await readFile(path.join(root, r)))
            .digest('hex')}`,
        );
    }
  };
  await walk('');
  return out;
}

type ListOut = Array<{ name: string; description: string }>;
type ShowOut = Record<string, unknown> & { history: Array<{ sha256: string }> };

describe('lbot skill (built CLI)', () => {
  it('AC-130 install from a zip; AC-221 provenance; AC-137 duplicates and --replace', async () => {
    const s = await scenario();
    const install = await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    expect(install.exitCode, install.stderr).toBe(0);
    expect(install.stdout).toContain('installed hello-skill');
    const list = await s.json<ListOut>(['skill', 'list']);
    expect(list).toEqual([expect.objectContaining({ name: 'hello-skill', description: 'Says hello' })]);
    const show = await s.json<ShowOut>(['skill', 'show', 'hello-skill']);
    expect(show).toMatchObject({ name: 'hello-skill', package_root: path.join(s.skillsRoot, 'hello-skill'), source: path.join(FIX, 'hello-skill.zip') });
    expect(show.instructions).toContain('run.sh');
    expect(show.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(String(show.installed_at))).not.toBeNaN();
    const lock = JSON.parse(await readFile(path.join(s.dataDir, 'skills.lock.json'), 'utf8')) as { skills: Record<string, { sha256: string }> };
    expect(lock.skills['hello-skill']?.sha256).toBe(show.sha256);

    const again = await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    expect(again.exitCode).toBe(8);
    expect(again.stderr).toContain('lbot: error[skill.exists]:');
    const modified = await writeZip(s.root, 'hello-skill.zip', buildZip([{ name: 'hello-skill/SKILL.md', data: skillMd('hello-skill', 'Says hello again') }]));
    const replaced = await s.json<{ skills: Array<{ sha256: string; previous_sha256: string }> }>(['skill', 'install', '--replace', modified]);
    expect(replaced.skills[0]?.sha256).not.toBe(show.sha256);
    expect(replaced.skills[0]?.previous_sha256).toBe(show.sha256);
    const after = await s.json<ShowOut>(['skill', 'show', 'hello-skill']);
    expect(after.sha256).toBe(replaced.skills[0]?.sha256);
    expect(after.history.map((h) => h.sha256)).toEqual([show.sha256]);
  });

  it('AC-131 --preview lists the candidate and writes nothing', async () => {
    const s = await scenario();
    const r = await s.json<{ skills: Array<Record<string, unknown>> }>(['skill', 'install', '--preview', path.join(FIX, 'hello-skill.zip')]);
    expect(r.skills).toEqual([expect.objectContaining({ name: 'hello-skill', description: 'Says hello', files: ['SKILL.md', 'run.sh'] })]);
    expect(existsSync(s.skillsRoot)).toBe(false);
    await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    const before = await snapshot(s.dataDir);
    const text = await s.lbot(['skill', 'install', '--preview', path.join(FIX, 'hello-skill.zip')]);
    expect(text.stdout).toContain('needs --replace');
    expect(await snapshot(s.dataDir)).toEqual(before);
  });

  it('AC-132 unsafe entries exit 4 naming the entry; nothing lands anywhere', async () => {
    const s = await scenario();
    for (const [zip, entry] of [
      ['traversal.zip', '../evil.txt'],
      ['backslash.zip', '..\\\\evil.txt'],
      ['absolute.zip', '/tmp/lbot-abs.txt'],
      ['drive-letter.zip', 'C:/x.txt'],
      ['nul-name.zip', 'nul/a\\u0000b.txt'],
    ] as const) {
      const r = await s.lbot(['skill', 'install', path.join(FIX, zip)]);
      expect(r.exitCode, zip).toBe(4);
      expect(r.stderr).toContain('lbot: error[skill.unsafe_path]:');
      expect(r.stderr).toContain(entry);
    }
    expect(existsSync(path.join(s.skillsRoot, '..', 'evil.txt'))).toBe(false);
    expect(existsSync('/tmp/lbot-abs.txt')).toBe(false);
    expect(await s.json<ListOut>(['skill', 'list'])).toEqual([]);
    const j = await s.lbot(['skill', 'install', path.join(FIX, 'traversal.zip'), '--json']);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, error: { code: 'skill.unsafe_path', retryable: false } });
  });

  it('AC-134 corrupt archive exits 2 (invalid_archive); missing SKILL.md exits 2 (missing_manifest)', async () => {
    const s = await scenario();
    const corrupt = await s.lbot(['skill', 'install', path.join(FIX, 'corrupt.zip')]);
    expect(corrupt.exitCode).toBe(2);
    expect(corrupt.stderr).toContain('error[skill.invalid_archive]');
    const none = await s.lbot(['skill', 'install', path.join(FIX, 'no-skillmd.zip')]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('error[skill.missing_manifest]');
  });

  it('AC-136 bad frontmatter names exit 2 stating the rule; names derive from the top folder', async () => {
    const s = await scenario();
    for (const bad of ['my skill', 'ünï', 'n'.repeat(65)]) {
      const zip = await writeZip(s.root, 'bad.zip', buildZip([{ name: 'pkg/SKILL.md', data: `---\nname: "${bad}"\ndescription: d\n---\n` }]));
      const r = await s.lbot(['skill', 'install', zip]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('error[skill.invalid_name]');
      expect(r.stderr).toMatch(/letters, digits, "-" and "_", and at most 64 characters/);
    }
    const unnamed = await writeZip(s.root, 'u.zip', buildZip([{ name: 'Data Tools!/SKILL.md', data: '---\ndescription: d\n---\n' }]));
    expect((await s.lbot(['skill', 'install', unnamed])).exitCode).toBe(0);
    expect((await s.json<ListOut>(['skill', 'list'])).map((x) => x.name)).toEqual(['Data-Tools']);
  });

  it('AC-138 cat prints files and refuses paths that leave the package (exit 4)', async () => {
    const s = await scenario();
    await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    const cat = await s.lbot(['skill', 'cat', 'hello-skill', 'run.sh']);
    expect(cat.exitCode).toBe(0);
    expect(cat.stdout).toBe('#!/bin/sh\necho "hello from hello-skill"');
    for (const bad of ['../../lbot.config.json', '%2e%2e/%2e%2e/x']) {
      const r = await s.lbot(['skill', 'cat', 'hello-skill', bad]);
      expect(r.exitCode, bad).toBe(4);
      expect(r.stderr).toContain('error[skill.unsafe_path]');
    }
    expect((await s.lbot(['skill', 'cat', 'ghost', 'x'])).exitCode).toBe(3);
  });

  const REMOTE_REFUSED = [
    ['http://github.com/o/r/blob/main/x/SKILL.md'],
    ['https://evil.example/x.zip'],
    ['https://github.com/o/r/blob/main/x/SKILL.md', '--owner', 'someone-else'],
    ['https://github.com/o/r/tree/main/x', '--repo', 'other-repo'],
  ];

  it('AC-142 remote sources are refused (exit 2, skill.invalid_source)', async () => {
    const s = await scenario();
    for (const args of REMOTE_REFUSED) {
      const r = await s.lbot(['skill', 'install', ...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('error[skill.invalid_source]');
    }
  });

  it.skipIf(!OFFLINE)(
    withReason(
      'AC-142 remote sources are refused before any network request: the same refusals with no network at all',
      !OFFLINE && 'unshare -rn is unavailable, so lbot cannot be run without a network',
    ),
    async () => {
      const s = await scenario();
      const wrap = ['unshare', '-rn'];
      // The namespace really has no network: only the loopback interface.
      const ifaces = await execa('unshare', ['-rn', 'sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
      expect(ifaces.stdout).toBe('lo');
      for (const args of REMOTE_REFUSED) {
        const r = await s.lbot(['skill', 'install', ...args], {}, wrap);
        expect(r.exitCode, args.join(' ')).toBe(2);
        expect(r.stderr).toContain('error[skill.invalid_source]');
      }
    },
  );

  it('AC-143 list, show and cat work with the box disabled', async () => {
    const s = await scenario();
    const env = { LBOT__BOX__ENABLED: 'false' };
    expect((await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')], env)).exitCode).toBe(0);
    expect((await s.json<ListOut>(['skill', 'list'], env))[0]?.name).toBe('hello-skill');
    expect((await s.json<ShowOut>(['skill', 'show', 'hello-skill'], env)).description).toBe('Says hello');
    expect((await s.lbot(['skill', 'cat', 'hello-skill', 'SKILL.md'], env)).stdout).toContain('name: hello-skill');
  });

  it('verify exits 1 with skill.drift on a modified package; --frozen restores it; remove uninstalls', async () => {
    const s = await scenario();
    await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    expect((await s.lbot(['skill', 'verify'])).exitCode).toBe(0);
    await writeFile(path.join(s.skillsRoot, 'hello-skill', 'run.sh'), 'echo tampered\n');
    const drift = await s.lbot(['skill', 'verify', '--json']);
    expect(drift.exitCode).toBe(1);
    const err = JSON.parse(drift.stdout) as { ok: boolean; error: { code: string; details: { skills: Array<{ status: string }> } } };
    expect(err.error.code).toBe('skill.drift');
    expect(err.error.details.skills[0]?.status).toBe('modified');
    const frozen = await s.lbot(['skill', 'install', '--frozen']);
    expect(frozen.exitCode, frozen.stderr).toBe(0);
    expect((await s.lbot(['skill', 'verify'])).exitCode).toBe(0);
    expect((await s.lbot(['skill', 'remove', 'hello-skill'])).exitCode).toBe(0);
    expect((await s.lbot(['skill', 'show', 'hello-skill'])).exitCode).toBe(3);
  });

  it('validate reports ok for a real package and fails on a folder without SKILL.md; new scaffolds without a terminal', async () => {
    const s = await scenario();
    const ok = await s.lbot(['skill', 'validate', path.join(FIX, 'real', 'mcp-builder')]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('ok  mcp-builder');
    expect((await s.lbot(['skill', 'validate', path.join(FIX, 'no-skillmd.zip')])).exitCode).toBe(2);
    const noDesc = await s.lbot(['skill', 'new', 'demo', '--dir', s.root]);
    expect(noDesc.exitCode).toBe(2);
    expect(noDesc.stderr).toContain('--description');
    const created = await s.lbot(['skill', 'new', 'demo', '--dir', s.root, '--description', 'Demo skill for tests', '--scripts', '--install']);
    expect(created.exitCode, created.stderr).toBe(0);
    expect((await stat(path.join(s.root, 'demo', 'scripts', 'run.sh'))).mode & 0o111).not.toBe(0);
    expect((await s.json<ShowOut>(['skill', 'show', 'demo'])).description).toBe('Demo skill for tests');
    expect((await s.lbot(['skill', 'validate', 'demo', '--strict'])).exitCode).toBe(0);
  });

  it('an install killed (SIGKILL) or interrupted (SIGINT) half way leaves no half-installed skill and a consistent lock', async () => {
    const s = await scenario();
    await mkdir(s.dataDir, { recursive: true });
    const zip = await writeZip(
      s.root,
      'big.zip',
      Promise.resolve(
        buildStoredZip([
          { name: 'big/SKILL.md', data: skillMd('big') },
          ...Array.from({ length: 4_000 }, (_, i) => ({ name: `big/f/${i}.txt`, data: 'x'.repeat(512) })),
        ]),
      ),
    );
    for (const signal of ['SIGKILL', 'SIGINT'] as const) {
      const child = execa(process.execPath, [BIN, '--data-dir', s.dataDir, 'skill', 'install', zip], { reject: false, env: baseEnv(), extendEnv: false });
      let sent = false;
      const watcher = watch(s.dataDir, (_event, name) => {
        if (name !== '.skills-staging' || sent) return;
        sent = true;
        child.kill(signal);
      });
      const r = await child.finally(() => watcher.close());
      const listed = (await s.json<ListOut>(['skill', 'list'])).map((x) => x.name);
      const verify = await s.lbot(['skill', 'verify']);
      if (listed.includes('big')) {
        // The signal came after the commit: a whole skill and a lock entry that matches it.
        expect(verify.exitCode, verify.stdout).toBe(0);
      } else {
        expect(existsSync(path.join(s.skillsRoot, 'big'))).toBe(false);
        expect(verify.exitCode, verify.stdout).toBe(0);
        if (signal === 'SIGINT') {
          expect(r.exitCode).toBe(130);
          expect(existsSync(path.join(s.dataDir, '.skills-staging'))).toBe(false);
        }
      }
      await s.lbot(['skill', 'remove', 'big']);
    }
    // Whatever a killed install left behind is cleared by the next one.
    const next = await s.lbot(['skill', 'install', path.join(FIX, 'hello-skill.zip')]);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(existsSync(path.join(s.dataDir, '.skills-staging'))).toBe(false);
    expect((await s.lbot(['skill', 'verify'])).exitCode).toBe(0);
  });
});
