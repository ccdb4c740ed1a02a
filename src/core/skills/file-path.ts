// Relative paths inside a skill package, as users and runners type them (skills-mcp-tools.md §0.4).
import path from 'node:path';
import { LbotError } from '../errors.js';

function unsafe(raw: string, reason: string): LbotError {
  return new LbotError('skill.unsafe_path', `${JSON.stringify(raw)} is not a path inside the skill package (${reason})`, {
    details: { path: raw, reason },
    hint: 'give a path relative to the package root, e.g. SKILL.md or scripts/run.sh',
  });
}

function decodeOnce(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Checks a package-relative path and returns it normalised ('/'-separated). Every decoding of it
 * (raw, and URL-decoded up to three times) must be free of NUL bytes, drive letters, a leading `/`
 * and `..` segments, before and after normalisation, so `%2e%2e/x` is refused like `../x`.
 */
export function checkPackageRelPath(raw: string): string {
  let form = raw;
  const forms = [raw];
  for (let i = 0; i < 3; i++) {
    const next = decodeOnce(form);
    if (next === form) break;
    forms.push(next);
    form = next;
  }
  for (const f of forms) {
    const s = f.replace(/\\/g, '/');
    if (s.trim() === '') throw unsafe(raw, 'empty path');
    if (s.includes('\0')) throw unsafe(raw, 'NUL byte');
    if (/^[A-Za-z]:/.test(s)) throw unsafe(raw, 'drive-letter path');
    if (s.startsWith('/')) throw unsafe(raw, 'absolute path');
    if (s.split('/').includes('..')) throw unsafe(raw, '".." segment');
    const normal = path.posix.normalize(s);
    if (normal === '..' || normal.startsWith('../')) throw unsafe(raw, 'leaves the package after normalisation');
  }
  const normal = path.posix.normalize(form.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (normal === '' || normal === '.') throw unsafe(raw, 'names the package root, not a file');
  return normal;
}
