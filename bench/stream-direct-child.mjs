// Helper of bench/stream.mjs: the fake model's own time to first chunk. Sends `count` streamed chat requests (the
// body in `bodyFile`) straight to the fake model server with the SDK the host's provider uses, `concurrency` at a
// time, after `warmup` untimed ones, and prints the time to each request's first text chunk (ms) as a JSON array.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { inFlight } from './stats.mjs';

const [baseURL, apiKey, bodyFile, count, concurrency, warmup] = process.argv.slice(2);
const body = JSON.parse(readFileSync(bodyFile, 'utf8'));
const client = new OpenAI({ apiKey, baseURL, maxRetries: 0 });

async function once() {
  const t = performance.now();
  let first = null;
  for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
    if (first === null && chunk.choices[0]?.delta?.content) first = performance.now() - t;
  }
  if (first === null) throw new Error('the stream carried no text');
  return first;
}

async function pool(n) {
  const out = [];
  await inFlight(Number(concurrency), n, async () => out.push(await once()));
  return out;
}

await pool(Number(warmup));
const timed = await pool(Number(count));
process.stdout.write(JSON.stringify(timed));
