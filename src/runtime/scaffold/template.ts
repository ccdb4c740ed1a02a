// The TypeScript runner template shipped in `templates/runner-ts/`: where it is, which files it has, and
// how its placeholders are filled.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../package-root.js';

/** The lbot package root (holds package.json, dist/ and templates/). */
export const LBOT_ROOT = PACKAGE_ROOT;
export const TEMPLATE_DIR = path.join(LBOT_ROOT, 'templates', 'runner-ts');
/** The LangBot-SDK (Python) runner template of `lbot runner init --langbot`. */
export const LANGBOT_TEMPLATE_DIR = path.join(LBOT_ROOT, 'templates', 'runner-langbot');

/** Template files stored under another name (npm drops `.gitignore` from packages). */
const RENAMES: Record<string, string> = { _gitignore: '.gitignore' };
/** Files with `{{placeholders}}`; the others (code, dist) are copied byte for byte. */
const FILLED = new Set(['manifest.yaml', 'components/agent_runner/default.yaml', 'package.json', 'README.md', 'main.py', 'components/agent_runner/default.py']);

/** Placeholder values; `*_json` ones are JSON string literals, safe inside YAML and package.json. */
export type TemplateValues = {
  author: string;
  name: string;
  label: string;
  label_json: string;
  package_name: string;
  description_json: string;
  lbot_dependency_json: string;
  /** The plugin name as a Python class name stem (`hello-bot` → `HelloBot`). */
  class_name: string;
};

export type TemplateFile = { from: string; to: string; fill: boolean };

/** Every file of the template, relative paths in POSIX form, sorted. */
export async function templateFiles(root: string = TEMPLATE_DIR): Promise<TemplateFile[]> {
  const out: TemplateFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(child);
      else out.push({ from: child, to: RENAMES[child] ?? child, fill: FILLED.has(child) });
    }
  };
  await walk('');
  return out.sort((a, b) => a.from.localeCompare(b.from));
}

/** Replaces `{{key}}` with its value; an unknown key is left as is so a test can spot it. */
export function fillPlaceholders(text: string, values: TemplateValues): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => (Object.hasOwn(values, key) ? String(values[key as keyof TemplateValues]) : whole));
}

/** A Python class name stem for a plugin name: its words capitalized, a leading digit guarded. */
export function pythonClassName(name: string): string {
  const stem = name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');
  return /^[A-Za-z]/.test(stem) ? stem : `P${stem}`;
}
