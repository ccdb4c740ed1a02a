// Bundles lbot's process entry points into dist/bundle/ (same paths as under src/): the CLI, the SDK with
// its plugin bootstraps, and the box helpers. lbot's own modules and the dependencies every command line
// loads (zod, the two YAML parsers, commander, and the small croner, leven and lowdb: an import of a package
// of its own costs 2–4 ms of resolving and loading) become a few files, so start-up stops paying for
// resolving and compiling hundreds of modules. Every other dependency stays a plain import from node_modules: native addons, and
// the heavy ones only some commands need (fastify, ink, the model and MCP SDKs, pg …). The CLI and the plugin
// side are each one CommonJS file run with a V8 code cache (below); the box helpers are ES modules whose shared
// code is one chunk.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

// Two groups of ES entries, bundled apart: a process loads one of them, never both. The CLI's loader (its code is
// one CommonJS file, cli.cjs, below), the box's helpers and the dev dashboard; and the plugin side, whose code is
// one CommonJS file (sdk/runtime.cjs, below) that its small ES entries load through sdk/runtime-loader, kept an
// import of its own so the process has one loader and one runtime.
const GROUPS = [
  { entries: ['cli-loader', 'runtime/box/supervisor', 'runtime/box/quota-watcher', 'ui/dev-app'], splitting: true },
  { entries: ['sdk/plugin-main', 'sdk/runtime-loader', 'sdk/resolve-lbot', 'runtime/dev/lazy-bootstrap'], splitting: false },
];
const loaderStaysImport = {
  name: 'runtime-loader-stays-import',
  setup(b) {
    b.onResolve({ filter: /runtime-loader\.js$/ }, ({ path: p, kind }) => (kind === 'entry-point' ? undefined : { path: p, external: true }));
  },
};
const BUNDLED = new Set(['zod', 'yaml', 'commander', 'js-yaml', 'croner', 'leven', 'lowdb']);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const external = Object.keys(pkg.dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

// zod's namespace re-exports all of its ~40 locales (366 kB, half of the zod chunk), which every lbot process
// would parse at start. lbot speaks English, the locale zod installs by default: `z.locales` holds just `en`.
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer, resolveDir }) => {
      if (!importer.includes(`${path.sep}zod${path.sep}`)) return undefined;
      const locales = path.join(resolveDir, '../locales');
      return { path: path.join(locales, 'en-only'), namespace: 'zod-locales', pluginData: locales };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, ({ pluginData }) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: pluginData,
    }));
  },
};

// zod compiles a parser for each object schema with `new Function` on its first parse. That pays for schemas
// parsed many times (a runner's proxy calls, serve's requests) and is pure cost for the hundreds parsed once or
// twice while a process starts. The compile now waits until a schema's own parse count passes HOT_PARSES;
// until then the schema parses on zod's interpreted path, which gives the same result. The edit is checked
// against zod's source text, so a zod release that moves it fails the build instead of losing the change.
const HOT_PARSES = 8;
const FASTPASS_EDITS = [
  ['    let fastpass;\n', '    let fastpass;\n    let parses = 0;\n'],
  [
    'if (jit && fastEnabled && ctx?.async === false && ctx.jitless !== true) {',
    `if (jit && fastEnabled && ctx?.async === false && ctx.jitless !== true && (fastpass !== undefined || ++parses > ${HOT_PARSES})) {`,
  ],
];
const zodLazyFastpass = {
  name: 'zod-lazy-fastpass',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]core[\\/]schemas\.js$/ }, ({ path: file }) => {
      let contents = readFileSync(file, 'utf8');
      for (const [from, to] of FASTPASS_EDITS) {
        if (contents.split(from).length !== 2) throw new Error(`zod-lazy-fastpass: ${file} no longer has exactly one ${JSON.stringify(from)}`);
        contents = contents.replace(from, to);
      }
      return { contents, loader: 'js' };
    });
  },
};

// Chunk names carry a content hash: a rebuild starts from an empty directory so no stale chunk is left.
rmSync('dist/bundle', { recursive: true, force: true });
for (const { entries, splitting } of GROUPS) {
  await build({
    entryPoints: entries.map((entry) => (existsSync(`src/${entry}.ts`) ? `src/${entry}.ts` : `src/${entry}.tsx`)),
    outbase: 'src',
    outdir: 'dist/bundle',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting,
    format: 'esm',
    platform: 'node',
    target: 'node20.12',
    external,
    // commander is CommonJS: its require() of node built-ins needs a real require in an ES module.
    banner: { js: "import { createRequire as __lbotRequire } from 'node:module'; const require = __lbotRequire(import.meta.url);" },
    plugins: [loaderStaysImport, englishOnly, zodLazyFastpass],
    legalComments: 'none',
    logLevel: 'warning',
  });
}

// The CLI, one CommonJS file: cli-loader runs it through `vm.Script` with the code cache made below (an ES module
// cannot have one on Node.js 20), so a command neither compiles it again nor resolves a graph of chunks. Its
// dynamic imports of lbot's own modules become lazy functions inside the file; the dev dashboard stays an ES
// module of its own (ui/dev-app, above), since ink, which it renders with, cannot be require()d (top-level await).
const devDashboardStaysImport = {
  name: 'dev-dashboard-stays-import',
  setup(b) {
    b.onResolve({ filter: /[\\/]ui[\\/]dev-app\.js$/ }, ({ kind }) => (kind === 'dynamic-import' ? { path: './ui/dev-app.js', external: true } : undefined));
  },
};
// gpt-tokenizer's CommonJS build of its model tables fails when required (`turbo is not defined`): the CLI takes
// those two small modules from its ES build into the file instead (the encodings stay imports of their own).
const tokenizerTablesFromEsm = {
  name: 'tokenizer-tables-from-esm',
  setup(b) {
    b.onResolve({ filter: /^gpt-tokenizer\/(models|mapping)$/ }, ({ path: spec }) => ({
      path: path.resolve('node_modules', 'gpt-tokenizer', 'esm', `${spec.slice('gpt-tokenizer/'.length)}.js`),
    }));
  },
};
/** A CommonJS file a loader runs through `vm.Script` (the CLI, the plugin side); import.meta.url is its own URL. */
const commonJsFile = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.12',
  external,
  define: { 'import.meta.url': '__lbotImportMetaUrl' },
  banner: { js: 'var __lbotImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  legalComments: 'none',
  logLevel: 'warning',
};
await build({
  ...commonJsFile,
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/bundle/cli.cjs',
  plugins: [devDashboardStaysImport, tokenizerTablesFromEsm, englishOnly, zodLazyFastpass],
  // A process keeps the whole file's source: 2.8 MB as written cost serve 10 MB of resident memory over the
  // chunks it used to load, 2.0 MB without the spaces 7 MB. Names stay as written, for readable stacks.
  minifyWhitespace: true,
  minifySyntax: true,
});
// Code that `vm.Script` compiled can run `import()` only through an experimental option that warns when used; the
// file's dynamic imports (of packages, and of the dev dashboard) go instead through `__lbotImport`, which
// cli-loader hands the file: an `import()` of its own, from the same directory.
{
  const file = 'dist/bundle/cli.cjs';
  const isExternal = (spec) => spec === './ui/dev-app.js' || external.some((e) => spec === e || (e.endsWith('/*') && spec.startsWith(e.slice(0, -1))));
  let count = 0;
  const code = readFileSync(file, 'utf8').replace(/\bimport\("([^"]+)"\)/g, (whole, spec) => {
    if (!isExternal(spec)) return whole;
    count++;
    return `__lbotImport(${JSON.stringify(spec)})`;
  });
  if (!code.includes('__lbotImport("./ui/dev-app.js")')) throw new Error(`${file}: the dev dashboard's import() was not found`);
  if (count === 0) throw new Error(`${file}: no dynamic import went through cli-loader`);
  writeFileSync(file, code);
}

// The plugin side's code, one CommonJS file: sdk/runtime-loader runs it through `vm.Script` with the code cache
// made below, which an ES module cannot have on Node.js 20. import.meta.url is the file's own URL.
await build({
  ...commonJsFile,
  entryPoints: ['src/sdk/runtime.ts'],
  outfile: 'dist/bundle/sdk/runtime.cjs',
  plugins: [englishOnly, zodLazyFastpass],
});

// lbot/sdk: the SDK's exports, taken from that one runtime, so a runner and its bootstrap share every class.
const runtime = createRequire(import.meta.url)(path.resolve('dist/bundle/sdk/runtime.cjs'));
const bootstraps = new Set(['servePlugin', 'serveStandby']);
const names = Object.keys(runtime).filter((n) => !bootstraps.has(n));
writeFileSync(
  'dist/bundle/sdk/index.js',
  `// lbot/sdk (made by scripts/bundle.mjs): the exports of the plugin runtime (src/sdk/index.ts, types in dist/sdk).\nimport { runtime } from './runtime-loader.js';\nexport const { ${names.join(', ')} } = runtime;\n`,
);

// The code cache: made by a process that loads the runtime under the plugin's own node flags, since V8 takes a
// cache only from the same node and flags.
const { PLUGIN_NODE_FLAGS } = await import(pathToFileURL(path.resolve('dist/runtime/plugins/spawn.js')).href);
const loader = pathToFileURL(path.resolve('dist/bundle/sdk/runtime-loader.js')).href;
execFileSync(process.execPath, [...PLUGIN_NODE_FLAGS, '--input-type=module', '-e', `(await import(${JSON.stringify(loader)})).writeRuntimeCache();`], {
  stdio: 'inherit',
});

// The CLI's code cache: made by a training run of one `lbot run` of the echo runner (in a temporary data dir,
// plugins unsandboxed so the build needs no bubblewrap), so the cache holds what a command compiles, not only the
// file's top level. A failed run leaves no cache: every command then compiles the file, as before it had one.
const cliLoader = pathToFileURL(path.resolve('dist/bundle/cli-loader.js')).href;
const trainingDir = mkdtempSync(path.join(os.tmpdir(), 'lbot-build-'));
const argv = ['node', 'lbot', '--data-dir', path.join(trainingDir, 'data'), 'run', '--event', 'fixtures/events/msg.json', '--plugin', 'fixtures/runners/echo'];
try {
  execFileSync(process.execPath, ['--input-type=module', '-e', `await (await import(${JSON.stringify(cliLoader)})).writeCliCache(${JSON.stringify(argv)});`], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, LBOT__PLUGINS__ISOLATION: 'none' },
  });
} catch (err) {
  rmSync('dist/bundle/cli.cache', { force: true });
  process.stderr.write(`bundle: the CLI's training run failed, so it has no code cache: ${err instanceof Error ? err.message : String(err)}\n`);
} finally {
  rmSync(trainingDir, { recursive: true, force: true });
}
