// stdout for protocol lines only: a writer that honours backpressure, and a console that goes to stderr.
import { Console } from 'node:console';

/** Sends console.log/info/debug/… to stderr so a runner's logging cannot corrupt the channel. */
export function redirectConsoleToStderr(): void {
  const stderrConsole = new Console({ stdout: process.stderr, stderr: process.stderr });
  console.log = stderrConsole.log.bind(stderrConsole);
  console.info = stderrConsole.info.bind(stderrConsole);
  console.debug = stderrConsole.debug.bind(stderrConsole);
  console.dir = stderrConsole.dir.bind(stderrConsole);
  console.dirxml = stderrConsole.dirxml.bind(stderrConsole);
  console.table = stderrConsole.table.bind(stderrConsole);
  console.trace = stderrConsole.trace.bind(stderrConsole);
  console.group = stderrConsole.group.bind(stderrConsole);
  console.groupCollapsed = stderrConsole.groupCollapsed.bind(stderrConsole);
  console.groupEnd = stderrConsole.groupEnd.bind(stderrConsole);
  console.count = stderrConsole.count.bind(stderrConsole);
  console.time = stderrConsole.time.bind(stderrConsole);
  console.timeEnd = stderrConsole.timeEnd.bind(stderrConsole);
  console.timeLog = stderrConsole.timeLog.bind(stderrConsole);
}

/** Writes one JSON line per message to `stream`, queueing while the pipe is full. */
export function createLineSender(stream: NodeJS.WritableStream): { send(message: unknown): void; flush(): Promise<void> } {
  const queue: string[] = [];
  let blocked = false;
  const write = stream.write.bind(stream);
  stream.on('drain', () => {
    blocked = false;
    while (queue.length > 0 && !blocked) {
      const line = queue.shift();
      if (line !== undefined && !write(line)) blocked = true;
    }
  });
  return {
    send(message: unknown): void {
      const line = `${JSON.stringify(message)}\n`;
      if (blocked) queue.push(line);
      else if (!write(line)) blocked = true;
    },
    flush(): Promise<void> {
      return new Promise((resolve) => {
        const check = (): void => {
          if (queue.length === 0 && !blocked) write('', () => resolve());
          else stream.once('drain', check);
        };
        check();
      });
    },
  };
}
