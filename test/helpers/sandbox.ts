// Whether runner plugins can be sandboxed here (bubblewrap, user namespaces, seccomp, limits): tests of
// the plugin sandbox skip with the reason when they cannot.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigSchema } from '../../src/core/config.js';
import { PluginSandbox } from '../../src/runtime/plugins/sandbox.js';

let cached: string | null | undefined;

/** null when plugins run sandboxed here, else why they cannot. */
export function sandboxSkipReason(): string | null {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-sandbox-probe-'));
  try {
    const r = new PluginSandbox({ mode: 'auto', dataDir: dir, limits: ConfigSchema.parse({}).plugins.limits, warn: () => undefined }).resolve();
    cached = r.isolation === 'sandbox' ? null : `runner plugins cannot be sandboxed here: ${r.reason}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return cached;
}
