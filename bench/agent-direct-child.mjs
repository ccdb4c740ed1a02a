// Helper of bench/agent.mjs and bench/models.mjs: sends the given chat request bodies straight to the fake model
// server, one by one, with the SDK the host's provider uses, from a fresh process of its own (as the host is),
// and prints the round trip of each as JSON on stdout. The first `warmup` bodies are sent once untimed first.
// `stream` (the default) reads a streamed reply to its end; `plain` makes a non-streamed call.
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const [baseURL, apiKey, bodiesFile, warmup = '20', mode = 'stream'] = process.argv.slice(2);
if (mode !== 'stream' && mode !== 'plain') throw new Error(`mode ${mode}: use stream or plain`);
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8'));
const client = new OpenAI({ apiKey, baseURL, maxRetries: 0 });
const once = async (body) => {
  const t = performance.now();
  if (mode === 'plain') await client.chat.completions.create({ ...body, stream: false });
  else for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) void chunk;
  return performance.now() - t;
};
for (const body of bodies.slice(0, Number(warmup))) await once(body);
const times = [];
for (const body of bodies) times.push(await once(body));
process.stdout.write(JSON.stringify(times));
