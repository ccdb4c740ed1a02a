// Baseline child for the proxy benchmark: sends N sequential JSON-RPC requests on stdout and waits for each
// answer on stdin, exactly like a runner calling the host, then prints the per-call latencies on stderr.
import { createInterface } from 'node:readline';

const n = Number(process.argv[2] ?? 2000);
const lines = createInterface({ input: process.stdin });
const waiting = new Map();
lines.on('line', (line) => {
  const msg = JSON.parse(line);
  waiting.get(msg.id)?.(msg);
  waiting.delete(msg.id);
});
const call = (id) =>
  new Promise((resolve) => {
    waiting.set(id, resolve);
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'state.get', params: { run_id: 'r', scope: 'conversation', key: 'k' } })}\n`);
  });
await call(0);
const samples = [];
for (let i = 1; i <= n; i++) {
  const t = performance.now();
  await call(i);
  samples.push(performance.now() - t);
}
// Exit once the samples are flushed: a pipe write still pending at process.exit is lost.
process.stderr.write(JSON.stringify(samples), () => process.exit(0));
