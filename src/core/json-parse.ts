// JSON parsing that reports line and column, for files a person wrote (events, config, bindings).
import { LbotError, type ErrorCode } from './errors.js';

/** Line and column (1-based) of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Parses JSON or throws an LbotError with `code`, naming the file, line and column. */
export function parseJsonText(text: string, file: string, code: ErrorCode): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err);
    const m = /position (\d+)/.exec(raw);
    const where = m ? lineColumn(text, Number(m[1])) : text.trim() === '' ? { line: 1, column: 1 } : lineColumn(text, text.length);
    const reason = raw.replace(/\s*in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, '');
    throw new LbotError(code, `${file}:${where.line}:${where.column}: invalid JSON: ${text.trim() === '' ? 'the file is empty' : reason}`, {
      details: { file, line: where.line, column: where.column },
    });
  }
}
