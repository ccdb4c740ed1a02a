// Skill index, the `activate` tool, mounts and the access rule (skills-mcp-tools.md §1.11–1.15, §2.1.1,
// §8 #19, #21–26, #28; acceptance AC-139 and AC-141 logic, box-free).
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import {
  activateSkill,
  activateToolDescriptor,
  checkExecSkills,
  checkSkillPath,
  createActivationState,
  parseSkillMountPath,
  skillMountPlan,
} from '../../src/core/skills/activation.js';
import { boundSkills, renderAvailableSkills, renderSkillIndexPrompt, skillResources, type SkillCatalogEntry } from '../../src/core/skills/index.js';
import { thrown } from '../helpers/thrown.js';

const skill = (name: string, description = `${name} does things`): SkillCatalogEntry => ({
  name,
  display_name: name,
  description,
  instructions: `# ${name}\nRun run.sh.\n`,
  package_root: `/data/skills/${name}`,
});
const catalog = [skill('hello-skill', 'Says hello'), skill('pdf', 'Fill <PDF> forms & more'), skill('unbound')];

const refusal = (fn: () => unknown): LbotError => thrown(fn, LbotError);

describe('skill index', () => {
  it('shows exactly the skills the binding names; unknown names are reported, an empty list binds none (§8 #22)', () => {
    const b = boundSkills({ skills: ['pdf', 'hello-skill', 'ghost', 'pdf'] }, catalog);
    expect(b.visible.map((s) => s.name)).toEqual(['hello-skill', 'pdf']);
    expect(b.missing).toEqual(['ghost']);
    expect(boundSkills({ skills: [] }, catalog).visible).toEqual([]);
  });

  it('renders resources.skills, the <available_skills> block and the prompt index (§1.12, §8 #28)', () => {
    const visible = boundSkills({ skills: ['pdf', 'hello-skill'] }, catalog).visible;
    expect(skillResources(visible)).toEqual([
      { skill_name: 'hello-skill', description: 'Says hello' },
      { skill_name: 'pdf', description: 'Fill <PDF> forms & more' },
    ]);
    expect(renderAvailableSkills(visible)).toContain('<skill><name>pdf</name><description>Fill &lt;PDF&gt; forms &amp; more</description></skill>');
    expect(renderAvailableSkills([skill('x', '')])).toContain('<skill><name>x</name></skill>');
    expect(renderSkillIndexPrompt([])).toBe('');
    const prompt = renderSkillIndexPrompt([skill('a', 'line one\nline two')]);
    expect(prompt).toContain('Available Skills:\n- a (a): line one line two');
    expect(prompt).toContain('`activate`');
  });
});

describe('activate tool', () => {
  it('describes the bound skills sorted by name, or says none are available (§8 #26)', () => {
    const d = activateToolDescriptor([skill('zeta'), skill('alpha')]);
    expect(d.name).toBe('activate');
    expect(d.parameters).toEqual({
      type: 'object',
      properties: { skill_name: { type: 'string', description: 'skill name only, no arguments' } },
      required: ['skill_name'],
      additionalProperties: false,
    });
    expect(d.description.indexOf('<name>alpha</name>')).toBeLessThan(d.description.indexOf('<name>zeta</name>'));
    expect(activateToolDescriptor([]).description).toContain('No skills are available');
  });

  it('activates a bound skill, records it once, and never leaks the host path (§8 #25, §9 Q10)', () => {
    const state = createActivationState();
    const visible = boundSkills({ skills: ['hello-skill'] }, catalog).visible;
    const r = activateSkill(state, visible, { skill_name: ' hello-skill ' });
    expect(r).toMatchObject({ activated: true, skill_name: 'hello-skill', mount_path: '/workspace/.skills/hello-skill' });
    expect(r.content).toContain('Run run.sh.');
    expect(r.content).toContain('<mount-path>/workspace/.skills/hello-skill</mount-path>');
    expect(r.content).not.toContain('/data/skills');
    const first = state.activated.get('hello-skill');
    activateSkill(state, [{ ...skill('hello-skill'), instructions: 'changed' }], { skill_name: 'hello-skill' });
    expect(state.activated.get('hello-skill')).toBe(first);
  });

  it('refuses skills the binding did not bind, even when installed (reference bug §9 Q2)', () => {
    const state = createActivationState();
    const visible = boundSkills({ skills: ['hello-skill'] }, catalog).visible;
    const err = refusal(() => activateSkill(state, visible, { skill_name: 'unbound' }));
    expect(err.code).toBe('runtime_error');
    expect(err.details.reason).toBe('skill_not_bound');
    expect(err.message).toBe('Skill "unbound" not found. Available skills: hello-skill');
    expect(state.activated.size).toBe(0);
    expect(refusal(() => activateSkill(state, [], { skill_name: 'x' })).message).toContain('Available skills: none');
  });

  it('refuses a blank or malformed skill_name', () => {
    const state = createActivationState();
    expect(refusal(() => activateSkill(state, catalog, { skill_name: '  ' })).message).toBe('skill_name is required');
    expect(refusal(() => activateSkill(state, catalog, { name: 'pdf' })).code).toBe('invalid_argument');
    expect(refusal(() => activateSkill(state, catalog, 'pdf')).code).toBe('invalid_argument');
  });
});

describe('mounts and access', () => {
  it('mounts every bound skill read-only and skips a vanished package with a warning naming it (§8 #21, AC-141)', () => {
    const visible = boundSkills({ skills: ['pdf', 'hello-skill'] }, catalog).visible;
    const plan = skillMountPlan(visible, (p) => p !== '/data/skills/pdf');
    expect(plan.mounts).toEqual([{ host_path: '/data/skills/hello-skill', mount_path: '/workspace/.skills/hello-skill', mode: 'ro' }]);
    expect(plan.warnings).toHaveLength(1);
    expect(plan.warnings[0]).toContain('pdf');
    expect(plan.warnings[0]).toContain('package_root missing');
  });

  it('parses skill mount paths (§8 #23)', () => {
    expect(parseSkillMountPath('/workspace/.skills/demo/SKILL.md')).toEqual({ skill: 'demo', inner: 'SKILL.md' });
    expect(parseSkillMountPath('/workspace/.skills/demo')).toEqual({ skill: 'demo', inner: '' });
    expect(parseSkillMountPath('/workspace/notes.txt')).toEqual({ skill: null, inner: '/workspace/notes.txt' });
    expect(parseSkillMountPath('')).toEqual({ skill: null, inner: '/workspace' });
    expect(refusal(() => parseSkillMountPath('/workspace/.skills')).message).toContain('<skill-name>');
  });

  it('lets bound skills be read, but written or run only after activation', () => {
    const state = createActivationState();
    const visible = boundSkills({ skills: ['hello-skill'] }, catalog).visible;
    expect(checkSkillPath(state, visible, '/workspace/.skills/hello-skill/run.sh', 'read')?.inner).toBe('run.sh');
    expect(checkSkillPath(state, visible, '/workspace/out.txt', 'write')).toBeNull();
    const write = refusal(() => checkSkillPath(state, visible, '/workspace/.skills/hello-skill/x', 'write'));
    expect(write.message).toContain('must be activated first');
    expect(refusal(() => checkSkillPath(state, visible, '/workspace/.skills/unbound/x', 'read')).message).toContain('not bound');
    activateSkill(state, visible, { skill_name: 'hello-skill' });
    expect(checkSkillPath(state, visible, '/workspace/.skills/hello-skill/x', 'write')?.skill.name).toBe('hello-skill');
  });

  it('exec: a skill reference needs activation, and one call may use one skill only (AC-139, §8 #19)', () => {
    const state = createActivationState();
    const visible = boundSkills({ skills: ['hello-skill', 'pdf'] }, catalog).visible;
    expect(checkExecSkills(state, visible, { command: 'true' })).toBeNull();
    const first = refusal(() => checkExecSkills(state, visible, { command: 'sh /workspace/.skills/hello-skill/run.sh' }));
    expect(first.message).toContain('must be activated first');
    expect(first.message).toContain('`activate`');
    expect(refusal(() => checkExecSkills(state, visible, { command: 'sh run.sh', workdir: '/workspace/.skills/hello-skill' })).details.reason).toBe(
      'skill_not_activated',
    );
    activateSkill(state, visible, { skill_name: 'hello-skill' });
    activateSkill(state, visible, { skill_name: 'pdf' });
    expect(checkExecSkills(state, visible, { command: 'sh /workspace/.skills/hello-skill/run.sh' })?.name).toBe('hello-skill');
    const two = refusal(() => checkExecSkills(state, visible, { command: 'cat /workspace/.skills/hello-skill/a /workspace/.skills/pdf/b' }));
    expect(two.message).toContain('only one skill package');
    expect(checkExecSkills(state, visible, { command: 'ls', workdir: '/workspace/.skills/pdf' })?.name).toBe('pdf');
    expect(
      refusal(() => checkExecSkills(state, visible, { command: 'sh /workspace/.skills/hello-skill/run.sh', workdir: '/workspace/.skills/pdf' })).details.reason,
    ).toBe('multiple_skills');
  });
});
