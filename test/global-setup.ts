// After the whole suite: no sandbox holder, managed-process supervisor or quota watcher that a test
// started may outlive it. Survivors are listed, killed, and fail the run.
import { readdirSync, readFileSync } from 'node:fs';

/** What marks a process lbot left behind: the keeper's argv, or the env of lbot's detached helpers. */
const ARGV_MARKERS = ['lbot-keeper'];
const ENV_MARKERS = ['LBOT_BOX_SUPERVISOR=', 'LBOT_BOX_QUOTA_WATCH='];

function read(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function lbotProcesses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const stat = read(`/proc/${pid}/stat`);
    if (stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')))) continue;
    const argv = read(`/proc/${pid}/cmdline`).split('\0').join(' ').replace(/\s+/g, ' ').trim();
    const env = read(`/proc/${pid}/environ`).split('\0');
    const isKeeper = ARGV_MARKERS.some((m) => argv.includes(` ${m} `));
    const isHelper = env.some((e) => ENV_MARKERS.some((m) => e.startsWith(m)));
    if (isKeeper || isHelper) out.set(pid, argv.slice(0, 160));
  }
  return out;
}

let before = new Set<number>();

export function setup(): void {
  before = new Set(lbotProcesses().keys());
}

export async function teardown(): Promise<void> {
  if (process.platform !== 'linux') return;
  // Several suites running on one machine at once would count each other's processes as strays.
  if (process.env['LBOT_TEST_SKIP_STRAY_CHECK'] === '1') return;
  const deadline = Date.now() + 15_000;
  let left = new Map<number, string>();
  do {
    left = new Map([...lbotProcesses()].filter(([pid]) => !before.has(pid)));
    if (left.size === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  } while (Date.now() < deadline);
  for (const pid of left.keys()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  // vitest reports a throwing teardown but still exits 0: set the exit code as well.
  process.exitCode = 1;
  throw new Error(`the test suite left ${left.size} lbot process(es) running:\n${[...left].map(([pid, argv]) => `  ${pid} ${argv}`).join('\n')}`);
}
