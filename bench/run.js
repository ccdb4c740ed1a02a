// `npm run bench`: runs every benchmark script in this folder in turn (each compares lbot against a baseline
// it measures in the same run) and prints their reports. `npm run bench -- host box` runs a subset.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const helpers = new Set(['stats.mjs', 'bare-echo-child.mjs', 'agent-direct-child.mjs']);
const wanted = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && !helpers.has(f))
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.mjs$/, '')))
  .sort();
let failed = 0;
for (const script of scripts) {
  process.stdout.write(`\n== ${script}\n`);
  const r = spawnSync(process.execPath, [path.join(here, script)], { stdio: 'inherit', timeout: 10 * 60_000 });
  if (r.status !== 0) {
    failed++;
    process.stdout.write(`${script} failed (exit ${r.status ?? r.signal})\n`);
  }
}
process.exitCode = failed ? 1 : 0;
