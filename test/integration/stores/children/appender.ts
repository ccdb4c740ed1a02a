// Child process for the concurrency test: appends events and transcript items for one conversation.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { openSqliteStores } from '../../../../src/core/stores/sqlite/open.js';

const [dataDir, conversation, countText] = process.argv.slice(2);
if (!dataDir || !conversation || !countText) throw new Error('usage: appender.ts <data-dir> <conversation> <count>');
const stores = openSqliteStores(dataDir);
const count = Number(countText);
// Wait for the parent's go file so both writers run their loops at the same time.
process.stdout.write('ready\n');
const pause = new Int32Array(new SharedArrayBuffer(4));
while (!existsSync(path.join(dataDir, 'go'))) Atomics.wait(pause, 0, 0, 5);
stores.runs.create({ run_id: `run-${conversation}`, runner_id: 'r', binding_id: 'b', event_id: 'e', conversation_id: conversation, started_at: 0 });
for (let i = 0; i < count; i++) {
  stores.events.append({
    event_id: `${conversation}-e${i}`,
    event_type: 'message.received',
    event_time: null,
    source: 'test',
    bot_id: null,
    workspace_id: null,
    conversation_id: conversation,
    thread_id: null,
    actor_type: null,
    actor_id: null,
    actor_name: null,
    subject_type: null,
    subject_id: null,
    input_text: `text ${i}`,
    input_json: null,
    raw_ref: null,
    run_id: `run-${conversation}`,
    runner_id: 'r',
    metadata: {},
  });
  stores.transcript.append({
    event_id: `${conversation}-e${i}`,
    conversation_id: conversation,
    thread_id: null,
    role: i % 2 ? 'assistant' : 'user',
    item_type: 'message',
    content: `${conversation} says number ${i} token${conversation}x${i}`,
    content_json: null,
    artifact_refs: [],
    run_id: `run-${conversation}`,
    runner_id: 'r',
    metadata: {},
  });
  stores.runs.addApiCall(`run-${conversation}`, {
    at: i,
    action: 'history.page',
    resource: null,
    decision: 'allowed',
    code: null,
    caller_plugin: 'p',
    as_run_id: `run-${conversation}`,
  });
  stores.state.set('runner', `runner:${conversation}`, `k${i}`, String(i), {
    runner_id: 'r',
    binding_identity: 'b',
    bot_id: null,
    workspace_id: null,
    conversation_id: conversation,
    thread_id: null,
    actor_type: null,
    actor_id: null,
    subject_type: null,
    subject_id: null,
  });
}
stores.runs.finish(`run-${conversation}`, 'completed', null, 1, null);
stores.close();
process.stdout.write('done\n');
