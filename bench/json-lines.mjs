// Newline-delimited JSON for the benches' helper processes: one parsed message per non-empty line.

/** Calls `onMessage` with each JSON line read from `stream` (blank lines are skipped). */
export function readJsonLines(stream, onMessage) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let end;
    while ((end = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, end);
      buf = buf.slice(end + 1);
      if (line.trim()) onMessage(JSON.parse(line));
    }
  });
}
