// A line writer for a child's stdin that respects `drain`; the lines are already encoded.
import type { Writable } from 'node:stream';

/** A small line queue that respects `drain`; lines are already encoded. */
export class LineQueue {
  #queue: string[] = [];
  #blocked = false;
  #closed = false;
  constructor(private readonly stream: Writable) {
    stream.on('drain', () => this.#flush());
    stream.on('error', () => {
      this.#closed = true;
      this.#queue = [];
    });
  }
  write(lines: readonly string[]): void {
    if (this.#closed || this.stream.destroyed || this.stream.writableEnded) return;
    for (const line of lines) {
      if (this.#blocked) this.#queue.push(line);
      else if (!this.stream.write(line)) this.#blocked = true;
    }
  }
  end(): void {
    if (this.#closed) return;
    this.#closed = true;
    const rest = this.#queue.join('');
    this.#queue = [];
    if (!this.stream.destroyed && !this.stream.writableEnded) this.stream.end(rest);
  }
  #flush(): void {
    this.#blocked = false;
    while (this.#queue.length > 0 && !this.#blocked) {
      const line = this.#queue.shift();
      if (line !== undefined && !this.stream.write(line)) this.#blocked = true;
    }
  }
}
