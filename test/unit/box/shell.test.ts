// Shell quoting and argv → command string (box.md §7.1).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { argvToCommand, shQuote } from '../../../src/core/box/shell.js';

describe('shell helpers', () => {
  it('quotes words so the shell sees them verbatim', () => {
    for (const w of ['plain', 'with space', "it's", '$HOME', '`x`', '', 'a"b', '\\n', '*']) {
      expect(execFileSync('/bin/sh', ['-c', `printf %s ${shQuote(w)}`]).toString()).toBe(w);
    }
  });

  it('turns an argv into an exec of the program, builtins run directly', () => {
    expect(argvToCommand(['sh', '-c', 'echo hi; exit 3'])).toBe("exec sh -c 'echo hi; exit 3'");
    expect(argvToCommand(['true'])).toBe('true');
    expect(argvToCommand(['echo', 'a b'])).toBe("echo 'a b'");
  });
});
