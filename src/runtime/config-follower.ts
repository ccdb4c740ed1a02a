// Follows `<data-dir>/lbot.config.json` while a long-lived host runs (`lbot serve`, `lbot dev`): one
// watcher on the data dir re-reads the file after an edit by any process (`lbot binding add`, `lbot model
// add`, `lbot mcp add`, an editor) and hands the new config to whoever subscribed (MCP manager, logs).
import { watch, type FSWatcher } from 'node:fs';
import type { Config } from '../core/config.js';
import { CONFIG_FILE_NAME, type ConfigFile } from '../core/stores/config-file.js';
import { ensurePrivateDir } from '../core/stores/private-files.js';

export type ConfigListener = (config: Config, previous: Config) => void;

export type ConfigFollower = {
  /** The effective config as last read (the one every new run and request uses). */
  current(): Config;
  /** Calls `listener` after each edit of the file that loads and changes the config; returns the unsubscribe. */
  subscribe(listener: ConfigListener): () => void;
  /** Stops watching. Idempotent. */
  close(): void;
};

export type FollowConfigOptions = {
  dataDir: string;
  configFile: ConfigFile;
  warn(message: string): void;
  /** How long the file must be quiet before it is re-read (editors and lowdb write in several steps). */
  debounceMs?: number;
};

const DEFAULT_DEBOUNCE_MS = 150;

/** Starts following the config file of `dataDir`; a broken edit is reported and the last good config kept. */
export function followConfig(opts: FollowConfigOptions): ConfigFollower {
  const listeners = new Set<ConfigListener>();
  const debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | null = null;
  let watcher: FSWatcher | null = null;
  let closed = false;
  let lastText = JSON.stringify(opts.configFile.config);
  let lastError: string | null = null;

  const apply = () => {
    timer = null;
    if (closed) return;
    const previous = opts.configFile.config;
    let next: Config;
    try {
      next = opts.configFile.reload();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // An editor saving a broken file twice is one problem, not two.
      if (message !== lastError) opts.warn(`the changed config file was not applied (the last good config stays in effect): ${message}`);
      lastError = message;
      return;
    }
    lastError = null;
    const text = JSON.stringify(next);
    if (text === lastText) return;
    lastText = text;
    for (const listener of listeners) {
      try {
        listener(next, previous);
      } catch (err) {
        opts.warn(`applying the changed config failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };

  try {
    ensurePrivateDir(opts.dataDir);
    watcher = watch(opts.dataDir, (_event, name) => {
      if (name !== null && name !== CONFIG_FILE_NAME) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(apply, debounceMs);
    });
    watcher.on('error', (err) => opts.warn(`watching ${opts.configFile.file} failed: ${err.message}; config edits need a restart`));
  } catch (err) {
    opts.warn(`cannot watch ${opts.configFile.file} for changes: ${err instanceof Error ? err.message : String(err)}; config edits need a restart`);
  }

  return {
    current: () => opts.configFile.config,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (closed) return;
      closed = true;
      watcher?.close();
      if (timer) clearTimeout(timer);
      listeners.clear();
    },
  };
}
