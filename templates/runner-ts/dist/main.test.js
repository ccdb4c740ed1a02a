// Unit tests of the runner, run in process with the SDK's test helper (no host, no plugin process).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInProcess } from 'lbot/sdk';
import plugin from './main.js';
const contentOf = (result) => {
    const msg = result?.data?.message;
    return typeof msg === 'object' && msg !== null ? Reflect.get(msg, 'content') : undefined;
};
test('answers a message, then completes the run', async () => {
    const results = await runInProcess(plugin, 'default', { input: { text: 'ping', contents: [{ type: 'text', text: 'ping' }] } });
    assert.deepEqual(results.map((r) => r.type), ['message.completed', 'run.completed']);
    assert.equal(contentOf(results[0]), 'You said: ping');
});
test('welcomes a new group member', async () => {
    const results = await runInProcess(plugin, 'default', {
        event: { event_type: 'group.member_joined' },
        actor: { actor_type: 'user', actor_id: 'u2', actor_name: 'Bob' },
        input: { text: null, contents: [] },
    });
    assert.equal(contentOf(results[0]), 'Welcome, Bob!');
});
test('puts the configured prefix in front of the reply', async () => {
    const results = await runInProcess(plugin, 'default', { config: { prefix: '[bot] ' } });
    assert.equal(contentOf(results[0]), '[bot] You said: ping');
});
