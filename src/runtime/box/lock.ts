// Cross-process file locks for box records: an exclusive lock file naming its owner, stale owners broken.
import { openSync, closeSync, writeSync, readFileSync, unlinkSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LbotError } from '../../core/errors.js';
import { bootId, isIdentityAlive, processStartTime } from '../process/identity.js';

const ownerText = () => `${process.pid} ${processStartTime(process.pid) ?? '0'} ${bootId()}`;

function ownerAlive(text: string): boolean {
  const [pid, start, boot] = text.trim().split(' ');
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0 || !start || !boot) return false;
  return isIdentityAlive({ pid: n, start, boot });
}

function tryAcquire(file: string, me: string): boolean {
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, me);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (err) {
    if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
  }
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  // An empty file is a lock being written right now; only a named, dead owner is stale.
  if (text !== '' && !ownerAlive(text)) {
    try {
      unlinkSync(file);
    } catch {
      // someone else broke it first
    }
  }
  return false;
}

/** Runs `fn` holding the lock file `file`; waits for other holders, breaks locks of dead processes. */
export async function withLock<T>(file: string, fn: () => Promise<T> | T, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const me = ownerText();
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let delay = 2;
  while (!tryAcquire(file, me)) {
    if (Date.now() > deadline) {
      throw new LbotError('store.locked', `timed out waiting for the lock on ${opts.what ?? file}; another lbot process holds it`, {
        details: { file },
        retryable: true,
      });
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
  try {
    return await fn();
  } finally {
    try {
      if (readFileSync(file, 'utf8') === me) unlinkSync(file);
    } catch {
      // already gone
    }
  }
}
