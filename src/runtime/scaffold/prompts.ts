// The interactive side of `lbot runner init` on a TTY: asks for what the flags did not say.
import { LbotError } from '../../core/errors.js';
import { defaultPluginName, ID_SEGMENT } from './scaffold.js';

export type ScaffoldAnswers = { dir: string; name: string; author: string; label: string };

const segmentError = (value: string | undefined): string | undefined =>
  value && ID_SEGMENT.test(value) ? undefined : 'letters, digits, dots, dashes and underscores, starting with a letter or digit';

async function ask(message: string, initialValue: string, validate?: (v: string | undefined) => string | undefined): Promise<string> {
  const { cancel, isCancel, text } = await import('@clack/prompts');
  const answer = await text({ message, initialValue, ...(validate ? { validate } : {}) });
  if (isCancel(answer)) {
    cancel('nothing was written');
    throw new LbotError('cancelled', 'lbot runner init was cancelled');
  }
  return answer.trim();
}

/** Asks for the directory, plugin name, author and label, with the flags' values as the answers' start. */
export async function promptScaffold(given: {
  dir?: string | undefined;
  name?: string | undefined;
  author?: string | undefined;
  label?: string | undefined;
}): Promise<ScaffoldAnswers> {
  // An ES-only package, imported where it is used: the CLI's bundle is CommonJS (src/cli-loader.ts).
  const { intro, outro } = await import('@clack/prompts');
  intro('lbot runner init');
  const dir = given.dir ?? (await ask('Directory of the new runner plugin', 'my-runner', (v) => (v ? undefined : 'a directory is required')));
  const name = given.name ?? (await ask('Plugin name (the middle part of the runner id)', defaultPluginName(dir), segmentError));
  const author = given.author ?? (await ask('Author (the first part of the runner id)', '', segmentError));
  const label = given.label ?? (await ask('Label shown in runner lists', name));
  outro(`writing plugin:${author}/${name}/default into ${dir}`);
  return { dir, name, author, label };
}
