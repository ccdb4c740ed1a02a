// Process families: every process lbot starts for a plugin or an MCP server carries a random marker
// in its env, which its descendants inherit. A descendant that left the process group (setsid) or
// was orphaned is still found by the marker and ends with the family.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

export const FAMILY_ENV = 'LBOT_PROCESS_FAMILY';

/** Process group leader → family marker. */
const families = new Map<number, string>();

export function newFamily(): string {
  return randomBytes(12).toString('hex');
}

/** Links the family marker to the group leader `pid`, so signalling the group reaches the family. */
export function adoptFamily(pid: number, family: string): void {
  families.set(pid, family);
}

/** The family marker of a group leader, if it has one. */
export function familyOf(pgid: number): string | undefined {
  return families.get(pgid);
}

/** Forgets the family of a reaped group leader. */
export function forgetFamily(pgid: number): void {
  families.delete(pgid);
}

/** Live processes whose environment carries `family` (only processes this user may read). */
export function familyMembers(family: string): number[] {
  const needle = `${FAMILY_ENV}=${family}`;
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(needle)) out.push(pid);
    } catch {
      // exited meanwhile, or another user's process
    }
  }
  return out;
}
