// Plain-text tables for CLI listings.

/**
 * `text` safe to print to a terminal: control characters (C0, DEL, C1: escape sequences, carriage
 * returns, newlines that would break a table row) are shown as `\xNN` / `\uNNNN` instead of acted on.
 * For human-readable output only: JSON output keeps values as stored.
 */
export function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Columns padded to their widest cell, one row a line; cells are made printable. */
export function table(header: string[], rows: string[][]): string {
  const safe = rows.map((r) => r.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...safe.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...safe.map(line)].join('\n') + '\n';
}
