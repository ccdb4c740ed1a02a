// The skills side of the tool table: per-run state, the `activate` tool source, and the native-call guard.
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import type { SkillCatalogEntry } from '../../src/core/skills/index.js';
import { guardNativeCall, prepareRunSkills, SkillToolSource } from '../../src/core/skills/tool-source.js';

const entry = (name: string): SkillCatalogEntry => ({
  name,
  display_name: name,
  description: `${name} skill`,
  instructions: `do ${name}`,
  package_root: `/d/skills/${name}`,
});
const catalog = [entry('hello-skill'), entry('pdf'), entry('gone')];
const ctx = { run_id: 'r1', signal: new AbortController().signal };

function reason(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    if (err instanceof LbotError) return err.details.reason ?? err.code;
    throw err;
  }
  return 'passed';
}

describe('prepareRunSkills', () => {
  it('binds, mounts read-only, and warns about unknown names and vanished folders', () => {
    const run = prepareRunSkills({ skills: ['pdf', 'hello-skill', 'ghost', 'gone'] }, catalog, (p) => p !== '/d/skills/gone');
    expect(run.visible.map((s) => s.name)).toEqual(['gone', 'hello-skill', 'pdf']);
    expect(run.mounts).toEqual([
      { host_path: '/d/skills/hello-skill', mount_path: '/workspace/.skills/hello-skill', mode: 'ro' },
      { host_path: '/d/skills/pdf', mount_path: '/workspace/.skills/pdf', mode: 'ro' },
    ]);
    expect(run.warnings).toEqual([expect.stringContaining('ghost'), expect.stringContaining('skill gone')]);
    expect(run.resources.map((r) => r.skill_name)).toEqual(['gone', 'hello-skill', 'pdf']);
  });
});

describe('SkillToolSource', () => {
  it('offers activate only with a usable box and at least one bound skill', async () => {
    const bound = prepareRunSkills({ skills: ['pdf'] }, catalog, () => true);
    expect((await new SkillToolSource(bound, async () => true).list()).map((t) => t.name)).toEqual(['activate']);
    expect(await new SkillToolSource(bound, async () => false).list()).toEqual([]);
    expect(
      await new SkillToolSource(
        prepareRunSkills({ skills: [] }, catalog, () => true),
        async () => true,
      ).list(),
    ).toEqual([]);
  });

  it('activates bound skills only and records them for the run', async () => {
    const run = prepareRunSkills({ skills: ['pdf'] }, catalog, () => true);
    const source = new SkillToolSource(run, async () => true);
    await expect(source.call('activate', { skill_name: 'pdf' }, ctx)).resolves.toMatchObject({ activated: true, mount_path: '/workspace/.skills/pdf' });
    expect([...run.state.activated.keys()]).toEqual(['pdf']);
    await expect(source.call('activate', { skill_name: 'hello-skill' }, ctx)).rejects.toThrow('Skill "hello-skill" not found. Available skills: pdf');
    await expect(source.call('register_skill', {}, ctx)).rejects.toThrow('Tool not found');
  });
});

describe('guardNativeCall', () => {
  it('applies the activation rule to exec (absolute and relative references, workdir) and to file tools', () => {
    const run = prepareRunSkills({ skills: ['pdf', 'hello-skill'] }, catalog, () => true);
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'ls -la' }))).toBe('passed');
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'sh /workspace/.skills/pdf/run.sh' }))).toBe('skill_not_activated');
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'cd /workspace && sh .skills/pdf/run.sh' }))).toBe('skill_not_activated');
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'sh run.sh', workdir: '/workspace/.skills/pdf' }))).toBe('skill_not_activated');
    expect(reason(() => guardNativeCall(run, 'read', { path: '/workspace/.skills/pdf/SKILL.md' }))).toBe('passed');
    expect(reason(() => guardNativeCall(run, 'glob', { pattern: '*', path: '.skills/pdf' }))).toBe('passed');
    expect(reason(() => guardNativeCall(run, 'read', { path: '/workspace/.skills/gone/SKILL.md' }))).toBe('skill_not_bound');
    expect(reason(() => guardNativeCall(run, 'write', { path: '/workspace/./.skills/pdf/x', content: '' }))).toBe('skill_not_activated');
    expect(reason(() => guardNativeCall(run, 'write', { path: '/workspace/notes.md', content: '' }))).toBe('passed');
    run.state.activated.set('pdf', run.visible[1] ?? entry('pdf'));
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'sh /workspace/.skills/pdf/run.sh' }))).toBe('passed');
    expect(reason(() => guardNativeCall(run, 'edit', { path: '/workspace/.skills/pdf/x', old_string: 'a', new_string: 'b' }))).toBe('passed');
    expect(reason(() => guardNativeCall(run, 'exec', { command: 'diff .skills/pdf/a /workspace/.skills/hello-skill/b' }))).toBe('multiple_skills');
  });
});
