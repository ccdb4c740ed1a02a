// The cassette mode of one `lbot run`: record, replay, or neither (a pass-through with no hooks). The player
// and the recorder load only when asked for: most runs use neither.
import type { Config } from '../../core/config.js';
import type { LocalHostOptions } from '../local-host.js';

export type CassetteMode = {
  hooks: Pick<LocalHostOptions, 'decorateModels' | 'decorateTools' | 'observer'> | undefined;
  config(base: Config): Config;
  /** Writes the recording, or checks the replay (throws `replay.mismatch`). */
  finish(opts: { check: boolean }): Promise<void>;
};

export async function openCassette(opts: { record?: string | undefined; replay?: string | undefined }): Promise<CassetteMode> {
  const { record, replay } = opts;
  if (replay) {
    const { createPlayer, readCassette } = await import('./player.js');
    const player = createPlayer(await readCassette(replay));
    return { hooks: player.hooks, config: (c) => player.config(c), finish: async (o) => player.finish(o) };
  }
  if (record) {
    const { createRecorder } = await import('./recorder.js');
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
