// `lbot skill install --frozen`: install exactly what skills.lock.json records, failing on any mismatch.
import path from 'node:path';
import { LbotError } from '../errors.js';
import { treeDigest } from './digest.js';
import { commitPackages, preparePackages, withStaging, type InstallContext, type Prepared } from './install.js';
import { readLock, type LockEntry } from './lock.js';
import { resolveSkillSource } from './source.js';
import { selectCandidates, stageSource } from './stage.js';
import { installedNames, skillsRoot } from './store.js';

export type FrozenStatus = 'unchanged' | 'installed';
export type FrozenResult = { name: string; status: FrozenStatus; sha256: string; source: string };

function drift(name: string, entry: LockEntry, actual: string): LbotError {
  return new LbotError('skill.drift', `skill ${name} from ${entry.source} has digest ${actual}, but skills.lock.json records ${entry.sha256}`, {
    details: { name, expected: entry.sha256, actual, source: entry.source },
    hint: 'the source changed since it was locked; install it without --frozen (with --replace) to accept the new content',
  });
}

/**
 * With `source`: its packages must match their lock entries exactly; they are (re)placed. Without:
 * every lock entry whose folder is missing or modified is fetched again from its recorded source (git
 * sources at the recorded commit) and must hash to the recorded digest. All or nothing; the lock is
 * never changed.
 */
export async function installFrozen(
  opts: { source?: string | undefined; picks?: readonly string[] | undefined },
  ctx: InstallContext,
): Promise<{ skills: FrozenResult[] }> {
  return withStaging(ctx, async (work) => {
    const lock = await readLock(ctx.dataDir);
    const present = new Set(await installedNames(ctx.dataDir));
    const results: FrozenResult[] = [];
    const prepared: Prepared[] = [];
    const take = async (name: string, entry: LockEntry, source: string, picks: readonly string[], ref: string | undefined) => {
      const resolved = await resolveSkillSource(source, { ref }, ctx.cwd);
      const staged = await stageSource(resolved, path.join(work, `stage-${prepared.length}`), { ...ctx });
      const [p] = await preparePackages(staged, selectCandidates(staged, picks), name, path.join(work, `ready-${prepared.length}`), ctx);
      if (!p) return;
      if (p.sha256 !== entry.sha256) throw drift(name, entry, p.sha256);
      prepared.push(p);
      results.push({ name, status: 'installed', sha256: p.sha256, source: entry.source });
    };
    if (opts.source !== undefined) {
      const resolved = await resolveSkillSource(opts.source, {}, ctx.cwd);
      const staged = await stageSource(resolved, path.join(work, 'stage'), { ...ctx });
      for (const p of await preparePackages(staged, selectCandidates(staged, opts.picks ?? []), undefined, work, ctx)) {
        const entry = lock.skills[p.name];
        if (!entry)
          throw new LbotError('skill.drift', `skill ${p.name} is not recorded in skills.lock.json`, {
            details: { name: p.name },
            hint: 'install it without --frozen first',
          });
        if (entry.sha256 !== p.sha256) throw drift(p.name, entry, p.sha256);
        prepared.push(p);
        results.push({ name: p.name, status: 'installed', sha256: p.sha256, source: entry.source });
      }
    } else {
      for (const [name, entry] of Object.entries(lock.skills).sort(([a], [b]) => a.localeCompare(b))) {
        if (present.has(name) && (await treeDigest(path.join(skillsRoot(ctx.dataDir), name))) === entry.sha256) {
          results.push({ name, status: 'unchanged', sha256: entry.sha256, source: entry.source });
          continue;
        }
        const ref = entry.source_type === 'git' ? (entry.commit ?? entry.ref ?? undefined) : undefined;
        await take(name, entry, entry.source, [entry.source_path === '' ? '.' : entry.source_path], ref);
      }
    }
    if (prepared.length > 0) await commitPackages(ctx, work, prepared, lock, (current) => current);
    return { skills: results };
  });
}
