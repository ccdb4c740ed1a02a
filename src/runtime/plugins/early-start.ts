// `lbot run` knows its plugin before its host exists: the process starts while the host loads and opens its
// stores, and is handed over on the host's first start of the same plugin, env and network grant. The
// process makes no proxy call before it is sent a run; one it makes anyway waits for the host's handler.
import type { PluginConnection, PluginLauncher, PluginSpec, ProxyCallHandler } from '../../core/host/ports.js';

export type EarlyStart = PluginLauncher & {
  /** Stops the early process when no start took it. */
  close(): Promise<void>;
};

const keyOf = (spec: PluginSpec) => JSON.stringify([spec.identity, spec.dir, spec.execution, spec.env, spec.network === true]);

export function startEarly(base: PluginLauncher, spec: PluginSpec, signal?: AbortSignal): EarlyStart {
  let handOver: (handler: ProxyCallHandler) => void = () => undefined;
  const handler = new Promise<ProxyCallHandler>((resolve) => (handOver = resolve));
  const key = keyOf(spec);
  let early: Promise<PluginConnection> | null = base.start(spec, async (call) => (await handler)(call), signal ? { signal } : {});
  early.catch(() => undefined); // the start's failure is the taker's to report
  return {
    start(wanted, onApiCall, opts) {
      if (early === null || keyOf(wanted) !== key) return base.start(wanted, onApiCall, opts);
      const taken = early;
      early = null;
      handOver(onApiCall);
      return taken;
    },
    async close() {
      const left = early;
      early = null;
      const conn = await left?.catch(() => null);
      await conn?.close();
    },
  };
}
