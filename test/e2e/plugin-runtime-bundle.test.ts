// The built plugin side (scripts/bundle.mjs): one CommonJS runtime with a V8 code cache, loaded once by the
// small ES entries. A plugin process must take the cache under its own node flags, and lbot/sdk must export
// what src/sdk/index.ts does, from the same runtime instance as the bootstrap that serves the runner.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as sdk from '../../src/sdk/index.js';
import { PLUGIN_NODE_FLAGS } from '../../src/runtime/plugins/spawn.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const url = (...parts: string[]) => pathToFileURL(path.join(ROOT, 'dist', 'bundle', ...parts)).href;

const ProbeSchema = z.object({ cache: z.string(), names: z.array(z.string()), shared: z.boolean() });

/** Runs a module script in a fresh node with the given flags and returns what it prints as JSON. */
async function probe(flags: readonly string[]): Promise<z.infer<typeof ProbeSchema>> {
  const script = `
    const loader = await import(${JSON.stringify(url('sdk', 'runtime-loader.js'))});
    const facade = await import(${JSON.stringify(url('sdk', 'index.js'))});
    process.stdout.write(JSON.stringify({
      cache: loader.cacheUse,
      names: Object.keys(facade).sort(),
      shared: facade.definePlugin === loader.runtime.definePlugin && facade.ApiCallError === loader.runtime.ApiCallError,
    }));`;
  const r = await execa(process.execPath, [...flags, '--input-type=module', '-e', script]);
  return ProbeSchema.parse(JSON.parse(r.stdout));
}

describe('the bundled plugin runtime', () => {
  it('loads with its code cache under the plugin node flags, and lbot/sdk exports the runtime itself', async () => {
    const r = await probe(PLUGIN_NODE_FLAGS);
    expect(r.cache).toBe('accepted');
    expect(r.shared).toBe(true);
    expect(r.names).toEqual(Object.keys(sdk).sort());
  });

  it('still loads when V8 refuses the cache (other node flags), compiling the code instead', async () => {
    const r = await probe([]);
    expect(r.cache).toBe('rejected');
    expect(r.shared).toBe(true);
  });
});
