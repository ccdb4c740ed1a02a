// Module hook of plugin processes: `lbot` and `lbot/sdk` fall back to the host's own SDK when the plugin
// directory has no copy of its own, so a runner works wherever it is installed.
import type { ResolveHook } from 'node:module';

const SDK_URL = new URL('./index.js', import.meta.url).href;

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (specifier === 'lbot' || specifier === 'lbot/sdk') return { url: SDK_URL, format: 'module', shortCircuit: true };
    throw err;
  }
};
