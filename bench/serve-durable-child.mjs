// Helper of bench/serve.mjs: the least a durable host that runs its runners out of process does per run, as a
// yardstick between bare fastify and `lbot serve`. POST /v1/runs records the event and a run row, sends the
// event to a child process over a JSON-line pipe and waits for its answer, records the two transcript items and
// the run's end, and answers once its group of writes is committed (SQLite in WAL mode, synchronous=NORMAL, a
// 5 ms commit window: serve's own settings). No validation, authorization, audit, logging or search index.
// Prints its URL as one JSON line on stdout.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';

const COMMIT_WINDOW_MS = 5;
const dir = mkdtempSync(path.join(os.tmpdir(), 'lbot-bench-durable-'));
const db = new Database(path.join(dir, 'floor.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`
  CREATE TABLE events (id INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, conversation_id TEXT, body TEXT NOT NULL);
  CREATE TABLE runs (run_id TEXT PRIMARY KEY, event_id TEXT NOT NULL, status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT);
  CREATE TABLE transcript (id INTEGER PRIMARY KEY, conversation_id TEXT, role TEXT NOT NULL, content TEXT NOT NULL);
  CREATE INDEX transcript_conversation ON transcript (conversation_id, id);
`);
const insertEvent = db.prepare('INSERT INTO events (event_id, conversation_id, body) VALUES (?, ?, ?)');
const insertRun = db.prepare('INSERT INTO runs (run_id, event_id, status, started_at) VALUES (?, ?, ?, ?)');
const endRun = db.prepare('UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?');
const insertItem = db.prepare('INSERT INTO transcript (conversation_id, role, content) VALUES (?, ?, ?)');

// Group commit: writes join the open transaction; an answer waits for the commit that holds its writes.
let open = false;
let waiting = [];
function write(fn) {
  if (!open) {
    db.exec('BEGIN');
    open = true;
    setTimeout(commit, COMMIT_WINDOW_MS);
  }
  fn();
}
function commit() {
  db.exec('COMMIT');
  open = false;
  const done = waiting;
  waiting = [];
  for (const resolve of done) resolve();
}
const committed = () => new Promise((resolve) => (open ? waiting.push(resolve) : resolve()));

// The runner: a child process answering each JSON line with a reply line of the same id.
const runner = spawn(
  process.execPath,
  [
    '-e',
    `let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let end;
  while ((end = buf.indexOf('\\n')) >= 0) {
    const msg = JSON.parse(buf.slice(0, end));
    buf = buf.slice(end + 1);
    process.stdout.write(JSON.stringify({ id: msg.id, result: { reply: msg.params.text } }) + '\\n');
  }
});`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const pending = new Map();
let buf = '';
runner.stdout.setEncoding('utf8');
runner.stdout.on('data', (chunk) => {
  buf += chunk;
  let end;
  while ((end = buf.indexOf('\n')) >= 0) {
    const msg = JSON.parse(buf.slice(0, end));
    buf = buf.slice(end + 1);
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  }
});
const ask = (id, text) =>
  new Promise((resolve) => {
    pending.set(id, resolve);
    runner.stdin.write(`${JSON.stringify({ id, method: 'run', params: { text } })}\n`);
  });

const app = Fastify({ logger: false });
app.post('/v1/runs', async (req) => {
  const event = req.body.event;
  const text = event.input?.text ?? '';
  const run_id = randomUUID();
  write(() => {
    insertEvent.run(event.event_id, event.conversation_id ?? null, JSON.stringify(event));
    insertRun.run(run_id, event.event_id, 'running', new Date().toISOString());
  });
  const { reply } = await ask(run_id, text);
  write(() => {
    insertItem.run(event.conversation_id ?? null, 'user', text);
    insertItem.run(event.conversation_id ?? null, 'assistant', reply);
    endRun.run('completed', new Date().toISOString(), run_id);
  });
  await committed();
  return JSON.stringify({ run_id, status: 'completed', error: null, reply });
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${app.server.address().port}` })}\n`);
process.on('SIGTERM', () => {
  runner.kill();
  void app.close().then(() => {
    if (open) commit();
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
