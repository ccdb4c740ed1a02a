// The bearer token of `lbot serve`: LBOT_API_TOKEN, else a random one written to <data-dir>/serve.token (0600).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { ensurePrivateDir, writePrivateFile } from '../../core/stores/private-files.js';

export const TOKEN_FILE_NAME = 'serve.token';

export function resolveServeToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): { token: string; file: string | null } {
  const fromEnv = env.LBOT_API_TOKEN;
  if (fromEnv) return { token: fromEnv, file: null };
  const token = randomBytes(32).toString('base64url');
  ensurePrivateDir(dataDir);
  const file = path.join(dataDir, TOKEN_FILE_NAME);
  // A temp file created 0600 and renamed: an old token file's mode never carries over.
  writePrivateFile(file, `${token}\n`);
  return { token, file };
}

/** Constant-time check of an `Authorization: Bearer <token>` header. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  if (!m?.[1]) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
