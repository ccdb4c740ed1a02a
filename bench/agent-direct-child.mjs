// Helper of bench/agent.mjs: sends the given chat request bodies straight to the fake model server, one by
// one, streamed, with the SDK the host's provider uses, from its own process (as the host is), and prints the
// round trip of each as JSON on stdout.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const [baseURL, apiKey, bodiesFile, warmup = '20'] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8'));
const client = new OpenAI({ apiKey, baseURL, maxRetries: 0 });
const once = async (body) => {
  const t = performance.now();
  const stream = await client.chat.completions.create({ ...body, stream: true });
  for await (const chunk of stream) void chunk;
  return performance.now() - t;
};
for (const body of bodies.slice(0, Number(warmup))) await once(body);
const times = [];
for (const body of bodies) times.push(await once(body));
process.stdout.write(JSON.stringify(times));
