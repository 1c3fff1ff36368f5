import { styleMark, terminalText } from '../base/terminalText';

/** A plain text table: columns padded to their widest cell, numbers right-aligned. */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  // Widths as the terminal shows a cell: a control in a tool name takes four columns (`\x1b`), not one.
  const width = (cell: string) => terminalText(cell, { color: false }).length;
  const widths = header.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const numeric = header.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,%]+$|^-$/.test(r[i] ?? '')),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => {
        const pad = ' '.repeat(Math.max(0, widths[i] - width(c)));
        return numeric[i] ? pad + c : c + pad;
      })
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

/**
 * A style from SGR codes: `open`, the text, `close`; a `close` inside (a nested style ending) opens
 * this style again, as picocolors does. The codes are style marks that the terminal text function
 * turns into colour, so nothing in a palette's output is an escape sequence of its own.
 */
function style(open: string, close: string): (s: string) => string {
  const on = styleMark(open);
  const off = styleMark(close);
  return (s) => on + s.split(off).join(off + on) + off;
}

/** A palette, coloured or plain. */
export function palette(enabled: boolean): Palette {
  if (!enabled) {
    const plain = (s: string) => s;
    return { added: plain, removed: plain, changed: plain, dim: plain, bold: plain, error: plain };
  }
  return {
    added: style('32', '39'),
    removed: style('31', '39'),
    changed: style('33', '39'),
    dim: style('2', '22'),
    bold: style('1', '22'),
    error: style('31', '39'),
  };
}
