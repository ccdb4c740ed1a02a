// SKILL.md parsing and writing (skills-mcp-tools.md §1.2, §8 #29, §9 Q7).
import { describe, expect, it } from 'vitest';
import { frontmatterString, parseSkillMd, renderSkillMd, updateSkillMd } from '../../src/core/skills/frontmatter.js';

describe('SKILL.md frontmatter', () => {
  it('splits frontmatter and body (§8 #29)', () => {
    const p = parseSkillMd('---\ndescription: Test skill\n---\n\n# T\nDo.');
    expect(p.frontmatter).toEqual({ description: 'Test skill' });
    expect(p.body).toBe('# T\nDo.');
    expect(p.warnings).toEqual([]);
  });

  it('without frontmatter yields {} and the full text', () => {
    const text = '# Just markdown\n\n---\nnot: yaml\n---\n';
    const p = parseSkillMd(text);
    expect(p.frontmatter).toEqual({});
    expect(p.body).toBe(text);
    expect(p.hasFrontmatter).toBe(false);
  });

  it('keeps unknown keys: license, allowed-tools, metadata maps, vendor keys', () => {
    const p = parseSkillMd(
      [
        '---',
        'name: pdf',
        'description: Fill PDF forms. Use when asked to fill a form.',
        'license: Apache-2.0',
        'allowed-tools: Bash(git:*) Read',
        'metadata:',
        '  author: acme',
        '  version: "1.2"',
        'user-invocable: false',
        '---',
        'Body',
      ].join('\n'),
    );
    expect(p.frontmatter).toEqual({
      name: 'pdf',
      description: 'Fill PDF forms. Use when asked to fill a form.',
      license: 'Apache-2.0',
      'allowed-tools': 'Bash(git:*) Read',
      metadata: { author: 'acme', version: '1.2' },
      'user-invocable': false,
    });
    expect(frontmatterString(p.frontmatter, 'name')).toBe('pdf');
  });

  it('uses the line-based split: a "---" inside a YAML value does not end the block', () => {
    const p = parseSkillMd('---\ndescription: "a --- b"\nnote: |\n  x --- y\n---\nBody --- text\n');
    expect(p.frontmatter).toEqual({ description: 'a --- b', note: 'x --- y\n' });
    expect(p.body).toBe('Body --- text\n');
  });

  it('handles CRLF line ends and a byte-order mark', () => {
    const p = parseSkillMd('\uFEFF---\r\nname: x\r\ndescription: y\r\n---\r\n\r\nBody\r\n');
    expect(p.frontmatter).toEqual({ name: 'x', description: 'y' });
    expect(p.body).toBe('Body\r\n');
  });

  it('treats broken YAML as no frontmatter with a warning, keeping the body', () => {
    const p = parseSkillMd('---\nname: [unclosed\n---\nBody');
    expect(p.frontmatter).toEqual({});
    expect(p.body).toBe('Body');
    expect(p.warnings[0]).toMatch(/^invalid frontmatter: /);
  });

  it('reads duplicate keys like a YAML safe load does: the last one wins', () => {
    const p = parseSkillMd('---\nname: a\nname: b\n---\nBody');
    expect(p.frontmatter).toEqual({ name: 'b' });
    expect(p.warnings).toEqual([]);
  });

  it('treats a non-mapping frontmatter and a missing closing line as no frontmatter', () => {
    expect(parseSkillMd('---\n- a\n- b\n---\nB').frontmatter).toEqual({});
    const unclosed = parseSkillMd('---\nname: x\nBody');
    expect(unclosed.frontmatter).toEqual({});
    expect(unclosed.warnings.join()).toContain('closing');
  });

  it('renders new files as ---, YAML, ---, blank line, body', () => {
    const text = renderSkillMd({ name: 'x', description: 'Does x: when asked' }, '# X\n');
    expect(text).toBe('---\nname: x\ndescription: "Does x: when asked"\n---\n\n# X\n');
    expect(parseSkillMd(text).frontmatter).toEqual({ name: 'x', description: 'Does x: when asked' });
  });

  it('updates only the managed keys and keeps every other key, its order and comments (§9 Q7)', () => {
    const before = '---\nname: pdf\n# who maintains it\nlicense: MIT\ndescription: old\nmetadata:\n  author: acme\n---\n\nBody\n';
    const after = updateSkillMd(before, { description: 'new', display_name: 'PDF' });
    expect(after).toContain('# who maintains it');
    const p = parseSkillMd(after);
    expect(Object.keys(p.frontmatter)).toEqual(['name', 'license', 'description', 'metadata', 'display_name']);
    expect(p.frontmatter).toMatchObject({ name: 'pdf', license: 'MIT', description: 'new', metadata: { author: 'acme' }, display_name: 'PDF' });
    expect(p.body).toBe('Body\n');
  });
});
