// SKILL.md entry files: line-based frontmatter split, YAML parse keeping every key, and round-trip writes.
import { parse as parseYaml, parseDocument, stringify as stringifyYaml } from 'yaml';
import { isRecord } from '../json.js';

export type ParsedSkillMd = {
  /** The whole parsed frontmatter, unknown keys (license, allowed-tools, metadata, vendor keys) included. */
  frontmatter: Record<string, unknown>;
  /** The Markdown body: the skill's instructions. */
  body: string;
  /** True when a `---` … `---` block was found. */
  hasFrontmatter: boolean;
  /** Problems that did not stop parsing, e.g. `invalid frontmatter: …`. */
  warnings: string[];
};

type Line = { text: string; start: number; end: number };

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl + 1;
    lines.push({ text: text.slice(start, nl === -1 ? text.length : nl).replace(/\r$/, ''), start, end });
    if (nl === -1) break;
    start = end;
  }
  return lines;
}

/**
 * Parses an entry file (skills-mcp-tools.md §1.2): the first line must be `---`; the YAML runs to the
 * next line that is exactly `---`. YAML errors keep the file usable: no frontmatter, plus a warning.
 */
export function parseSkillMd(raw: string): ParsedSkillMd {
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  const none = (warnings: string[] = []): ParsedSkillMd => ({ frontmatter: {}, body: text, hasFrontmatter: false, warnings });
  const lines = splitLines(text);
  if (!text.startsWith('---') || lines[0]?.text.trim() !== '---') return none();
  const close = lines.findIndex((l, i) => i > 0 && l.text.trim() === '---');
  if (close === -1) return none(['invalid frontmatter: no closing "---" line']);
  const closing = lines[close];
  if (!closing) return none();
  const yamlText = lines
    .slice(1, close)
    .map((l) => l.text)
    .join('\n');
  const body = text.slice(closing.end).replace(/^(\r?\n)+/, '');
  let value: unknown;
  try {
    value = parseYaml(yamlText, { prettyErrors: true, uniqueKeys: false, maxAliasCount: 100 });
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'parse error';
    return { frontmatter: {}, body, hasFrontmatter: true, warnings: [`invalid frontmatter: ${reason}`] };
  }
  if (value === null || value === undefined) return { frontmatter: {}, body, hasFrontmatter: true, warnings: [] };
  if (!isRecord(value)) return { frontmatter: {}, body, hasFrontmatter: true, warnings: ['invalid frontmatter: it is not a mapping of keys to values'] };
  return { frontmatter: value, body, hasFrontmatter: true, warnings: [] };
}

/** A frontmatter string field, trimmed; '' when absent or not a scalar. */
export function frontmatterString(frontmatter: Record<string, unknown>, key: string): string {
  const v = frontmatter[key];
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

/** Renders a new entry file: `---`, the YAML of `frontmatter` (key order kept), `---`, blank line, body. */
export function renderSkillMd(frontmatter: Record<string, unknown>, body: string): string {
  const yaml = stringifyYaml(frontmatter, { lineWidth: 0 }).trimEnd();
  return `---\n${yaml}\n---\n\n${body}`;
}

/**
 * Rewrites an existing entry file changing only the given keys (undefined deletes a key). Every other
 * key, its order and its comments survive (skills-mcp-tools.md §1.2 writing rules, §9 Q7).
 */
export function updateSkillMd(raw: string, patch: Record<string, string | undefined>, body?: string): string {
  const parsed = parseSkillMd(raw);
  const lines = splitLines(raw.startsWith('\uFEFF') ? raw.slice(1) : raw);
  const close = parsed.hasFrontmatter ? lines.findIndex((l, i) => i > 0 && l.text.trim() === '---') : -1;
  const yamlText =
    close > 0
      ? lines
          .slice(1, close)
          .map((l) => l.text)
          .join('\n')
      : '';
  const nextBody = body ?? parsed.body;
  if (yamlText.trim() === '' || parsed.warnings.length > 0) {
    const fresh: Record<string, string> = {};
    for (const [key, value] of Object.entries(patch)) if (value !== undefined) fresh[key] = value;
    return Object.keys(fresh).length === 0 ? nextBody : renderSkillMd(fresh, nextBody);
  }
  const doc = parseDocument(yamlText);
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) doc.delete(key);
    else doc.set(key, value);
  }
  const yaml = doc.toString({ lineWidth: 0 }).trimEnd();
  return yaml === '' ? nextBody : `---\n${yaml}\n---\n\n${nextBody}`;
}
