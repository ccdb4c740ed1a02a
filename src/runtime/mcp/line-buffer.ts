// Newline framing with a size cap: splits a byte stream into lines and refuses a line over the cap
// before buffering more, so a server that never sends a newline cannot grow lbot's memory.

export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  constructor(readonly limit: number) {
    super(`the server sent a message line longer than ${limit} bytes; lbot stops reading from it`);
  }
}

export class LineBuffer {
  #chunks: Buffer[] = [];
  #length = 0;

  constructor(readonly maxBytes: number = MAX_LINE_BYTES) {}

  /** Appends a chunk and returns the complete lines it finishes (without the newline, `\r` stripped). */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, nl);
      if (this.#length + piece.length > this.maxBytes) throw this.#overflow();
      const line = this.#chunks.length === 0 ? piece : Buffer.concat([...this.#chunks, piece]);
      this.#chunks = [];
      this.#length = 0;
      lines.push(line.toString('utf8').replace(/\r$/, ''));
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0) {
      if (this.#length + rest.length > this.maxBytes) throw this.#overflow();
      this.#chunks.push(rest);
      this.#length += rest.length;
    }
    return lines;
  }

  clear(): void {
    this.#chunks = [];
    this.#length = 0;
  }

  #overflow(): LineTooLongError {
    this.clear();
    return new LineTooLongError(this.maxBytes);
  }
}
