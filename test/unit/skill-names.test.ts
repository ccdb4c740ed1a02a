// Skill name rules (skills-mcp-tools.md §1.3, §8 #30) and install-name derivation (acceptance AC-136).
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../src/core/errors.js';
import { agentSkillsNameWarnings, isValidSkillName, sanitizeSkillName, validateSkillName } from '../../src/core/skills/names.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof LbotError ? err.code : 'not-an-lbot-error';
  }
  return undefined;
}

describe('skill names', () => {
  it('accepts ASCII letters, digits, "-" and "_" up to 64 characters', () => {
    for (const ok of ['a-b_c1', 'hello-skill', 'X', 'a'.repeat(64), 'mcp-builder']) expect(isValidSkillName(ok)).toBe(true);
    expect(validateSkillName('  hello-skill ')).toBe('hello-skill');
  });

  it.each([
    ['', 'is empty'],
    ['my skill', 'is not allowed'],
    ['a/b', 'is not allowed'],
    ['ünï', 'is not allowed'],
    ['数据分析', 'is not allowed'],
    ['a'.repeat(65), '65 characters'],
  ])('refuses %j with skill.invalid_name stating the rule', (name, words) => {
    expect(codeOf(() => validateSkillName(name))).toBe('skill.invalid_name');
    try {
      validateSkillName(name);
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      expect(message).toContain(words);
      expect(message).toContain('letters, digits, "-" and "_"');
      expect(message).toContain('64 characters');
    }
  });

  it('sanitises folder and archive names: others become "-", ends trimmed, empty becomes uploaded-skill', () => {
    expect(sanitizeSkillName('My Skill (v2)')).toBe('My-Skill--v2');
    expect(sanitizeSkillName('--_hello_--')).toBe('hello');
    expect(sanitizeSkillName('ünï')).toBe('n');
    expect(sanitizeSkillName('***')).toBe('uploaded-skill');
    expect(sanitizeSkillName('')).toBe('uploaded-skill');
    expect(sanitizeSkillName('x'.repeat(80))).toHaveLength(64);
  });

  it('warns about names outside the public Agent Skills rule without refusing them', () => {
    expect(agentSkillsNameWarnings('pdf-tools')).toEqual([]);
    expect(agentSkillsNameWarnings('My_Skill').length).toBeGreaterThan(0);
    expect(agentSkillsNameWarnings('a--b').join(' ')).toContain('--');
  });
});
