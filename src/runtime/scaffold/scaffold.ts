// `lbot runner init|scaffold DIR`: writes a TypeScript runner plugin from the template and links the
// packages it needs so it runs, tests and (when lbot has a compiler) builds without network access.
import { access, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import { fillPlaceholders, LANGBOT_TEMPLATE_DIR, LBOT_ROOT, pythonClassName, TEMPLATE_DIR, templateFiles, type TemplateValues } from './template.js';

/** Plugin author and name become runner id segments: plain characters only. */
export const ID_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export type ScaffoldOptions = {
  dir: string;
  author: string;
  name: string;
  label?: string | undefined;
  /** Link node_modules/lbot (and typescript, @types/node when available) into the new plugin. */
  link: boolean;
  /** A LangBot-SDK (Python) runner instead of a TypeScript one; nothing is linked. */
  langbot?: boolean | undefined;
};

export type ScaffoldResult = { dir: string; runner_id: string; files: string[]; linked: string[] };

/** The default plugin name for a directory: its base name, lower-cased, other characters as dashes. */
export function defaultPluginName(dir: string): string {
  return path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
}

export function checkSegment(flag: string, value: string): void {
  if (!ID_SEGMENT.test(value)) {
    throw new LbotError(
      'invalid_argument',
      `${flag} ${JSON.stringify(value)} cannot be part of a runner id: use letters, digits, dots, dashes and underscores, starting with a letter or digit`,
      { details: { value } },
    );
  }
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOTDIR') return false;
    return true;
  }
}

/** Where this lbot finds a package, or null (typescript and @types/node exist only in some installs). */
function resolvePackageDir(name: string): string | null {
  try {
    return path.dirname(createRequire(path.join(LBOT_ROOT, 'package.json')).resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

async function linkInto(dir: string, rel: string, target: string, linked: string[]): Promise<void> {
  const at = path.join(dir, rel);
  try {
    await access(at);
    return;
  } catch {
    // not there yet
  }
  await mkdir(path.dirname(at), { recursive: true });
  await symlink(target, at, 'dir');
  linked.push(rel);
}

/** Links what `npm install` would put in node_modules for the file: dependency, plus a compiler if lbot has one. */
async function linkPackages(dir: string): Promise<string[]> {
  const linked: string[] = [];
  await linkInto(dir, 'node_modules/lbot', LBOT_ROOT, linked);
  await mkdir(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  await linkBin(dir, 'lbot', path.join(LBOT_ROOT, 'bin', 'lbot.js'), linked);
  const ts = resolvePackageDir('typescript');
  const types = resolvePackageDir('@types/node');
  if (ts && types) {
    await linkInto(dir, 'node_modules/typescript', ts, linked);
    await linkInto(dir, 'node_modules/@types/node', types, linked);
    await linkBin(dir, 'tsc', path.join(ts, 'bin', 'tsc'), linked);
  }
  return linked;
}

async function linkBin(dir: string, name: string, target: string, linked: string[]): Promise<void> {
  const at = path.join(dir, 'node_modules', '.bin', name);
  try {
    await access(at);
    return;
  } catch {
    await symlink(target, at, 'file');
    linked.push(`node_modules/.bin/${name}`);
  }
}

/** Writes the plugin; refuses a directory that already has files in it. */
export async function scaffoldRunner(opts: ScaffoldOptions): Promise<ScaffoldResult> {
  const dir = path.resolve(opts.dir);
  checkSegment('--author', opts.author);
  checkSegment('--name', opts.name);
  if (!(await isEmptyOrMissing(dir))) {
    throw new LbotError('invalid_argument', `${dir} already exists and is not empty; lbot runner init writes into a new or empty directory`, {
      hint: 'pick another directory name',
    });
  }
  const label = opts.label ?? opts.name;
  const values: TemplateValues = {
    author: opts.author,
    name: opts.name,
    label,
    label_json: JSON.stringify(label),
    package_name: opts.name.toLowerCase(),
    description_json: JSON.stringify(`${label}: ${opts.langbot ? 'a LangBot AgentRunner plugin' : 'a runner plugin for lbot'}`),
    lbot_dependency_json: JSON.stringify(`file:${LBOT_ROOT.replace(/\/+$/, '')}`),
    class_name: pythonClassName(opts.name),
  };
  const templateDir = opts.langbot ? LANGBOT_TEMPLATE_DIR : TEMPLATE_DIR;
  // The shipped build is written last, so it is not older than its sources (lbot dev rebuilds stale builds).
  const files = (await templateFiles(templateDir)).sort((a, b) => Number(a.to.startsWith('dist/')) - Number(b.to.startsWith('dist/')));
  await mkdir(dir, { recursive: true });
  for (const f of files) {
    const target = path.join(dir, f.to);
    await mkdir(path.dirname(target), { recursive: true });
    const bytes = await readFile(path.join(templateDir, f.from));
    await writeFile(target, f.fill ? fillPlaceholders(bytes.toString('utf8'), values) : bytes);
  }
  const linked = opts.link && !opts.langbot ? await linkPackages(dir) : [];
  return { dir, runner_id: `plugin:${opts.author}/${opts.name}/default`, files: files.map((f) => f.to), linked };
}
