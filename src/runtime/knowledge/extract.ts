// Turns one file into sections for the chunker: Markdown, plain text, HTML, JSON and PDF (through unpdf), bounded.
import path from 'node:path';
import { LbotError } from '../../core/errors.js';
import { markdownSections, type Section } from '../../core/knowledge/chunking.js';

export type DocumentType = 'markdown' | 'text' | 'html' | 'json' | 'pdf';

/** A file larger than this is refused (`kb.too_large`) before it is read. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** A PDF with more pages than this is refused (`kb.too_large`). */
export const MAX_PDF_PAGES = 500;

const TYPES: Record<string, DocumentType> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.rst': 'text',
  '.html': 'html',
  '.htm': 'html',
  '.json': 'json',
  '.pdf': 'pdf',
};

/** The document type of a file name, or null when lbot does not index that kind of file. */
export function documentTypeOf(file: string): DocumentType | null {
  return TYPES[path.extname(file).toLowerCase()] ?? null;
}

export const SUPPORTED_EXTENSIONS = Object.keys(TYPES);

export type Extracted = { sections: Section[]; title: string | null; pages?: number };

function textOf(bytes: Uint8Array, file: string): string {
  if (bytes.includes(0)) throw new LbotError('kb.unsupported_file', `${file}: holds NUL bytes, so it is not a text file`);
  return new TextDecoder('utf-8').decode(bytes);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (all, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[name.toLowerCase()] ?? all;
  });
}

/** HTML as Markdown-ish text: headings become `#` lines, blocks become paragraphs, scripts and styles go. */
export function htmlToMarkdown(html: string): { text: string; title: string | null } {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const body = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|noscript|template|head)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(
      /<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi,
      (_, level: string, inner: string) => `\n\n${'#'.repeat(Number(level))} ${inner.replace(/<[^>]*>/g, '').trim()}\n\n`,
    )
    .replace(/<(br|hr)\b[^>]*>/gi, '\n')
    .replace(/<\/(p|div|li|tr|section|article|pre|blockquote|ul|ol|table)\s*>/gi, '\n\n')
    .replace(/<[^>]*>/g, '');
  const text = decodeEntities(body)
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
  return { text, title: title ? decodeEntities(title.replace(/<[^>]*>/g, '')).trim() || null : null };
}

/** JSON as sections: one per top-level key (or array item), each pretty-printed. */
function jsonSections(text: string, file: string): Section[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new LbotError('kb.unreadable', `${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const render = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  if (Array.isArray(value)) return value.map((v, i) => ({ headings: [`[${i}]`], text: render(v) })).filter((s) => s.text.trim());
  if (typeof value === 'object' && value !== null) return Object.entries(value).map(([k, v]) => ({ headings: [k], text: render(v) }));
  return [{ headings: [], text: render(value) }];
}

async function pdfSections(bytes: Uint8Array, file: string): Promise<Extracted> {
  const { getDocumentProxy, extractText } = await import('unpdf');
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given: hand it a copy.
    doc = await getDocumentProxy(new Uint8Array(bytes));
  } catch (err) {
    throw new LbotError('kb.unreadable', `${file}: not a readable PDF (${err instanceof Error ? err.message : String(err)})`);
  }
  try {
    if (doc.numPages > MAX_PDF_PAGES)
      throw new LbotError('kb.too_large', `${file}: ${doc.numPages} pages, over the limit of ${MAX_PDF_PAGES}`, {
        hint: 'split the PDF, or index its chapters',
      });
    const { text } = await extractText(doc, { mergePages: false });
    const sections = text.map((t, i) => ({ headings: [`page ${i + 1}`], text: t.trim() })).filter((s) => s.text);
    return { sections, title: null, pages: doc.numPages };
  } finally {
    await doc.destroy();
  }
}

/** The sections and title of one file's bytes. */
export async function extractDocument(bytes: Uint8Array, file: string, type: DocumentType): Promise<Extracted> {
  if (bytes.length > MAX_FILE_BYTES) throw new LbotError('kb.too_large', `${file}: ${bytes.length} bytes, over the limit of ${MAX_FILE_BYTES}`);
  switch (type) {
    case 'pdf':
      return await pdfSections(bytes, file);
    case 'markdown': {
      const sections = markdownSections(textOf(bytes, file));
      return { sections, title: sections.find((s) => s.headings.length)?.headings[0] ?? null };
    }
    case 'html': {
      const { text, title } = htmlToMarkdown(textOf(bytes, file));
      const sections = markdownSections(text);
      return { sections, title: title ?? sections.find((s) => s.headings.length)?.headings[0] ?? null };
    }
    case 'json':
      return { sections: jsonSections(textOf(bytes, file), file), title: null };
    case 'text': {
      const text = textOf(bytes, file).trim();
      return { sections: text ? [{ headings: [], text }] : [], title: null };
    }
  }
}
