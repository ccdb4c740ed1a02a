// `lbot config edit`: the config opened in the user's editor on a private copy, installed only when it
// loads, so a slip in the editor never leaves lbot with a config it refuses.
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LbotError } from '../core/errors.js';
import { checkConfigText, configFilePath } from '../core/stores/config-file.js';
import { ensurePrivateDir, writePrivateFile } from '../core/stores/private-files.js';

export type EditOutcome = { file: string; changed: boolean };

/** The editor a person asked for: VISUAL, then EDITOR, then vi. */
export function editorCommand(env: NodeJS.ProcessEnv): string {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || 'vi';
}

export async function editConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<EditOutcome> {
  const file = configFilePath(dataDir);
  ensurePrivateDir(dataDir);
  const draft = path.join(dataDir, `.lbot.config.edit-${process.pid}.json`);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '{}\n';
  writePrivateFile(draft, before);
  // The editor may carry its own arguments (`code --wait`): the shell splits them, the file path stays one word.
  // An ES-only package, imported where it is used: the CLI's bundle is CommonJS (src/cli-loader.ts).
  const { execa } = await import('execa');
  const editor = await execa('sh', ['-c', `${editorCommand(env)} "$1"`, 'lbot-config-edit', draft], { stdio: 'inherit', reject: false, env });
  if (editor.exitCode !== 0) {
    rmSync(draft, { force: true });
    throw new LbotError(
      'invalid_argument',
      `the editor (${editorCommand(env)}) exited with ${editor.exitCode ?? editor.signal ?? 'an error'}; the config is unchanged`,
      {
        hint: 'set VISUAL or EDITOR to the editor to use',
      },
    );
  }
  const after = readFileSync(draft, 'utf8');
  if (after === before) {
    rmSync(draft, { force: true });
    return { file, changed: false };
  }
  try {
    checkConfigText(after, file);
  } catch (err) {
    if (err instanceof LbotError) {
      throw new LbotError(err.code, err.message, { details: { ...err.details, draft }, hint: `the config is unchanged; your edit is kept in ${draft}` });
    }
    throw err;
  }
  renameSync(draft, file);
  return { file, changed: true };
}
