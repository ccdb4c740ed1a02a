// `<data-dir>/skills.lock.json`: per skill its source, version, install time, tree digest and history.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { LbotError } from '../errors.js';
import { parseJsonText } from '../json-parse.js';
import { ensurePrivateDir } from '../stores/private-files.js';
import { firstIssue } from '../zod-issue.js';

export const LOCK_FILE_NAME = 'skills.lock.json';
const MUTEX_DIR = '.skills.lck';

export const SkillSourceTypeSchema = z.enum(['directory', 'zip', 'git', 'url']);
export type SkillSourceType = z.infer<typeof SkillSourceTypeSchema>;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'expected a lowercase hex sha256');

export const LockHistoryEntrySchema = z.looseObject({
  sha256: Sha256Schema,
  source: z.string(),
  version: z.string().nullable().default(null),
  installed_at: z.string(),
  replaced_at: z.string(),
});
export type LockHistoryEntry = z.infer<typeof LockHistoryEntrySchema>;

export const LockEntrySchema = z.looseObject({
  /** Where the package came from: an absolute path or a URL. */
  source: z.string().min(1),
  source_type: SkillSourceTypeSchema,
  /** Folder of the package inside the source ('' = its root). */
  source_path: z.string().default(''),
  /** Requested git ref (branch, tag or commit), if any. */
  ref: z.string().nullable().default(null),
  /** Resolved git commit, if the source was a git repository. */
  commit: z.string().nullable().default(null),
  version: z.string().nullable().default(null),
  sha256: Sha256Schema,
  installed_at: z.string(),
  /** Earlier digests, oldest first, appended on every `--replace` (AC-221). */
  history: z.array(LockHistoryEntrySchema).default([]),
});
export type LockEntry = z.infer<typeof LockEntrySchema>;

export const LockFileSchema = z.looseObject({
  lockfile_version: z.literal(1),
  skills: z.record(z.string(), LockEntrySchema),
});
export type LockFile = z.infer<typeof LockFileSchema>;

export const emptyLock = (): LockFile => ({ lockfile_version: 1, skills: {} });

/** Path of the lock file of a data dir. */
export const lockFilePath = (dataDir: string): string => path.join(dataDir, LOCK_FILE_NAME);

/** Reads the lock; a missing file is an empty lock, a broken one fails with store.unavailable naming it. */
export async function readLock(dataDir: string): Promise<LockFile> {
  const file = lockFilePath(dataDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return emptyLock();
    throw new LbotError('store.unavailable', `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, { details: { file } });
  }
  const raw = parseJsonText(text, file, 'store.unavailable');
  const parsed = LockFileSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new LbotError('store.unavailable', `${file}: ${firstIssue(parsed.error).text}`, {
    details: { file },
    hint: 'restore the file from version control, or remove it and reinstall the skills',
  });
}

/** Writes the lock atomically (temp file + rename), skills sorted by name for stable diffs. */
export async function writeLock(dataDir: string, lock: LockFile): Promise<void> {
  const file = lockFilePath(dataDir);
  const skills: Record<string, LockEntry> = {};
  for (const name of Object.keys(lock.skills).sort()) {
    const entry = lock.skills[name];
    if (entry) skills[name] = entry;
  }
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  ensurePrivateDir(dataDir);
  try {
    await writeFile(tmp, `${JSON.stringify({ ...lock, skills }, null, 2)}\n`, { mode: 0o644 });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw new LbotError('store.unavailable', `cannot write ${file}: ${err instanceof Error ? err.message : String(err)}`, { details: { file }, cause: err });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return !(err instanceof Error && 'code' in err && err.code === 'ESRCH');
  }
}

/**
 * Takes the data dir's skill mutex (a directory, so it works across processes) or fails at once with
 * `store.locked`. A mutex left by a dead process is taken over. Returns the release function.
 */
export async function acquireSkillMutex(dataDir: string): Promise<() => Promise<void>> {
  const dir = path.join(dataDir, MUTEX_DIR);
  ensurePrivateDir(dataDir); // a data dir a skill command creates is 0700 like any other
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await mkdir(dir);
      await writeFile(path.join(dir, 'owner.json'), JSON.stringify({ pid: process.pid, since: new Date().toISOString() }));
      return async () => {
        await rm(dir, { recursive: true, force: true });
      };
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
      const owner = await readFile(path.join(dir, 'owner.json'), 'utf8').catch(() => '');
      const pid = Number(/"pid":\s*(\d+)/.exec(owner)?.[1] ?? NaN);
      if (Number.isInteger(pid) && pidAlive(pid)) {
        throw new LbotError(
          'store.locked',
          `${pid === process.pid ? 'this lbot process' : `another lbot process (pid ${pid})`} is already changing the skills in ${dataDir}`,
          {
            retryable: true,
            details: { pid, mutex: dir },
            hint: 'wait for it to finish and retry',
          },
        );
      }
      if (owner === '' && attempt === 0) {
        // The owner may be between mkdir and writing owner.json; treat an ownerless mutex as held once.
        throw new LbotError('store.locked', `another lbot process is changing the skills in ${dataDir}`, {
          retryable: true,
          details: { mutex: dir },
          hint: `wait and retry; if no lbot process is running, remove ${dir}`,
        });
      }
      await rm(dir, { recursive: true, force: true });
    }
  }
  throw new LbotError('store.locked', `could not take the skill mutex ${dir}`, { retryable: true, details: { mutex: dir } });
}
