// `lbot doctor`: what works on this machine — Node, the data dir, and which box backends can run sandboxes.
import type { Command } from 'commander';
import { accessSync, constants, mkdirSync } from 'node:fs';
import type { GetContext } from './shared/context.js';

type Check = { name: string; ok: boolean; detail: string };

export function registerDoctor(program: Command, getCtx: GetContext): void {
  program
    .command('doctor')
    .description('check this machine: Node version, data dir, box backends (bwrap, docker, podman, host)')
    .action(async () => {
      const ctx = getCtx();
      const checks: Check[] = [];
      const major = Number(process.versions.node.split('.')[0]);
      checks.push({ name: 'node', ok: major >= 20, detail: `Node ${process.versions.node}${major >= 20 ? '' : ' (lbot needs ≥ 20.12)'}` });
      try {
        mkdirSync(ctx.flags.dataDir, { recursive: true });
        accessSync(ctx.flags.dataDir, constants.W_OK);
        checks.push({ name: 'data_dir', ok: true, detail: `${ctx.flags.dataDir} is writable` });
      } catch (err) {
        checks.push({ name: 'data_dir', ok: false, detail: `${ctx.flags.dataDir}: ${err instanceof Error ? err.message : String(err)}` });
      }
      const config = ctx.configFile().config.box;
      const { createBoxService } = await import('../runtime/box/service.js');
      const box = createBoxService({ dataDir: ctx.flags.dataDir, config });
      const backends = await box.probeAll();
      const status = await box.status();
      const report = {
        checks,
        box: {
          enabled: config.enabled,
          configured_backend: config.backend,
          selected_backend: status.available ? status.backend.name : null,
          ...(status.connector_error ? { error: status.connector_error } : {}),
          backends: backends.map((b) => ({ ...b, isolating: b.name !== 'host' })),
        },
      };
      ctx.output.result(report, (r) =>
        [
          ...r.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`),
          `box: ${r.box.enabled ? `enabled, backend ${r.box.configured_backend}${r.box.selected_backend ? ` → ${r.box.selected_backend}` : ' → none usable'}` : 'disabled (box.enabled = false)'}`,
          ...r.box.backends.map(
            (b) => `  ${b.available ? 'ok  ' : 'no  '} ${b.name.padEnd(7)} ${b.reason}${b.name === 'host' ? ' (used only with --backend host)' : ''}`,
          ),
        ].join('\n'),
      );
    });
}
