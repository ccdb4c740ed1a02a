// Child process: opens the stores of a data dir and prints the outcome as one JSON line.
import { LbotError } from '../../../../src/core/errors.js';
import { openSqliteStores } from '../../../../src/core/stores/sqlite/open.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: open-stores.ts <data-dir>');
try {
  openSqliteStores(dataDir).close();
  process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
} catch (err) {
  if (!(err instanceof LbotError)) throw err;
  process.stdout.write(`${JSON.stringify({ ok: false, code: err.code, message: err.message })}\n`);
}
