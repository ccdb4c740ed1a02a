// Helper of bench/serve.mjs: the least a durable host that runs its runners out of process does per run, as a
// yardstick between bare fastify and `lbot serve`. POST /v1/runs records the event and a run row, sends the
// event to a runner process (this file with --runner) over a JSON-line pipe and waits for its answer, records
// the two transcript items and the run's end, and answers once its group of writes is committed (SQLite in WAL
// mode, synchronous=NORMAL, a 5 ms commit window: serve's own settings). No validation, authorization, audit,
// logging or search index. Prints its URL as one JSON line on stdout.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonLines } from './json-lines.mjs';

const COMMIT_WINDOW_MS = 5;

if (process.argv[2] === '--runner') {
  readJsonLines(process.stdin, (msg) => process.stdout.write(`${JSON.stringify({ id: msg.id, result: { reply: msg.params.text } })}\n`));
} else {
  await serve();
}

async function serve() {
  const { default: Database } = await import('better-sqlite3');
  const { default: Fastify } = await import('fastify');
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
  const commit = () => {
    db.exec('COMMIT');
    open = false;
    const done = waiting;
    waiting = [];
    for (const resolve of done) resolve();
  };
  const write = (fn) => {
    if (!open) {
      db.exec('BEGIN');
      open = true;
      setTimeout(commit, COMMIT_WINDOW_MS);
    }
    fn();
  };
  const committed = () => new Promise((resolve) => (open ? waiting.push(resolve) : resolve()));

  const runner = spawn(process.execPath, [fileURLToPath(import.meta.url), '--runner'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = new Map();
  readJsonLines(runner.stdout, (msg) => {
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
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
    const conversation = event.conversation_id ?? null;
    const run_id = randomUUID();
    write(() => {
      insertEvent.run(event.event_id, conversation, JSON.stringify(event));
      insertRun.run(run_id, event.event_id, 'running', new Date().toISOString());
    });
    const { reply } = await ask(run_id, text);
    write(() => {
      insertItem.run(conversation, 'user', text);
      insertItem.run(conversation, 'assistant', reply);
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
}
