// `lbot doctor`: what works on this machine — Node, the data dir, the config, the plugin sandbox and runtime,
// python3, and which box backends can run sandboxes. It runs on a config lbot cannot load, to say what is wrong.
import type { Command } from 'commander';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { ConfigSchema, type Config } from '../core/config.js';
import { toLbotError } from '../core/errors.js';
import { EXIT } from './shared/exit-codes.js';
import { tolerateBrokenConfig } from './shared/broken-config.js';
import type { GetContext } from './shared/context.js';
import * as shapes from '../core/shapes/index.js';
import type { RuntimeProbe } from '../runtime/plugins/runtime-cache.js';

/** `fail` makes the exit code 1; `warn` is something that works only in part (no python3: no Python runners). */
type Check = { name: string; status: 'ok' | 'warn' | 'fail'; detail: string };

const MARK: Record<Check['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

function runtimeCheck(probe: RuntimeProbe): Check {
  const name = 'plugin_runtime';
  if (!probe.ok)
    return { name, status: 'fail', detail: `the plugin runtime does not load, so no runner can start: ${probe.error} (rebuild lbot: npm run build)` };
  if (probe.cache === 'accepted') return { name, status: 'ok', detail: "plugin processes start from the build's code cache" };
  return {
    name,
    status: 'warn',
    detail: `${probe.cache === 'rejected' ? 'this node refuses the code cache lbot was built with' : 'lbot was built without its code cache'}: every plugin start compiles the SDK again (about 25 ms); rebuild lbot with this node (npm run build)`,
  };
}

export function registerDoctor(program: Command, getCtx: GetContext): void {
  const doctor = program
    .command('doctor')
    .description(
      'check this machine: Node, data dir, config, plugin sandbox and runtime, python3, box backends (bwrap, docker, podman, host); exit 1 when a check fails',
    )
    .action(async () => {
      const ctx = getCtx();
      const checks: Check[] = [];
      const major = Number(process.versions.node.split('.')[0]);
      checks.push({ name: 'node', status: major >= 20 ? 'ok' : 'fail', detail: `Node ${process.versions.node}${major >= 20 ? '' : ' (lbot needs ≥ 20.12)'}` });
      try {
        mkdirSync(ctx.flags.dataDir, { recursive: true });
        accessSync(ctx.flags.dataDir, constants.W_OK);
        checks.push({ name: 'data_dir', status: 'ok', detail: `${ctx.flags.dataDir} is writable` });
      } catch (err) {
        checks.push({ name: 'data_dir', status: 'fail', detail: `${ctx.flags.dataDir}: ${err instanceof Error ? err.message : String(err)}` });
      }
      let config: Config;
      try {
        const file = ctx.configFile();
        config = file.config;
        checks.push({ name: 'config', status: 'ok', detail: `${file.file} loads` });
      } catch (err) {
        const e = toLbotError(err);
        // The rest is checked on the defaults, so one broken file does not hide what else is wrong.
        config = ConfigSchema.parse({});
        checks.push({ name: 'config', status: 'fail', detail: `${e.message} (fix it with lbot config edit; the checks below use the defaults)` });
      }
      const { pluginSandboxFor } = await import('../runtime/plugins/sandbox.js');
      const { findExecutable } = await import('../runtime/box/host-tools.js');
      try {
        const sandbox = pluginSandboxFor(config, ctx.flags.dataDir, { warn: (m) => ctx.output.warn(m) }).resolve();
        const isolated = sandbox.isolation === 'sandbox' || config.plugins.isolation === 'none';
        checks.push({ name: 'plugin_sandbox', status: isolated ? 'ok' : 'warn', detail: `plugins.isolation ${config.plugins.isolation}: ${sandbox.reason}` });
      } catch (err) {
        checks.push({ name: 'plugin_sandbox', status: 'fail', detail: toLbotError(err).message });
      }
      const { probePluginRuntime } = await import('../runtime/plugins/runtime-cache.js');
      checks.push(runtimeCheck(await probePluginRuntime()));
      const python = findExecutable('python3');
      checks.push({
        name: 'python3',
        status: python ? 'ok' : 'warn',
        detail: python ? `${python} (Python runner plugins and MCP servers can start)` : 'not on PATH: Python runner plugins cannot start',
      });
      const { createBoxService } = await import('../runtime/box/service.js');
      const box = createBoxService({ dataDir: ctx.flags.dataDir, config: config.box });
      const backends = await box.probeAll();
      const status = await box.status();
      const report = {
        ok: !checks.some((c) => c.status === 'fail'),
        checks,
        box: {
          enabled: config.box.enabled,
          configured_backend: config.box.backend,
          selected_backend: status.available ? status.backend.name : null,
          ...(status.connector_error ? { error: status.connector_error } : {}),
          backends: backends.map((b) => ({ ...b, isolating: b.name !== 'host' })),
        },
      };
      if (!report.ok) ctx.exitCode = EXIT.runFailed;
      ctx.output.item(shapes.DoctorReport, report, (r) =>
        [
          ...r.checks.map((c) => `${MARK[c.status]} ${c.name}: ${c.detail}`),
          `box: ${r.box.enabled ? `enabled, backend ${r.box.configured_backend}${r.box.selected_backend ? ` → ${r.box.selected_backend}` : ' → none usable'}` : 'disabled (box.enabled = false)'}`,
          ...r.box.backends.map(
            (b) => `  ${b.available ? 'ok  ' : 'no  '} ${b.name.padEnd(7)} ${b.reason}${b.name === 'host' ? ' (used only with --backend host)' : ''}`,
          ),
        ].join('\n'),
      );
    });
  tolerateBrokenConfig(doctor);
}
