// The environment of every child lbot starts: an allowlist of host variables per kind of child, then
// what lbot and the child's configuration set. Nothing else of the host env is inherited (tokens,
// cloud keys, NODE_OPTIONS stay out); exported shell functions are never passed on.

type Inherited = { names: readonly string[]; fallback?: Readonly<Record<string, string>> };

/** Host variables each kind of child inherits (runner-protocol.md §10.8, skills-mcp-tools.md §10.2). */
export const INHERITED_ENV = {
  /** Runner plugin processes. */
  plugin: { names: ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] },
  /** Host stdio MCP servers. */
  mcp: { names: ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] },
  /** lbot's own helpers (box supervisor, quota watcher, container CLI): PATH only. */
  helper: { names: ['PATH'], fallback: { PATH: '/usr/bin:/bin' } },
} as const satisfies Record<string, Inherited>;

export type ChildKind = keyof typeof INHERITED_ENV;

/** The env of one child: its kind's allowlist taken from `hostEnv`, then `set` on top. */
export function childEnv(kind: ChildKind, set: Readonly<Record<string, string>> = {}, hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const inherited: Inherited = INHERITED_ENV[kind];
  const env: Record<string, string> = { ...inherited.fallback };
  for (const name of inherited.names) {
    const value = hostEnv[name];
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...set };
}
