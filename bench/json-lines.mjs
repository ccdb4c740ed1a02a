// JSON between the benches and the processes they start: newline-delimited messages, a helper's one JSON answer,
// a server's ready line.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** Calls `onMessage` with each JSON line read from `stream` (blank lines are skipped). */
export function readJsonLines(stream, onMessage) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let end;
    while ((end = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, end);
      buf = buf.slice(end + 1);
      if (line.trim()) onMessage(JSON.parse(line));
    }
  });
}

/** Runs `node script ...args` and resolves what it printed on stdout, parsed as one JSON value; its stderr passes through. */
export function helperJson(script, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('close', (status) => (status === 0 ? resolve(JSON.parse(text)) : reject(new Error(`${path.basename(script)} exited ${status}`))));
  });
}

/**
 * Starts `node ...args`, a server that prints one JSON line first (with its `url`); `stderr` is where its log goes
 * ('inherit', 'ignore', or 'pipe', which this drains). Resolves the process, that line (`ready`), its url and a stop().
 */
export async function startServer(args, { env = process.env, stderr = 'inherit' } = {}) {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', stderr] });
  child.stderr?.resume();
  const ready = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (l) => resolve(JSON.parse(l)));
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before it was ready`)));
  });
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  };
  return { child, ready, url: ready.url, stop };
}
