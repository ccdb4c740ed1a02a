// `node --import THIS_FILE`: appends the URL of every module the process loads through the ESM loader to the
// file named by LBOT_IMPORT_LOG, one a line (what a command's start-up pulls in).
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(process.env.LBOT_IMPORT_LOG ?? '/dev/null')}, url + '\\n');
  return next(url, context);
}`)}`,
);
