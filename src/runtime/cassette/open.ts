// The cassette mode of one `lbot run`: record, replay, or neither (a pass-through with no hooks).
import type { Config } from '../../core/config.js';
import type { LocalHostOptions } from '../local-host.js';
import { createPlayer, readCassette } from './player.js';
import { createRecorder } from './recorder.js';

export type CassetteMode = {
  hooks: Pick<LocalHostOptions, 'decorateModels' | 'decorateTools' | 'observer'> | undefined;
  config(base: Config): Config;
  /** Writes the recording, or checks the replay (throws `replay.mismatch`). */
  finish(opts: { check: boolean }): Promise<void>;
};

export async function openCassette(opts: { record?: string | undefined; replay?: string | undefined }): Promise<CassetteMode> {
  const { record, replay } = opts;
  if (replay) {
    const player = createPlayer(await readCassette(replay));
    return { hooks: player.hooks, config: (c) => player.config(c), finish: async (o) => player.finish(o) };
  }
  if (record) {
    const recorder = createRecorder();
    return {
      hooks: recorder.hooks,
      config(base) {
        recorder.useConfig(base);
        return base;
      },
      finish: async () => {
        await recorder.save(record);
      },
    };
  }
  return { hooks: undefined, config: (c) => c, finish: async () => undefined };
}
