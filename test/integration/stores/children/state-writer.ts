// Child process for the kill -9 test: writes state rows forever, printing each key once set() returned.
import { openSqliteStores } from '../../../../src/core/stores/sqlite/open.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: state-writer.ts <data-dir>');
const stores = openSqliteStores(dataDir);
const columns = {
  runner_id: 'plugin:acme/echo/default',
  binding_identity: 'b1',
  bot_id: null,
  workspace_id: null,
  conversation_id: 'c1',
  thread_id: null,
  actor_type: null,
  actor_id: null,
  subject_type: null,
  subject_id: null,
};
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const key = `k${String(i).padStart(7, '0')}`;
  stores.state.set('conversation', 'conversation:durability', key, JSON.stringify({ i, pad: 'x'.repeat(200) }), columns);
  stores.transcript.append({
    event_id: `e${i}`,
    conversation_id: 'c1',
    thread_id: null,
    role: 'user',
    item_type: 'message',
    content: `durable item ${key}`,
    content_json: null,
    artifact_refs: [],
    run_id: null,
    runner_id: null,
    metadata: {},
  });
  process.stdout.write(`${key}\n`);
}
