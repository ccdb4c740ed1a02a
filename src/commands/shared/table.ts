// Plain-text tables for list output: columns padded to their widest cell, two spaces apart.

/** Rows (the first is the header) as aligned lines, with no trailing spaces. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A detail block: each label with a colon, the values aligned in one column. */
export function fields(rows: ReadonlyArray<readonly [string, string]>): string {
  return table(rows.map(([label, value]) => [`${label}:`, value]));
}

/** Every line of `text` indented by two spaces (a block under a heading). */
export function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Epoch seconds as the local date and time a person reads (`2026-12-02 15:04:05`); `-` for none. */
export function localTime(epochS: number | null): string {
  if (epochS === null) return '-';
  const d = new Date(epochS * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** An ISO timestamp in local time like localTime; kept as given when it does not parse. */
export function localIso(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : localTime(ms / 1000);
}

/** How long ago `epochS` was, in the largest whole unit (`just now`, `5m ago`, `3h ago`, `2d ago`). */
export function ago(epochS: number, nowS: number = Date.now() / 1000): string {
  const s = Math.max(0, Math.floor(nowS - epochS));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86_400)}d ago`;
}
