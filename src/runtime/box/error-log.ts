// The persisted recent-error ring: `<data-dir>/box/errors.json`, updated under a lock.
import { z } from 'zod';
import { ErrorRecordSchema, type ErrorRecord } from '../../core/box/model.js';
import { errorTypeFor } from '../../core/box/errors.js';
import { pushErrorRecord } from '../../core/box/error-ring.js';
import { toLbotError } from '../../core/errors.js';
import { readJson, writeJsonAtomic } from './files.js';
import { withLock } from './lock.js';

const RingSchema = z.array(ErrorRecordSchema);

export class ErrorLog {
  constructor(
    readonly file: string,
    readonly lockFile: string,
  ) {}

  list(): ErrorRecord[] {
    return readJson(this.file, RingSchema) ?? [];
  }

  /** Records a failure of the exec path; never throws (the original error matters more). */
  async record(err: unknown, queryId: string | null): Promise<void> {
    const e = toLbotError(err);
    const rec: ErrorRecord = { timestamp: new Date().toISOString(), type: errorTypeFor(e.code), code: e.code, message: e.message, query_id: queryId };
    try {
      await withLock(this.lockFile, () => writeJsonAtomic(this.file, pushErrorRecord(this.list(), rec)), { timeoutMs: 5000 });
    } catch {
      // a lost error record must not mask the error itself
    }
  }
}
