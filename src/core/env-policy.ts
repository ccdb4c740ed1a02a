// The one policy for environment variables that a caller (a model, a runner, an HTTP body, a config
// file) may hand to a process: names must be shell identifiers, and variables that make a loader,
// an interpreter or a shell run code of the caller's choosing are refused.
import { LbotError } from './errors.js';

export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Exact names that change what a loader, interpreter or shell executes or loads. */
const DENIED_NAMES = new Set([
  'GCONV_PATH',
  'GETCONF_DIR',
  'HOSTALIASES',
  'LOCALDOMAIN',
  'LOCPATH',
  'NLSPATH',
  'RES_OPTIONS',
  'RESOLV_HOST_CONF',
  'TMPDIR_EXEC',
  'GLIBC_TUNABLES',
  'MALLOC_CHECK_',
  'MALLOC_TRACE',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'IFS',
  'CDPATH',
  'PERL5LIB',
  'PERL5OPT',
  'PERLLIB',
  'PERL5DB',
  'RUBYLIB',
  'RUBYOPT',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'GIT_EXEC_PATH',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_TEMPLATE_DIR',
  'LUA_INIT',
  'LUA_PATH',
  'LUA_CPATH',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'TCLLIBPATH',
]);

/** Prefixes of variable families that are all loader or interpreter switches. */
const DENIED_PREFIXES = ['LD_', 'DYLD_', 'NODE_', 'PYTHON', 'BUN_', 'DENO_', 'MALLOC_', 'LUA_INIT_', 'GIT_CONFIG_'];

/** Variables lbot sets itself inside a sandbox; a caller may not set these either. */
const ALLOWED_EXCEPTIONS = new Set(['PYTHONUNBUFFERED', 'PYTHONDONTWRITEBYTECODE', 'PYTHONIOENCODING', 'NODE_ENV', 'NODE_NO_WARNINGS']);

/** Why one variable name is refused, or null when it may be passed on. */
export function envNameRefusal(name: string): string | null {
  if (!ENV_NAME_PATTERN.test(name)) return 'not a shell identifier';
  if (ALLOWED_EXCEPTIONS.has(name)) return null;
  const upper = name.toUpperCase();
  if (DENIED_NAMES.has(upper)) return 'it changes what a loader, interpreter or shell runs';
  if (DENIED_PREFIXES.some((p) => upper.startsWith(p))) return 'it changes what a loader or interpreter runs';
  return null;
}

/** The refused names of an env map with their reasons, in input order. */
export function refusedEnv(env: Readonly<Record<string, string>>): { name: string; reason: string }[] {
  const out: { name: string; reason: string }[] = [];
  for (const name of Object.keys(env)) {
    const reason = envNameRefusal(name);
    if (reason) out.push({ name, reason });
  }
  return out;
}

/** Throws `env.denied` naming every refused variable; `where` says which input carried them. */
export function assertSafeEnv(env: Readonly<Record<string, string>>, where: string): void {
  const refused = refusedEnv(env);
  if (refused.length === 0) return;
  const names = refused.map((r) => r.name);
  const first = refused[0];
  throw new LbotError('env.denied', `${where}: environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')} refused (${first?.reason ?? 'denied'})`, {
    details: { variables: names, where },
    hint: 'loader and interpreter variables (LD_*, NODE_OPTIONS, PYTHON*, BASH_ENV, …) are never passed to processes; see docs/box.md',
  });
}
