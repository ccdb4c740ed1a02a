// A successful sandbox probe, remembered across lbot processes: the probe is one real sandbox start, and a
// one-event `lbot run` would otherwise pay for it on every call. The memo holds for exactly the facts the
// probe's outcome depends on (the tools' files, the kernel and this boot, the user-namespace sysctls, who
// runs lbot and as whom the plugin runs, the limits plan, the seccomp filter, lbot's version); any change
// probes again. Only success is remembered: a failure is probed anew each time, so fixing the machine
// helps at once. A sandboxed plugin that exits abnormally drops the memo (its start may have failed).
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { z } from 'zod';
import { LBOT_VERSION } from '../../package-root.js';
import { readJson, writeJsonAtomic } from '../box/files.js';

const MemoSchema = z.strictObject({ key: z.string() });

const SYSCTLS = [
  '/proc/sys/kernel/random/boot_id',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
];

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

function fileFacts(file: string): string {
  try {
    const s = statSync(file);
    return `${file}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.mode}:${s.uid}`;
  } catch {
    return `${file}:missing`;
  }
}

/** The memo key of a probe: a digest of everything its outcome depends on. */
export function probeKey(facts: { tools: readonly string[]; plan: unknown; filter: Buffer; runAs: unknown }): string {
  const parts = [
    LBOT_VERSION,
    os.release(),
    process.getuid?.() ?? -1,
    process.getgid?.() ?? -1,
    ...SYSCTLS.map(readOr),
    ...facts.tools.map(fileFacts),
    facts.plan,
    facts.runAs,
    createHash('sha256').update(facts.filter).digest('hex'),
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export function probeRemembered(file: string, key: string): boolean {
  return readJson(file, MemoSchema)?.key === key;
}

export function rememberProbe(file: string, key: string): void {
  try {
    writeJsonAtomic(file, { key });
  } catch {
    // A memo that cannot be written only costs the next process its own probe.
  }
}

export function forgetProbe(file: string): void {
  rmSync(file, { force: true });
}
