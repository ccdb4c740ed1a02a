// The package digest recorded in skills.lock.json: sha256 over sorted relative paths, modes and contents.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readlink } from 'node:fs/promises';
import path from 'node:path';
import { normalisedMode, walkTree } from './tree.js';

async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * Digest of a package tree. Each entry contributes `<kind> <mode> <path>\0` and, for files, the sha256
 * of its bytes (for links, the link target). Modes are normalised (0755/0644) so umask and the source
 * system do not change the digest; the executable bit does.
 */
export async function treeDigest(root: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update('lbot-skill-tree-v1\0');
  for (const entry of await walkTree(root)) {
    const full = path.join(root, ...entry.rel.split('/'));
    const mode = entry.kind === 'file' || entry.kind === 'dir' ? normalisedMode(entry) : entry.mode;
    hash.update(`${entry.kind} ${mode.toString(8)} ${entry.rel}\0`);
    if (entry.kind === 'file') hash.update(`${await fileSha256(full)}\0`);
    else if (entry.kind === 'symlink') hash.update(`${await readlink(full)}\0`);
  }
  return hash.digest('hex');
}
