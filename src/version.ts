// The package version, read once from package.json next to dist/ or src/.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  const raw: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  if (raw && typeof raw === 'object' && 'version' in raw && typeof raw.version === 'string') return raw.version;
  return '0.0.0';
}

export const LBOT_VERSION = readVersion();
