// Skills in real runs: a bound skill is mounted read-only in the run's box session, `exec` may use it only
// after `activate`, and `activate` refuses skills the binding did not bind (AC-139 – AC-141 end to end).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { boxBackend } from '../../helpers/box.js';
import { REPO_ROOT } from '../../helpers/plugins.js';
import { api, done, reports, scenario, SCRIPTED } from './harness.js';
import { withReason } from '../../helpers/skip.js';

const box = boxBackend();
if (!box.usable) console.warn(`skills-in-runs tests skipped: ${box.reason}`);

const exec = (command: string) => api('tools.call', { tool_name: 'exec', parameters: { command } });

describe.skipIf(!box.usable)(withReason('skills in runs', !box.usable && box.reason), () => {
  it('mounts bound skills read-only, runs them only once activated, and refuses unbound ones', async () => {
    const s = await scenario();
    const install = await s.lbot(['skill', 'install', path.join(REPO_ROOT, 'fixtures', 'skills', 'hello-skill.zip')]);
    expect(install.exitCode, install.stderr).toBe(0);
    const binding = await s.writeJson('binding.json', {
      binding_id: 'b-skills',
      runner_id: SCRIPTED,
      skills: ['hello-skill'],
      resource_policy: { allowed_tool_names: ['exec', 'activate'] },
    });
    const script = [
      exec('sh /workspace/.skills/hello-skill/run.sh'),
      api('tools.call', { tool_name: 'activate', parameters: { skill_name: 'hello-skill' } }),
      exec('sh /workspace/.skills/hello-skill/run.sh'),
      exec('touch /workspace/.skills/hello-skill/x 2>&1; echo status=$?'),
      api('tools.call', { tool_name: 'activate', parameters: { skill_name: 'not-bound' } }),
      done(),
    ];
    const r = await s.run(script, { json: true, args: ['--binding', binding] });
    expect(r.exitCode, r.stderr).toBe(0);
    const [before, activated, after, write, unbound] = reports(r.stdout);
    expect(before).toMatchObject({ ok: false, error: { code: 'runtime_error' } });
    expect(JSON.stringify(before)).toMatch(/activate/);
    expect(activated).toMatchObject({ ok: true, result: { result: { activated: true, skill_name: 'hello-skill' } } });
    expect(after).toMatchObject({ ok: true, result: { result: { exit_code: 0, stdout: 'hello from hello-skill\n' } } });
    expect(JSON.stringify(write)).toMatch(/Read-only file system|status=1/);
    expect(unbound).toMatchObject({ ok: false, error: { code: 'runtime_error' } });
    expect(JSON.stringify(unbound)).toContain('not-bound');
    await s.lbot(['box', 'rm', 'conversation_c1']);
  });
});
