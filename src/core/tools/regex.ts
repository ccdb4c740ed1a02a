// The grep tool's regex dialect: JavaScript RegExp (u flag) with the common Python spellings translated.
import { ToolError } from './paths.js';

/** Translates `(?P<n>…)`, `(?P=n)` and a leading `(?i)`; returns the source and flags, or throws ToolError. */
export function translatePattern(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = 'u';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags += 'i';
  }
  source = source.replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>').replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, '\\k<$1>');
  if (/\(\?[a-zA-Z]+\)/.test(source))
    throw new ToolError('Invalid regex: inline flag groups other than a leading (?i) are not supported (JavaScript regular expression syntax).');
  try {
    new RegExp(source, flags);
  } catch (err) {
    throw new ToolError(`Invalid regex: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { source, flags };
}
