// `node --import THIS_FILE`: appends the URL of every module the process loads to the file named by
// LBOT_IMPORT_LOG, one a line (what a command's start-up pulls in): those the ES module loader loads, and
// those require() loads (the CLI's bundle is CommonJS and require()s its packages).
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';

const LOG = process.env.LBOT_IMPORT_LOG ?? '/dev/null';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(LOG)}, url + '\\n');
  return next(url, context);
}`)}`,
);

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exports = load.call(this, request, parent, isMain);
  try {
    const file = Module._resolveFilename(request, parent, isMain);
    if (isAbsolute(file)) appendFileSync(LOG, `${pathToFileURL(file).href}\n`);
  } catch {
    // a built-in module, or one resolved some other way: not a file
  }
  return exports;
};
