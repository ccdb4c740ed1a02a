// How next-step texts spell the lbot command: `lbot` when one is on PATH, else `npx lbot` (after `npm ci`
// lbot lives in node_modules/.bin, which is not on PATH).
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** `lbot` when an executable named lbot is on PATH, `npx lbot` otherwise. */
export function lbotInvocation(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter((d) => d !== '');
  const names = platform === 'win32' ? ['lbot.cmd', 'lbot.exe', 'lbot'] : ['lbot'];
  for (const dir of dirs) {
    for (const name of names) {
      try {
        accessSync(path.join(dir, name), constants.X_OK);
        return 'lbot';
      } catch {
        // not here
      }
    }
  }
  return 'npx lbot';
}
