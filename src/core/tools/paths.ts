// Virtual workspace paths for the file tools: one normaliser, one containment rule (skills-mcp-tools.md §0.4).
import path from 'node:path';

export const WORKSPACE = '/workspace';

/** A tool error whose message the model sees (the host reports it as a tool failure, not a crash). */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** True only for `/workspace` itself or paths under `/workspace/` (never `/workspace2`). */
export function isUnderWorkspace(p: string, root = WORKSPACE): boolean {
  return p === root || p.startsWith(`${root}/`);
}

/**
 * Normalises a path given to a file tool: blank → the workspace, relative → under the workspace,
 * `..` resolved lexically; the result must stay inside the workspace.
 */
export function resolveWorkspacePath(raw: unknown, root = WORKSPACE): string {
  const p = typeof raw === 'string' ? raw.trim() : '';
  if (p.includes('\0')) throw new ToolError('Path must not contain NUL bytes.');
  const abs = p === '' ? root : path.posix.normalize(p.startsWith('/') ? p : `${root}/${p}`);
  const clean = abs.length > 1 && abs.endsWith('/') ? abs.slice(0, -1) : abs;
  if (!isUnderWorkspace(clean, root)) throw new ToolError(`Path ${p || '(empty)'} is outside the workspace: file tools only reach ${root} and below.`);
  return clean;
}
