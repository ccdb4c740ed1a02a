#!/usr/bin/env node
// Launcher: the CLI is bundled into dist/bundle/ (by `npm run build`, which `npm ci` runs via `prepare`).
import('../dist/bundle/cli-loader.js').then(({ cli }) => cli.main(process.argv)).catch((err) => {
  process.stderr.write(`lbot: error[internal]: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
