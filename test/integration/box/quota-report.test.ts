// A quota breach is reported once: when a command's after-check reports it, a stop the session's watcher
// recorded in the same moment is not reported again by the next command on that id.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { LbotError } from '../../../src/core/errors.js';
import { BwrapBackend } from '../../../src/runtime/box/bwrap.js';
import type { ExecRequest, SessionRecord } from '../../../src/runtime/box/backend.js';
import type { RunOutcome } from '../../../src/runtime/box/run-process.js';
import { writeJsonAtomic } from '../../../src/runtime/box/files.js';
import { quotaStopFile, type QuotaStop } from '../../../src/runtime/box/quota-watch.js';
import { createBoxService, type BoxService } from '../../../src/runtime/box/service.js';
import { bwrapSkipReason } from './helpers.js';
import { withReason } from '../../helpers/skip.js';

const LIMIT = 1024 * 1024;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
});

/**
 * A bwrap backend whose measurement after its first command reads the workspace as over quota and, as the
 * session's watcher would in that moment, leaves a stop record for the session.
 */
class RacingWatcherBackend extends BwrapBackend {
  armed = false;
  #fired = false;
  box: BoxService | null = null;

  override async exec(record: SessionRecord, req: ExecRequest): Promise<RunOutcome> {
    const outcome = await super.exec(record, req);
    this.armed = !this.#fired;
    this.#fired = true;
    return outcome;
  }

  override async usage(record: SessionRecord): Promise<number> {
    if (!this.armed || !this.box) return super.usage(record);
    this.armed = false;
    const stop: QuotaStop = {
      session_id: record.info.session_id,
      backend_session_id: record.info.backend_session_id,
      stopped_at: new Date().toISOString(),
      code: 'box.quota_exceeded',
      message: 'the workspace quota was exceeded; the session was stopped',
      hint: null,
      details: { phase: 'background', used_bytes: LIMIT * 2, limit_bytes: LIMIT },
    };
    writeJsonAtomic(quotaStopFile(this.box.layout, record.info.session_id), stop);
    return LIMIT * 2;
  }
}

describe.skipIf(bwrapSkipReason !== null)(withReason('box quota report', bwrapSkipReason), () => {
  it('reports a breach the after-check found once, though the watcher recorded it too', async () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'lbot-quota-report-')));
    const backend = new RacingWatcherBackend({ bin: 'bwrap', baseDir: path.join(root, 'bwrap'), limits: 'auto', nodeBinary: process.execPath });
    const config = ConfigSchema.parse({ box: { backend: 'bwrap', workspace_quota_mb: 1 } }).box;
    const box = createBoxService({ dataDir: path.join(root, 'data'), config, backends: { bwrap: backend } });
    backend.box = box;
    cleanups.push(async () => {
      for (const s of await box.sessions()) await box.removeSession(s.session_id);
      rmSync(root, { recursive: true, force: true });
    });

    const first = await box.exec({ session_id: 'r1', cmd: 'true' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(first).toBeInstanceOf(LbotError);
    expect(first).toMatchObject({ code: 'box.quota_exceeded', details: { phase: 'after' } });

    // The session was dropped with the breach; the next command starts a fresh one and runs.
    const next = await box.exec({ session_id: 'r1', cmd: 'echo fresh' });
    expect(next.result).toMatchObject({ exit_code: 0 });
    expect(JSON.stringify(next.result)).toContain('fresh');
  });
});
