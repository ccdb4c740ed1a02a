// Splits a reply at a platform's message size limit, preferring line and word boundaries.

/** Parts of at most `limit` UTF-16 units (Telegram and Discord count that way); surrogate pairs stay whole. */
export function splitMessage(text: string, limit: number | null): string[] {
  if (limit === null || text.length <= limit) return text === '' ? [] : [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf('\n', limit);
    if (cut < limit / 2) cut = rest.lastIndexOf(' ', limit);
    if (cut < limit / 2) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    parts.push(rest.slice(0, cut));
    // The separator the cut fell on is not repeated at the start of the next part.
    rest = rest.slice(cut).replace(/^[\n ]/, '');
  }
  if (rest !== '') parts.push(rest);
  return parts;
}
