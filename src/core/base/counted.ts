/** A count with its noun, plural when it is not 1: `1 episode`, `3 episodes`. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
