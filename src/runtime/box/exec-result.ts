// A finished command as the exec tool and `lbot box exec --json` return it: tool-output truncation (box.md §7.4).
import type { BackendName, BoxSpec, ToolResult } from '../../core/box/model.js';
import { truncateText } from '../../core/box/truncate.js';
import type { RunOutcome } from './run-process.js';

export function toolResult(outcome: RunOutcome, spec: BoxSpec, backend: BackendName, limit: number): ToolResult {
  const out = outcome.stdout.text(limit);
  let stderrRaw = outcome.stderr.text(limit);
  if (outcome.status === 'timed_out' && outcome.stderr.totalBytes === 0)
    stderrRaw = { text: `Command timed out after ${spec.timeout_sec} seconds.`, truncated: false };
  const err = stderrRaw.truncated ? stderrRaw : truncateText(stderrRaw.text, limit);
  const exitCode = outcome.status === 'timed_out' ? null : outcome.exit_code;
  const status = outcome.status === 'timed_out' ? 'timed_out' : 'completed';
  return {
    session_id: spec.session_id,
    backend,
    status,
    ok: status === 'completed' && exitCode === 0,
    exit_code: exitCode,
    stdout: out.text,
    stderr: err.text,
    stdout_truncated: out.truncated,
    stderr_truncated: err.truncated,
    duration_ms: outcome.duration_ms,
  };
}
