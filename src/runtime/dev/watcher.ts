// The watcher controller of `lbot dev`: chokidar on the plugins (code and YAML), bursts of changes
// debounced into one batch. `--no-watch` gets the no-op watcher.
import path from 'node:path';
import { watch } from 'chokidar';

export type Watcher = { close(): Promise<void> };

export type WatcherOptions = {
  root: string;
  /** True for paths never worth a reload (dependencies, VCS, data dirs, build output not executed). */
  ignore(absPath: string): boolean;
  debounceMs: number;
  onBatch(paths: string[]): void;
  onError(err: unknown): void;
};

/** Directory names that never hold plugin code or manifests (dependencies, VCS, Python virtualenvs and caches). */
export const ALWAYS_IGNORED = new Set([
  'node_modules',
  '.git',
  '.lbot',
  '.hg',
  '.svn',
  'coverage',
  '.venv',
  'venv',
  '__pycache__',
  '.mypy_cache',
  '.pytest_cache',
]);
/** Build output directories: ignored unless the plugin executes from inside one (dist/main.js). */
export const BUILD_DIRS = new Set(['dist', 'build', 'out', 'lib']);
/** Editor droppings that are not the file itself. */
const EDITOR_TEMP = /(?:~|\.sw[px]|\.tmp|\.tsbuildinfo)$|(?:^|[\\/])\.#[^\\/]*$|4913$/;

/**
 * The ignore rule of one watched root: dependencies, VCS and data dirs always; build output unless the
 * plugin executes from it (`execution.node.path: dist/main.js` keeps `dist/` watched, its `src/` too).
 */
export function ignoreRule(opts: {
  root: string;
  extraIgnored: readonly string[];
  /** Directories inside an `extraIgnored` one that stay watched (`<data-dir>/plugins` inside the data dir). */
  extraKept?: readonly string[];
  pluginDirOf(absPath: string): string | null;
  executedDir(pluginDir: string): string | null;
}): (absPath: string) => boolean {
  const inside = (p: string, d: string) => p === d || p.startsWith(`${d}${path.sep}`);
  return (absPath) => {
    if (
      opts.extraIgnored.some((d) => inside(absPath, d)) &&
      !(opts.extraKept ?? []).some((k) => inside(absPath, k) || (inside(k, absPath) && inside(opts.root, absPath)))
    )
      return true;
    if (absPath === opts.root) return false;
    if (EDITOR_TEMP.test(absPath)) return true;
    if (
      path
        .relative(opts.root, absPath)
        .split(path.sep)
        .some((p) => ALWAYS_IGNORED.has(p))
    )
      return true;
    const pluginDir = opts.pluginDirOf(absPath);
    if (!pluginDir || absPath === pluginDir) return false;
    const first = path.relative(pluginDir, absPath).split(path.sep)[0] ?? '';
    return BUILD_DIRS.has(first) && opts.executedDir(pluginDir) !== first;
  };
}

/** Starts watching; resolves once the initial scan is done, so edits right after are seen. */
export async function createWatcher(opts: WatcherOptions): Promise<Watcher> {
  const watcher = watch(opts.root, { ignoreInitial: true, ignored: (p: string) => opts.ignore(path.resolve(p)) });
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const flush = () => {
    timer = undefined;
    if (closed || pending.size === 0) return;
    const batch = [...pending];
    pending = new Set();
    opts.onBatch(batch);
  };
  watcher.on('all', (_event, changed) => {
    pending.add(path.resolve(changed));
    clearTimeout(timer);
    timer = setTimeout(flush, opts.debounceMs);
  });
  watcher.on('error', (err) => opts.onError(err));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

/** The watcher of `--no-watch`: nothing to watch, nothing to close. */
export const noopWatcher: Watcher = { close: async () => undefined };
