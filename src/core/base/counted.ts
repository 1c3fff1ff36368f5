/** A count with its noun, plural when it is not 1: `1 episode`, `3 episodes`. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A parameter count as people write it: 1.72B, 4.4M (one decimal below a billion, two above). */
export function formatParameters(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  return n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
