// The runner's side of the stdio channel: protocol lines read under the cap, and a console that goes
// to stderr so stdout carries protocol lines only (written by core/protocol's LineWriter).
import { Console } from 'node:console';
import { LineSplitter } from '../core/protocol/index.js';

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

/**
 * Reads the host's protocol lines from `input` under the line cap (core/protocol/lines.ts); `onEnd`
 * runs once at end of input. A line over the cap corrupts the channel: `onOverflow` ends the process.
 */
export function readProtocolLines(
  input: NodeJS.ReadableStream,
  handlers: { onLine(line: string): void; onEnd(): void; onOverflow(maxLineBytes: number): void },
): void {
  const splitter = new LineSplitter({
    onLine: (line) => handlers.onLine(line.toString('utf8')),
    onOverflow: () => handlers.onOverflow(splitter.maxLineBytes),
  });
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    splitter.finish();
    handlers.onEnd();
  };
  input.on('data', (chunk: Buffer | string) => splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  input.on('end', end);
  input.on('close', end);
}
