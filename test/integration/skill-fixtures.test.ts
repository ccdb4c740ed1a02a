// The committed F-SK archives are exactly what fixtures/skills/make-fixtures.mjs builds.
import path from 'node:path';
import { execa } from 'execa';
import { expect, it } from 'vitest';

it('fixtures/skills/*.zip match their generator byte for byte', async () => {
  const script = path.resolve(import.meta.dirname, '../../fixtures/skills/make-fixtures.mjs');
  const r = await execa(process.execPath, [script, '--check'], { reject: false });
  expect(r.exitCode, r.stderr).toBe(0);
});
