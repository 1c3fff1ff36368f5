import pc from 'picocolors';

/** A plain text table: columns padded to their widest cell, numbers right-aligned. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,%]+$|^-$/.test(r[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A score in [0, 1] as a fixed two-decimal number, or `-` when absent. */
export function score(x: number | null | undefined): string {
  return x === null || x === undefined ? '-' : x.toFixed(2);
}

/** A share as a percentage, or `-` when the denominator is zero. */
export function percent(n: number, of: number): string {
  return of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`;
}

/** The colours the CLI uses; plain text when colour is off (NO_COLOR, --no-color, not a TTY). */
export interface Palette {
  added: (s: string) => string;
  removed: (s: string) => string;
  changed: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
  error: (s: string) => string;
}

/** A palette, coloured or plain. */
export function palette(enabled: boolean): Palette {
  const c = pc.createColors(enabled);
  return {
    added: c.green,
    removed: c.red,
    changed: c.yellow,
    dim: c.dim,
    bold: c.bold,
    error: c.red,
  };
}
