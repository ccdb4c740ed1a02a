// A line diff (longest common subsequence) printed as `- cassette` / `+ now` lines with a little context.

export type DiffOptions = { context?: number; labels?: { before: string; after: string } };

/** Lines of a readable diff; empty when the texts are equal. */
export function lineDiff(before: string, after: string, opts: DiffOptions = {}): string[] {
  if (before === after) return [];
  const a = before.split('\n');
  const b = after.split('\n');
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: common lines of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i];
    const below = lcs[i + 1];
    if (!row || !below) continue;
    for (let j = m - 1; j >= 0; j--) row[j] = a[i] === b[j] ? (below[j + 1] ?? 0) + 1 : Math.max(below[j] ?? 0, row[j + 1] ?? 0);
  }
  const ops: Array<{ op: ' ' | '-' | '+'; line: string }> = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ op: ' ', line: a[i] ?? '' });
      i++;
      j++;
    } else if (i < n && (j >= m || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      ops.push({ op: '-', line: a[i] ?? '' });
      i++;
    } else {
      ops.push({ op: '+', line: b[j] ?? '' });
      j++;
    }
  }
  const context = opts.context ?? 3;
  const keep = ops.map((o, k) => o.op !== ' ' || ops.slice(Math.max(0, k - context), k + context + 1).some((x) => x.op !== ' '));
  const labels = opts.labels ?? { before: 'cassette', after: 'now' };
  const out = [`--- ${labels.before}`, `+++ ${labels.after}`];
  let skipped = false;
  ops.forEach((o, k) => {
    if (!keep[k]) {
      if (!skipped) out.push('  …');
      skipped = true;
      return;
    }
    skipped = false;
    out.push(`${o.op} ${o.line}`);
  });
  return out;
}
