// POSIX shell quoting and turning a CLI argv into the command string a box runs (box.md §7.1).

/** Single-quotes a word for a POSIX shell. */
export function shQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Shell builtins for which `exec` would cost an extra program start. */
const BUILTINS = new Set([
  'true',
  'false',
  ':',
  'echo',
  'printf',
  'test',
  '[',
  'pwd',
  'cd',
  'exit',
  'read',
  'set',
  'export',
  'kill',
  'wait',
  'ulimit',
  'umask',
]);

/**
 * The command string for an argv, run exactly like `docker exec` would (no word splitting of the
 * arguments); the shell replaces itself with the program when it is not a builtin.
 */
export function argvToCommand(argv: readonly string[]): string {
  const [first] = argv;
  const quoted = argv.map(shQuote).join(' ');
  return first !== undefined && !BUILTINS.has(first) ? `exec ${quoted}` : quoted;
}
