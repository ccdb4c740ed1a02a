// `lbot skill verify`: re-hash every installed skill and compare with skills.lock.json.
import path from 'node:path';
import { LbotError } from '../errors.js';
import { treeDigest } from './digest.js';
import { readLock } from './lock.js';
import { installedNames, skillsRoot } from './store.js';

export type VerifyStatus = 'ok' | 'modified' | 'missing' | 'untracked';
export type VerifyEntry = { name: string; status: VerifyStatus; expected: string | null; actual: string | null };
export type VerifyReport = { ok: boolean; skills: VerifyEntry[] };

/**
 * Compares each installed folder with its lock entry: `modified` (digest differs), `missing` (in the
 * lock, folder gone), `untracked` (folder the lock does not know). `ok` is true only when all match.
 */
export async function verifySkills(dataDir: string, names?: readonly string[]): Promise<VerifyReport> {
  const lock = await readLock(dataDir);
  const present = new Set(await installedNames(dataDir));
  const all = [...new Set([...present, ...Object.keys(lock.skills)])].sort();
  const unknown = (names ?? []).filter((n) => !all.includes(n));
  if (unknown.length > 0)
    throw new LbotError('skill.not_found', `not installed and not in skills.lock.json: ${unknown.join(', ')}`, { details: { names: unknown } });
  const wanted = names && names.length > 0 ? all.filter((n) => names.includes(n)) : all;
  const skills: VerifyEntry[] = [];
  for (const name of wanted) {
    const expected = lock.skills[name]?.sha256 ?? null;
    if (!present.has(name)) {
      skills.push({ name, status: 'missing', expected, actual: null });
      continue;
    }
    const actual = await treeDigest(path.join(skillsRoot(dataDir), name));
    const status: VerifyStatus = expected === null ? 'untracked' : expected === actual ? 'ok' : 'modified';
    skills.push({ name, status, expected, actual });
  }
  return { ok: skills.every((s) => s.status === 'ok'), skills };
}
