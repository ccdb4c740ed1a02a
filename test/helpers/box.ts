// Whether an isolating box backend works on this machine (tests that need one skip with the reason).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execaSync } from 'execa';
import { LBOT_BIN } from './serve.js';

let cached: { usable: boolean; reason: string } | undefined;

export function boxBackend(): { usable: boolean; reason: string } {
  if (cached) return cached;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-box-probe-'));
  try {
    const r = execaSync(process.execPath, [LBOT_BIN, '--data-dir', dir, 'box', 'exec', '--', 'true'], { reject: false });
    cached =
      r.exitCode === 0
        ? { usable: true, reason: '' }
        : { usable: false, reason: `no usable box backend (lbot box exec -- true exited ${r.exitCode}: ${r.stderr.trim().split('\n')[0] ?? ''})` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return cached;
}
