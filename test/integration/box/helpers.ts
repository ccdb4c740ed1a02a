// Shared setup for the box integration tests: a temp data dir, a service on it, bwrap availability, cleanup.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigSchema, type BoxConfig } from '../../../src/core/config.js';
import { BwrapBackend } from '../../../src/runtime/box/bwrap.js';
import { createBoxService, type BoxService } from '../../../src/runtime/box/service.js';
import { processStartTime } from '../../../src/runtime/process/identity.js';

const probe = await new BwrapBackend({ bin: 'bwrap', baseDir: os.tmpdir(), limits: 'auto', nodeBinary: null }).probe();
/** Why real-sandbox tests cannot run here, or null. */
export const bwrapSkipReason: string | null = probe.available ? null : `bwrap backend unavailable: ${probe.reason}`;
export const limitsMode = probe.limits_mode ?? 'none';

export function skipNotice(suite: string): void {
  if (bwrapSkipReason) console.warn(`skipping ${suite}: ${bwrapSkipReason}`);
}

export type BoxFixture = {
  root: string;
  dataDir: string;
  box: BoxService;
  config: BoxConfig;
  warnings: string[];
  open(over?: Record<string, unknown>): BoxService;
};

/** A fresh data dir and a box service on it; `over` are `box.*` config keys. */
export function boxFixture(over: Record<string, unknown> = {}): BoxFixture {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-box-it-')));
  const dataDir = path.join(root, 'data');
  const warnings: string[] = [];
  const make = (extra: Record<string, unknown> = {}) => {
    const config = ConfigSchema.parse({ box: { workspace_quota_mb: 0, ...over, ...extra } }).box;
    return { config, box: createBoxService({ dataDir, config, warn: (m) => warnings.push(m) }) };
  };
  const { config, box } = make();
  return { root, dataDir, box, config, warnings, open: (extra) => make(extra).box };
}

/** Removes every session of a fixture and its temp dir. */
export async function disposeFixture(f: BoxFixture): Promise<void> {
  for (const s of await f.box.sessions()) await f.box.removeSession(s.session_id).catch(() => undefined);
  rmSync(f.root, { recursive: true, force: true });
}

/** Polls `check` every 100 ms until it holds or `ms` passes. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

/** True when the process is gone or a zombie (an exited process its parent has not reaped yet). */
export function pidGone(pid: number): boolean {
  return processStartTime(pid) === null;
}
