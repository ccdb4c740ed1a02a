// The bearer token of `lbot serve`: LBOT_API_TOKEN, else the one in <data-dir>/serve.token (0600), made once
// and kept across restarts so clients and webhook senders keep working; `lbot serve token --rotate` replaces it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, writePrivateFile } from '../../core/stores/private-files.js';

export const TOKEN_FILE_NAME = 'serve.token';

/** What lbot writes: 43 base64url characters (32 random bytes). A file holding anything else is replaced. */
const TOKEN_TEXT = /^[A-Za-z0-9_-]{32,512}$/;

export type ServeToken = { token: string; file: string | null; created: boolean };

export function tokenFile(dataDir: string): string {
  return path.join(dataDir, TOKEN_FILE_NAME);
}

/** The stored token, when the file is a private regular file of ours that holds one. */
function readStored(file: string): string | null {
  try {
    const st = lstatSync(file);
    // A file others could read holds a token that may have leaked: a new one replaces it.
    if (!st.isFile() || (process.getuid && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0) return null;
    const text = readFileSync(file, 'utf8').trim();
    return TOKEN_TEXT.test(text) ? text : null;
  } catch {
    return null;
  }
}

/** Writes a new random token (a temp file created 0600 and renamed: no moment at a wider mode). */
export function rotateServeToken(dataDir: string, fileName = TOKEN_FILE_NAME): ServeToken {
  ensurePrivateDir(dataDir);
  const file = path.join(dataDir, fileName);
  const token = randomBytes(32).toString('base64url');
  writePrivateFile(file, `${token}\n`);
  return { token, file, created: true };
}

/** The token from the environment, else the one stored in `<data-dir>/<fileName>` (made now when there is none). */
export function resolveTokenFile(dataDir: string, fileName: string, fromEnv: string | undefined): ServeToken {
  if (fromEnv) return { token: fromEnv, file: null, created: false };
  const file = path.join(dataDir, fileName);
  const stored = readStored(file);
  return stored !== null ? { token: stored, file, created: false } : rotateServeToken(dataDir, fileName);
}

export function resolveServeToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): ServeToken {
  return resolveTokenFile(dataDir, TOKEN_FILE_NAME, env.LBOT_API_TOKEN);
}

/** Constant-time check of an `Authorization: Bearer <token>` header. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  if (!m?.[1]) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
