// The docker/podman backend against a real engine; skipped with the reason when no engine answers
// (box.md §6.3; acceptance AC-112 label check).
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../src/core/config.js';
import { ContainerBackend } from '../../../src/runtime/box/container.js';
import { probeCommand } from '../../../src/runtime/box/host-tools.js';
import { createBoxService } from '../../../src/runtime/box/service.js';
import { withReason } from '../../helpers/skip.js';

const engines = await Promise.all(
  (['docker', 'podman'] as const).map(async (name) => ({ name, probe: await new ContainerBackend(name, os.tmpdir(), os.tmpdir(), 'probe', null).probe() })),
);
for (const e of engines) if (!e.probe.available) console.warn(`skipping ${e.name} backend tests: ${e.probe.reason}`);
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe.each(engines)('$name backend', ({ name, probe }) => {
  it.skipIf(!probe.available)(
    withReason('runs a labelled container per session and removes it with the session', !probe.available && probe.reason),
    async () => {
      const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), `lbot-${name}-it-`)));
      roots.push(root);
      const config = ConfigSchema.parse({ box: { backend: name, workspace_quota_mb: 0, image: 'busybox:latest' } }).box;
      const box = createBoxService({ dataDir: path.join(root, 'data'), config });
      try {
        const { result } = await box.exec({ session_id: 'c1', cmd: 'echo hi; id -u' });
        expect(result).toMatchObject({ status: 'completed', exit_code: 0, backend: name });
        expect(result.stdout.split('\n')[0]).toBe('hi');
        const [session] = await box.sessions();
        const inspect = await probeCommand([name, 'inspect', '-f', '{{index .Config.Labels "lbot.session_id"}}', session?.backend_session_id ?? ''], 10_000);
        expect(inspect.output.trim()).toBe('c1');
        await box.removeSession('c1');
        const after = await probeCommand([name, 'ps', '-a', '--filter', 'label=lbot.session_id=c1', '--format', '{{.Names}}'], 10_000);
        expect(after.output.trim()).toBe('');
      } finally {
        for (const s of await box.sessions()) await box.removeSession(s.session_id).catch(() => undefined);
      }
    },
    180_000,
  );
});
