import { normalizeText } from './matchers';

/** Numbers written in a text: `$1,234.50`, `-12`, `3.5%` give 1234.5, -12, 3.5. */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?/g)) {
    const n = Number(m[0].replace(/,/g, ''));
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

/** True when `text` states `n` (equal to 2 decimals, the precision of money). */
export function statesNumber(text: string, n: number): boolean {
  return numbersIn(text).some((x) => Math.abs(x - n) < 0.005);
}

/** True when `text` contains `needle`, ignoring case and runs of whitespace. */
export function containsText(text: string, needle: string): boolean {
  return normalizeText(text).includes(normalizeText(needle));
}
