// Glob patterns for the glob/grep tools: `**`, `*`, `?`, `[...]`, `{a,b}`; matched at any depth like `**/pattern`.

function escape(c: string): string {
  return /[.+^$()|\\/]/.test(c) ? `\\${c}` : c;
}

/** Regex source for a glob matched against a relative path (`a/b/c.txt`), anchored. */
export function globToRegexSource(glob: string): string {
  let out = '';
  let i = 0;
  let braces = 0;
  while (i < glob.length) {
    const c = glob[i] ?? '';
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        out += slash ? '(?:.*/)?' : '.*';
        i += slash ? 3 : 2;
        continue;
      }
      out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) out += '\\[';
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else out += escape(c);
    i++;
  }
  return out;
}

/** Anchored regex source matching the glob at any depth (the reference's implicit `**` prefix). */
export function globMatcherSource(glob: string): string {
  const body = globToRegexSource(glob.replace(/^\/+/, ''));
  return `^(?:.*/)?(?:${body})$`;
}
